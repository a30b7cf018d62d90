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
    GET  /healthz                      {"status": "ok", "servedScorer", "waiting", "maxWaiting"}: the scorer is loaded

Beyond Perspective's own errors: 403 PERMISSION_DENIED when API keys are listed and a request carries none of them
(``serve_access``; the discovery document, ``/info`` and ``/healthz`` need no key); 413 for a body over ``max_body``
bytes (a batch may be ``max_batch`` times larger), before or after gzip decoding, 415 for a Content-Encoding other
than gzip (``serve_body``); 429 RESOURCE_EXHAUSTED with ``Retry-After`` when ``max_waiting`` requests already wait to
be scored; 404 NOT_FOUND for any other path. Every response carries ``X-Toxlib-Scorer: <scorer name>@<version>``, so
a client can key its cache by the model that answers, not only by the address. Scores go through the scorer's cache
as any toxlib scoring does.

Scoring runs in one worker thread at a time (the model is not shared across threads). With ``coalesce`` (the
default) the requests that arrive while the scorer is busy are scored together in its next call (up to
``COALESCE_TEXTS`` texts): no request waits for company, and under load one call serves many requests
(``python -m toxlib bench serve`` measures what this gains). Connections that have not sent a whole request are cut
when silent or too slow, and bounded per client address, by ``toxlib.scorers.serve_guard``. Built on Starlette
(routing, requests) and uvicorn (HTTP).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import socket
import sys
import threading

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toxlib.common.errors import ToxlibError
from toxlib.scorers import get_scorer
from toxlib.scorers.perspective import SCORER_HEADER
from toxlib.scorers.serve_access import KEY_HEADER, TEXTS_SCOPE_KEY, KeyCheck, with_access_log
from toxlib.scorers.serve_body import BadRequest, read_body
from toxlib.scorers.serve_guard import MIN_RATE, guarded_protocol
from toxlib.scorers.serve_info import about
from toxlib.scorers.serve_wire import (
    ANALYZE_PATH,
    MAX_TEXT_BYTES,
    analyze_response,
    batch_response,
    discovery_document,
    error_body,
    parse_request,
    perspective_error,
    split_batch,
)

log = logging.getLogger(__name__)

#: the most texts one scorer call takes when requests are coalesced
COALESCE_TEXTS = 256
#: hosts that reach only this machine: serving on any other needs allow_remote and API keys
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
MISSING_KEY = ("The request is missing a valid API key: pass one of this server's keys as ?key=KEY or in the "
               "X-Goog-Api-Key header.")

__all__ = ["ANALYZE_PATH", "MAX_TEXT_BYTES", "BadRequest", "ServeConfigError", "make_app", "parse_request", "serve"]


class ServeConfigError(ToxlibError):
    """``serve`` was asked for something unsafe or impossible (a remote host without keys, a port in use)."""


class Coalescer:
    """Scores the text lists of concurrent requests together: ``await score(texts)`` gives that list's rows of
    ``score_texts(all texts taken together)``. One call runs at a time, in a worker thread; the lists that arrive
    meanwhile wait for the next call, which takes them all (up to ``max_texts`` texts, whole lists only). Lives on
    one event loop."""

    def __init__(self, score_texts, max_texts: int = COALESCE_TEXTS):
        self.score_texts, self.max_texts = score_texts, max_texts
        self.pending: list[tuple[list[str], asyncio.Future]] = []
        self.running = False

    async def score(self, texts: list[str]) -> list:
        future = asyncio.get_running_loop().create_future()
        self.pending.append((texts, future))
        if not self.running:
            self.running = True
            asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self.pending:
                taken, total = [], 0
                while self.pending and (not taken or total + len(self.pending[0][0]) <= self.max_texts):
                    taken.append(self.pending.pop(0))
                    total += len(taken[-1][0])
                try:
                    rows = await run_in_threadpool(self.score_texts, [t for texts, _ in taken for t in texts])
                except Exception as exc:  # every request of the call gets the fault
                    for _, future in taken:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                start = 0
                for texts, future in taken:
                    if not future.done():  # a client that left has its future cancelled
                        future.set_result(rows[start:start + len(texts)])
                    start += len(texts)
        finally:
            self.running = False


