"""A local, Perspective-compatible endpoint backed by a toxlib scorer: ``toxlib serve`` (``python -m toxlib serve``).

An emulation, not Perspective: the scores are the toxlib scorer's (default the calibrated distilled scorer, whose
fidelity to Perspective is measured on held-out RealToxicityPrompts texts in ``training.json`` and the scorers
chapter). It speaks Perspective's v1alpha1 wire format (``toxlib.scorers.serve_wire``) so that code written for the
API (the papers' scripts, HELM, lm-evaluation-harness, toxlib's own ``perspective`` scorer) runs unchanged against
it once pointed at it.

    POST /v1alpha1/comments:analyze   Perspective's analyze (request, answer and errors: ``serve_wire``)
    POST /batch                        Google's batch format, up to ``max_batch`` analyze requests, scored together
    GET  /$discovery/rest?version=v1alpha1, GET /discovery/v1/apis/commentanalyzer/v1alpha1/rest
                                       the discovery document for ``googleapiclient.discovery.build``, with the
                                       information below under ``toxlib``
    GET  /info                         the served scorer, its agreement with Perspective per attribute, what differs
                                       (``serve_info``)
    GET  /healthz                      {"status": "ok", "servedScorer", "waiting", "maxWaiting", "workers",
                                        "workerProcesses", "busy", "queuedTexts", "queuedRequests"}: the scorer is
                                        loaded; how many requests wait, how many workers score, how full the queue is

Beyond Perspective's own errors: 403 PERMISSION_DENIED when API keys are listed and a request carries none of them
(``serve_access``; the discovery document, ``/info`` and ``/healthz`` need no key); 413 for a body over ``max_body``
bytes (a batch may be ``max_batch`` times larger), before or after gzip decoding, 415 for a Content-Encoding other
than gzip, or given twice (``serve_body``); 429 RESOURCE_EXHAUSTED with ``Retry-After`` when ``max_waiting``
requests already wait to be scored; 404 NOT_FOUND for any other path.

Nothing a client sends holds the others up. An analyze request without a listed key is refused from its query and
headers, before its body is read. A batch without one at its own level must show a listed key in its first part's
request line (Google's client keys each part), and is refused as soon as that line arrives without one; its parts
are counted as they arrive, and it is refused at the first part past ``max_batch`` (``serve_batch.PartScanner``).
Inflating a gzip body, splitting a batch, parsing JSON and scoring all run off the event loop (worker threads, and
the scoring worker processes), so ``/healthz`` and other clients' requests are answered meanwhile. Every response
carries ``X-Toxlib-Scorer: <scorer name>@<version>``, so a client can key its cache by the model that answers, not
only by the address. Scores go through the scorer's cache as any toxlib scoring does.

Scoring runs in ``workers`` processes (``serve``'s default: one per usable core), or in one thread of this process
(``make_app``'s default, ``workers=0``), through ``toxlib.scorers.serve_pool``: with ``coalesce`` (the default) the
texts of concurrent requests are pooled by token count, and each forward pass takes one count's texts from every
request that waits; without it each request is one call of its own. No request waits for company, and a text's score
does not depend on the texts beside it (``python -m toxlib bench serve`` measures what this gains). SIGTERM (and
Ctrl-C) stops taking connections, answers the requests in flight, then stops the workers. Connections that have not
sent a whole request are cut when silent or too slow, and bounded per client address, by
``toxlib.scorers.serve_guard``. Built on Starlette (routing, requests) and uvicorn (HTTP).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import socket
import sys

from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toxlib.common.errors import ToxlibError
from toxlib.models.device import cpu_threads
from toxlib.scorers import get_scorer
from toxlib.scorers.perspective import SCORER_HEADER
from toxlib.scorers.serve_access import (
    MISSING_KEY,
    TEXTS_SCOPE_KEY,
    TIMING_SCOPE_KEY,
    KeyCheck,
    request_key,
    with_access_log,
)
from toxlib.scorers.serve_batch import PartScanner, batch_response, split_batch
from toxlib.scorers.serve_body import BadRequest, read_body
from toxlib.scorers.serve_guard import MIN_RATE, guarded_protocol
from toxlib.scorers.serve_info import about
from toxlib.scorers.serve_pool import ScoringPool
from toxlib.scorers.serve_wire import (
    ANALYZE_PATH,
    MAX_TEXT_BYTES,
    analyze_response,
    discovery_document,
    error_body,
    parse_request,
    perspective_error,
)

log = logging.getLogger(__name__)

#: hosts that reach only this machine: serving on any other needs allow_remote and API keys
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

__all__ = ["ANALYZE_PATH", "MAX_TEXT_BYTES", "BadRequest", "ServeConfigError", "make_app", "parse_request", "serve"]


class ServeConfigError(ToxlibError):
    """``serve`` was asked for something unsafe or impossible (a remote host without keys, a port in use)."""


def make_app(scorer, max_body: int = 65536, max_waiting: int = 64, cache: bool = True, max_batch: int = 100,
             api_keys: frozenset[str] = frozenset(), coalesce: bool = True, log_write=None,
             pool: ScoringPool | None = None):
    """The ASGI app serving ``scorer`` (a toxlib ``Scorer``); routes and answers as in the module docstring.

    max_body: largest analyze body in bytes (413 beyond it; a batch may be ``max_batch`` times larger);
    max_waiting: requests allowed to wait for the scorer before new ones get 429; cache: use the score cache (as
    ``Scorer.score``); api_keys: the keys a request must carry one of (none: no key needed); coalesce: pool the
    texts of concurrent requests by token count (``serve_pool``); log_write: a function given one JSON access-log
    line per request (``serve_access.with_access_log``), or None for no log; pool: a started ``ScoringPool`` of
    ``scorer`` (worker processes; ``serve`` makes one), else scoring runs in a thread of this process (cache and
    coalesce then apply). ValueError when a bound is below 1."""
    if min(max_body, max_waiting, max_batch) < 1:
        raise ValueError(f"max_body ({max_body}), max_waiting ({max_waiting}) and max_batch ({max_batch}) must be >= 1")
    supported = tuple(a.upper() for a in scorer.attributes)
    served = f"{scorer.name}@{scorer.version}"
    information = about(scorer, max_body=max_body, max_batch=max_batch, max_waiting=max_waiting)
    keys = KeyCheck(api_keys)
    pool = pool or ScoringPool(scorer, workers=0, cache=cache, coalesce=coalesce)
    waiting = {"n": 0}

    def parse_all(bodies: list[bytes]) -> tuple[list, list[str], list]:
        """(each body's parsed request or its BadRequest, the texts to score, their batch keys): one worker-thread
        call per request."""
        parsed = []
        for body in bodies:
            try:
                parsed.append(parse_request(body, supported))
            except BadRequest as exc:
                parsed.append(exc)
            except Exception as exc:  # whatever else a hostile body triggers is that body's fault, not a 500
                parsed.append(BadRequest(f"Invalid request ({type(exc).__name__})."))
        texts = [p[0] for p in parsed if not isinstance(p, BadRequest)]
        return parsed, texts, pool.keys(texts)

    async def answer(request: Request, bodies: list[bytes]) -> list[tuple[int, dict]]:
        """(status, JSON body) for each analyze request body, the valid ones scored together."""
        parsed, texts, batch_keys = await to_thread.run_sync(parse_all, bodies)
        if texts and waiting["n"] >= max_waiting:
            raise BadRequest(f"Too many requests waiting ({max_waiting}); retry later.", code=429)
        scored = []
        if texts:
            waiting["n"] += 1
            try:
                scored, timing = await pool.score(texts, batch_keys)
                request.scope[TEXTS_SCOPE_KEY] = len(texts)
                request.scope[TIMING_SCOPE_KEY] = timing
            except Exception as exc:  # a scorer fault: each request gets a 500 in Google's shape, the log the trace
                log.error("the scorer failed on %d text(s)", len(texts), exc_info=exc)
                scored = [({}, f"{type(exc).__name__}: {exc}")] * len(texts)
            finally:
                waiting["n"] -= 1
        out, results = [], iter(scored)
        for item in parsed:
            if isinstance(item, BadRequest):
                out.append(error_body(item.code, str(item), item.error_type))
                continue
            text, thresholds, languages, token = item
            scores, error = next(results)
            if error is not None or any(math.isnan(v) for v in scores.values()):
                out.append(error_body(500, f"The local scorer could not score this comment: {error}"))
                continue
            wanted = {name: scores[name] for name in thresholds}
            out.append((200, analyze_response(text, wanted, thresholds, languages, token)))
        return out

    async def analyze(request: Request) -> JSONResponse:
        try:
            if not keys.allowed(request_key(request.scope)):  # before a byte of the body is read
                raise BadRequest(MISSING_KEY, code=403)
            [(status, payload)] = await answer(request, [await read_body(request, max_body)])
        except BadRequest as exc:
            return perspective_error(exc.code, str(exc), exc.error_type)
        return JSONResponse(payload, status_code=status)

    async def batch(request: Request) -> Response:
        outer_key_ok = keys.allowed(request_key(request.scope))

        def routed(method, path, key):  # a part to score: an analyze request with a listed key (its own or the batch's)
            return (method, path) == ("POST", ANALYZE_PATH) and (outer_key_ok or keys.allowed(key))

        content_type = request.headers.get("content-type", "")
        try:
            if not content_type.startswith("multipart/mixed"):
                raise BadRequest("A batch request must be multipart/mixed (Google API batch format).")
            scanner = PartScanner(max_batch, None if outer_key_ok else keys.allowed, MISSING_KEY)
            body = await read_body(request, max_body * max_batch, watch=scanner)
            parts = await to_thread.run_sync(split_batch, content_type, body, max_batch)
            answers = iter(await answer(request, [b for _, method, path, key, b in parts if routed(method, path, key)]))
        except BadRequest as exc:
            return perspective_error(exc.code, str(exc), exc.error_type)
        out = []
        for cid, method, path, key, part_body in parts:
            if routed(method, path, key):
                out.append((cid, *next(answers)))
            elif not method:
                out.append((cid, *error_body(400, part_body.decode())))
            elif (method, path) == ("POST", ANALYZE_PATH):
                out.append((cid, *error_body(403, MISSING_KEY)))
            else:
                message = f"Not found: {method} {path} (batch parts must POST {ANALYZE_PATH})"
                out.append((cid, *error_body(404, message)))
        return batch_response(out)

    async def discovery(request: Request) -> JSONResponse:
        return JSONResponse(discovery_document(str(request.base_url), information))

    async def info(request: Request) -> JSONResponse:
        return JSONResponse(information)

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "servedScorer": served, "waiting": waiting["n"],
                             "maxWaiting": max_waiting, **pool.status()})

    async def not_found(request: Request, exc) -> JSONResponse:
        return perspective_error(404, f"Not found: {request.url.path} (this server answers POST {ANALYZE_PATH})")

    async def not_allowed(request: Request, exc) -> JSONResponse:
        return perspective_error(405, f"Method {request.method} not allowed: use POST {ANALYZE_PATH}")

    routes = [Route(ANALYZE_PATH, analyze, methods=["POST"]), Route("/batch", batch, methods=["POST"]),
              Route("/$discovery/rest", discovery, methods=["GET"]),
              Route("/discovery/v1/apis/commentanalyzer/v1alpha1/rest", discovery, methods=["GET"]),
              Route("/info", info, methods=["GET"]), Route("/healthz", healthz, methods=["GET"])]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        await to_thread.run_sync(pool.close)  # after the requests in flight are answered (uvicorn's shutdown)

    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed}, lifespan=lifespan)
    app = naming_the_scorer(app, served)
    return with_access_log(app, log_write) if log_write else app


def naming_the_scorer(app, served: str):
    """``app`` (ASGI) with ``SCORER_HEADER: served`` on every HTTP response it sends."""
    header = (SCORER_HEADER.lower().encode(), served.encode("latin-1", "replace"))

    async def wrapped(scope, receive, send):
        async def send_with_header(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), header]}
            await send(message)

        await app(scope, receive, send_with_header if scope["type"] == "http" else send)

    return wrapped


def check_exposure(host: str, allow_remote: bool, api_keys: frozenset[str]) -> None:
    """ServeConfigError unless ``host`` reaches only this machine, or remote serving is asked for explicitly
    (``allow_remote``) and keys are listed."""
    if host in LOCAL_HOSTS:
        return
    if not allow_remote:
        raise ServeConfigError(f"--host {host} lets other machines reach the server; add --allow-remote to mean it, "
                               "with --api-keys FILE, or keep the default --host 127.0.0.1")
    if not api_keys:
        raise ServeConfigError(f"--host {host} with --allow-remote needs API keys: give --api-keys FILE (one key per "
                               "line) or set TOXLIB_SERVE_API_KEYS=key1,key2")


def check_port_free(host: str, port: int) -> None:
    """ServeConfigError naming the fix when ``host:port`` cannot be listened on (in use, or an address this machine
    does not have), found before the scorer loads; the bind is tried as uvicorn tries it (SO_REUSEADDR)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeConfigError(f"--host {host} is not an address of this machine ({exc.strerror}); give one such as "
                               "127.0.0.1") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            fix = {errno.EADDRINUSE: "choose another --port, or stop the program that holds it",
                   errno.EADDRNOTAVAIL: "give a --host address this machine has, such as 127.0.0.1",
                   errno.EACCES: "choose a --port from 1024 up (lower ones need privileges)"}
            raise ServeConfigError(f"cannot listen on {host} port {port}: {exc.strerror}; "
                                   f"{fix.get(exc.errno, 'choose another --host or --port')}") from None


def stderr_line(line: str) -> None:
    """Write one access-log line to standard error."""
    print(line, file=sys.stderr, flush=True)


def serve(host: str = "127.0.0.1", port: int = 8080, scorer="distilled", max_body: int = 65536,
          max_waiting: int = 64, max_connections: int = 512, max_per_client: int = 32,
          request_timeout: float = 5.0, min_upload_rate: float = MIN_RATE, cache: bool = True,
          allow_remote: bool = False, api_keys: frozenset[str] = frozenset(), access_log: bool = True,
          coalesce: bool = True, workers: int | None = None, threads: int | None = None) -> None:
    """Start ``workers`` scoring processes (None: one per usable core; 0: score in a thread of this process), each
    loading ``scorer`` (a name, or a picklable ``Scorer``) and scoring one text, then serve until SIGTERM or Ctrl-C,
    which answer the requests in flight before the workers stop (uvicorn; its own access log off, so query strings,
    which carry keys, are never printed; ``access_log`` writes the JSON lines of ``serve_access`` to standard error
    instead). threads: torch threads per worker (None: the cores shared out); max_connections, max_per_client:
    connections still sending their request, in all and per client address; request_timeout: seconds of silence
    allowed while a request arrives; min_upload_rate: bytes/s it must average after its first request_timeout
    seconds (``serve_guard``). A host other than this machine's needs allow_remote and api_keys
    (ServeConfigError)."""
    import uvicorn

    check_exposure(host, allow_remote, api_keys)
    check_port_free(host, port)
    protocol = guarded_protocol(request_timeout, max_connections, max_per_client, min_rate=min_upload_rate)
    loaded = get_scorer(scorer)
    workers = cpu_threads() if workers is None else workers
    pool = ScoringPool(loaded, workers=workers, cache=cache, coalesce=coalesce, threads=threads)
    if workers == 0:
        loaded.score(["Loading the scorer before the first request."], cache=False, progress=False)
    pool.start()
    try:
        app = make_app(loaded, max_body=max_body, max_waiting=max_waiting, cache=cache, api_keys=api_keys,
                       coalesce=coalesce, log_write=stderr_line if access_log else None, pool=pool)
        where = f"[{host}]" if ":" in host else host
        keys = f"; {len(api_keys)} API key(s) required" if api_keys else ""
        scoring = (f"{workers} worker process(es) of {pool.threads} thread(s)" if workers
                   else "one thread of this process")
        print(f"serving {loaded.name}@{loaded.version} (a local emulation of Perspective, not Perspective) at "
              f"http://{where}:{port}{ANALYZE_PATH}{keys}; scoring in {scoring}; information: "
              f"http://{where}:{port}/info", flush=True)
        uvicorn.run(app, host=host, port=port, access_log=False, http=protocol, log_level="warning")
    finally:  # the app's shutdown closed it already, unless uvicorn failed before
        pool.close()
