"""A local, Perspective-compatible endpoint backed by a toxlib scorer: ``toxlib serve`` (``python -m toxlib serve``).

An emulation, not Perspective: the scores are the toxlib scorer's (default the calibrated distilled scorer, whose
fidelity to Perspective is measured on held-out RealToxicityPrompts texts in ``training.json`` and the scorers
chapter). It speaks Perspective's v1alpha1 wire format (``toxlib.scorers.serve_wire``) so that code written for the
API (the papers' scripts, HELM, lm-evaluation-harness, toxlib's own ``perspective`` scorer) runs unchanged against
it once pointed at it.

    POST /v1alpha1/comments:analyze   Perspective's analyze (request, answer and errors: ``serve_wire``)
    POST /batch                        Google's batch format, up to ``max_batch`` analyze requests, scored together
    GET  /$discovery/rest?version=v1alpha1, GET /discovery/v1/apis/commentanalyzer/v1alpha1/rest
                                       the discovery document for ``googleapiclient.discovery.build``

Beyond Perspective's own errors: 413 for a body over ``max_body`` bytes (a batch may be ``max_batch`` times larger),
before or after gzip decoding, 415 for a Content-Encoding other than gzip (``serve_body``); 429 RESOURCE_EXHAUSTED
with ``Retry-After`` when ``max_waiting`` requests already wait to be scored; 404 NOT_FOUND for any other path.
Every response carries ``X-Toxlib-Scorer: <scorer name>@<version>``, so a client can key its cache by the model that
answers, not only by the address. Scores go through the scorer's cache as any toxlib scoring does.

Scoring runs in one worker thread at a time (the model is not shared across threads). Connections that have not
sent a whole request are cut when silent or too slow, and bounded per client address, by
``toxlib.scorers.serve_guard``. Built on Starlette (routing, requests) and uvicorn (HTTP).
"""

from __future__ import annotations

import errno
import logging
import math
import socket
import threading

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toxlib.common.errors import ToxlibError
from toxlib.scorers import get_scorer
from toxlib.scorers.perspective import SCORER_HEADER
from toxlib.scorers.serve_body import BadRequest, read_body
from toxlib.scorers.serve_guard import MIN_RATE, guarded_protocol
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


__all__ = ["ANALYZE_PATH", "MAX_TEXT_BYTES", "BadRequest", "ServeConfigError", "make_app", "parse_request", "serve"]


class ServeConfigError(ToxlibError):
    """``serve`` was asked for something it cannot do (a port in use, an address this machine does not have)."""


def make_app(scorer, max_body: int = 65536, max_waiting: int = 64, cache: bool = True, max_batch: int = 100):
    """The ASGI app serving ``scorer`` (a toxlib ``Scorer``); routes and answers as in the module docstring.

    max_body: largest analyze body in bytes (413 beyond it; a batch may be ``max_batch`` times larger);
    max_waiting: requests allowed to wait for the scorer before new ones get 429; cache: use the score cache (as
    ``Scorer.score``). ValueError when a bound is below 1."""
    if min(max_body, max_waiting, max_batch) < 1:
        raise ValueError(f"max_body ({max_body}), max_waiting ({max_waiting}) and max_batch ({max_batch}) must be >= 1")
    supported = tuple(a.upper() for a in scorer.attributes)
    served = f"{scorer.name}@{scorer.version}"
    lock = threading.Lock()  # one scoring at a time: the model is not shared across threads
    waiting = {"n": 0}

    def score_texts(texts: list[str]) -> list[tuple[dict[str, float], str | None]]:
        with lock:
            table = scorer.score(texts, cache=cache, progress=False)
        return [({a.upper(): float(row[a]) for a in scorer.attributes}, row["error"]) for _, row in table.iterrows()]

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
                scored = await run_in_threadpool(score_texts, texts)
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
            [(status, payload)] = await answer(request, [await read_body(request, max_body)])
        except BadRequest as exc:
            return perspective_error(exc.code, str(exc), exc.error_type)
        return JSONResponse(payload, status_code=status)

    async def batch(request: Request) -> Response:
        def routed(method, path, key):  # a part to score: an analyze request
            return (method, path) == ("POST", ANALYZE_PATH)

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
            else:
                message = f"Not found: {method} {path} (batch parts must POST {ANALYZE_PATH})"
                out.append((cid, *error_body(404, message)))
        return batch_response(out)

    async def discovery(request: Request) -> JSONResponse:
        return JSONResponse({**discovery_document(str(request.base_url)), "servedScorer": served})

    async def not_found(request: Request, exc) -> JSONResponse:
        return perspective_error(404, f"Not found: {request.url.path} (this server answers POST {ANALYZE_PATH})")

    async def not_allowed(request: Request, exc) -> JSONResponse:
        return perspective_error(405, f"Method {request.method} not allowed: use POST {ANALYZE_PATH}")

    routes = [Route(ANALYZE_PATH, analyze, methods=["POST"]), Route("/batch", batch, methods=["POST"]),
              Route("/$discovery/rest", discovery, methods=["GET"]),
              Route("/discovery/v1/apis/commentanalyzer/v1alpha1/rest", discovery, methods=["GET"])]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    return naming_the_scorer(app, served)


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


def serve(host: str = "127.0.0.1", port: int = 8080, scorer: str = "distilled", max_body: int = 65536,
          max_waiting: int = 64, max_connections: int = 512, max_per_client: int = 32,
          request_timeout: float = 5.0, min_upload_rate: float = MIN_RATE, cache: bool = True) -> None:
    """Load ``scorer`` by name and serve it until interrupted (uvicorn; access log off so keys in query strings
    are never printed). max_connections, max_per_client: connections still
    sending their request, in all and per client address; request_timeout: seconds of silence allowed while a
    request arrives; min_upload_rate: bytes/s it must average after its first request_timeout seconds
    (``serve_guard``). ServeConfigError when the port cannot be listened on."""
    import uvicorn

    check_port_free(host, port)
    protocol = guarded_protocol(request_timeout, max_connections, max_per_client, min_rate=min_upload_rate)
    loaded = get_scorer(scorer)
    app = make_app(loaded, max_body=max_body, max_waiting=max_waiting, cache=cache)
    where = f"[{host}]" if ":" in host else host
    print(f"serving {loaded.name}@{loaded.version} (a local emulation of Perspective, not Perspective) at "
          f"http://{where}:{port}{ANALYZE_PATH}", flush=True)
    uvicorn.run(app, host=host, port=port, access_log=False, http=protocol, log_level="warning")