def make_app(scorer, max_body: int = 65536, max_waiting: int = 64, cache: bool = True, max_batch: int = 100,
             api_keys: frozenset[str] = frozenset(), coalesce: bool = True, log_write=None):
    """The ASGI app serving ``scorer`` (a toxlib ``Scorer``); routes and answers as in the module docstring.

    max_body: largest analyze body in bytes (413 beyond it; a batch may be ``max_batch`` times larger);
    max_waiting: requests allowed to wait for the scorer before new ones get 429; cache: use the score cache (as
    ``Scorer.score``); api_keys: the keys a request must carry one of (none: no key needed); coalesce: score
    concurrent requests together (``Coalescer``); log_write: a function given one JSON access-log line per request
    (``serve_access.with_access_log``), or None for no log. ValueError when a bound is below 1."""
    if min(max_body, max_waiting, max_batch) < 1:
        raise ValueError(f"max_body ({max_body}), max_waiting ({max_waiting}) and max_batch ({max_batch}) must be >= 1")
    supported = tuple(a.upper() for a in scorer.attributes)
    served = f"{scorer.name}@{scorer.version}"
    information = about(scorer, max_body=max_body, max_batch=max_batch, max_waiting=max_waiting)
    keys = KeyCheck(api_keys)
    lock = threading.Lock()  # one scoring at a time: the model is not shared across threads
    waiting = {"n": 0}

    def score_texts(texts: list[str]) -> list[tuple[dict[str, float], str | None]]:
        with lock:
            table = scorer.score(texts, cache=cache, progress=False)
        return [({a.upper(): float(row[a]) for a in scorer.attributes}, row["error"]) for _, row in table.iterrows()]

    coalescer = Coalescer(score_texts) if coalesce else None

    def request_key(request: Request) -> str | None:
        return request.query_params.get("key") or request.headers.get(KEY_HEADER)

    async def answer(request: Request, bodies: list[bytes]) -> list[tuple[int, dict]]:
        """(status, JSON body) for each analyze request body, the valid ones scored together."""
        parsed: list = []
        for body in bodies:
            try:
                parsed.append(parse_request(body, supported))
            except BadRequest as exc:
                parsed.append(exc)
            except Exception as exc:  # whatever else a hostile body triggers is that body's fault, not a 500
                parsed.append(BadRequest(f"Invalid request ({type(exc).__name__})."))
        texts = [p[0] for p in parsed if not isinstance(p, BadRequest)]
        if texts and waiting["n"] >= max_waiting:
            raise BadRequest(f"Too many requests waiting ({max_waiting}); retry later.", code=429)
        scored = []
        if texts:
            waiting["n"] += 1
            try:
                scored = await (coalescer.score(texts) if coalescer else run_in_threadpool(score_texts, texts))
                request.scope[TEXTS_SCOPE_KEY] = len(texts)
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
            if not keys.allowed(request_key(request)):
                raise BadRequest(MISSING_KEY, code=403)
            [(status, payload)] = await answer(request, [await read_body(request, max_body)])
        except BadRequest as exc:
            return perspective_error(exc.code, str(exc), exc.error_type)
        return JSONResponse(payload, status_code=status)

    async def batch(request: Request) -> Response:
        outer_key_ok = keys.allowed(request_key(request))

        def routed(method, path, key):  # a part to score: an analyze request with a listed key (its own or the batch's)
            return (method, path) == ("POST", ANALYZE_PATH) and (outer_key_ok or keys.allowed(key))

        try:
            body = await read_body(request, max_body * max_batch)
            parts = split_batch(request.headers.get("content-type", ""), body, max_batch)
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
                             "maxWaiting": max_waiting})

    async def not_found(request: Request, exc) -> JSONResponse:
        return perspective_error(404, f"Not found: {request.url.path} (this server answers POST {ANALYZE_PATH})")

    async def not_allowed(request: Request, exc) -> JSONResponse:
        return perspective_error(405, f"Method {request.method} not allowed: use POST {ANALYZE_PATH}")

    routes = [Route(ANALYZE_PATH, analyze, methods=["POST"]), Route("/batch", batch, methods=["POST"]),
              Route("/$discovery/rest", discovery, methods=["GET"]),
              Route("/discovery/v1/apis/commentanalyzer/v1alpha1/rest", discovery, methods=["GET"]),
              Route("/info", info, methods=["GET"]), Route("/healthz", healthz, methods=["GET"])]
    app = naming_the_scorer(Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed}), served)
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


def serve(host: str = "127.0.0.1", port: int = 8080, scorer: str = "distilled", max_body: int = 65536,
          max_waiting: int = 64, max_connections: int = 512, max_per_client: int = 32,
          request_timeout: float = 5.0, min_upload_rate: float = MIN_RATE, cache: bool = True,
          allow_remote: bool = False, api_keys: frozenset[str] = frozenset(), access_log: bool = True,
          coalesce: bool = True) -> None:
    """Load ``scorer`` by name, score one text to load its weights, and serve it until interrupted (uvicorn; its
    own access log off, so query strings, which carry keys, are never printed; ``access_log`` writes the JSON lines
    of ``serve_access`` to standard error instead). max_connections, max_per_client: connections still
    sending their request, in all and per client address; request_timeout: seconds of silence allowed while a
    request arrives; min_upload_rate: bytes/s it must average after its first request_timeout seconds
    (``serve_guard``). A host other than this machine's needs allow_remote and api_keys (ServeConfigError)."""
    import uvicorn

    check_exposure(host, allow_remote, api_keys)
    check_port_free(host, port)
    protocol = guarded_protocol(request_timeout, max_connections, max_per_client, min_rate=min_upload_rate)
    loaded = get_scorer(scorer)
    app = make_app(loaded, max_body=max_body, max_waiting=max_waiting, cache=cache, api_keys=api_keys,
                   coalesce=coalesce, log_write=stderr_line if access_log else None)
    loaded.score(["Loading the scorer before the first request."], cache=False, progress=False)
    where = f"[{host}]" if ":" in host else host
    keys = f"; {len(api_keys)} API key(s) required" if api_keys else ""
    print(f"serving {loaded.name}@{loaded.version} (a local emulation of Perspective, not Perspective) at "
          f"http://{where}:{port}{ANALYZE_PATH}{keys}; information: http://{where}:{port}/info", flush=True)
    uvicorn.run(app, host=host, port=port, access_log=False, http=protocol, log_level="warning")
