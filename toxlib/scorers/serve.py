"""A local, Perspective-compatible endpoint backed by a toxlib scorer: ``python -m toxlib serve``.

An emulation, not Perspective: the scores are the toxlib scorer's (default the calibrated distilled scorer, whose
fidelity to Perspective is measured on held-out RealToxicityPrompts texts in ``training.json`` and the scorers
chapter). It speaks Perspective's v1alpha1 wire format so that code written for the API (the papers' scripts,
HELM, lm-evaluation-harness, toxlib's own ``perspective`` scorer) runs unchanged against it once pointed at it.

    POST /v1alpha1/comments:analyze
      request:  {"comment": {"text": str}, "requestedAttributes": {"TOXICITY": {"scoreThreshold"?: float}, ...},
                 "languages"?: ["en"], "doNotStore"?, "spanAnnotations"?, "clientToken"?, "sessionId"?, ...}
      response: {"attributeScores": {"TOXICITY": {"summaryScore": {"value": float, "type": "PROBABILITY"},
                                                  "spanScores": [{"begin": 0, "end": len(text), "score": {...}}]}},
                 "languages": ["en"], "detectedLanguages": ["en"], "clientToken"?: echoed}
      errors:   Google's JSON error shape {"error": {"code", "message", "status", "details": [{"@type",
                "errorType"}]}}: 400 INVALID_ARGUMENT for malformed JSON or a missing/empty/non-string text
                (COMMENT_EMPTY), an unknown or unsupported attribute (ATTRIBUTE_NOT_SUPPORTED), a language other than
                English (LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE) or a text over 20,480 bytes (COMMENT_TOO_LONG);
                (also a body nested too deeply to parse, or holding a lone surrogate anywhere); 413 for a body
                over ``max_body`` bytes; 429 RESOURCE_EXHAUSTED with ``Retry-After`` when ``max_waiting`` requests
                already wait to be scored; 404 NOT_FOUND for any other path. Inside ``/batch`` each part gets its
                own answer: a malformed part is a 400 for that part only.
      every response: ``X-Toxlib-Scorer: <scorer name>@<version>`` (also ``servedScorer`` in the discovery
                document), so a client can key its cache by the model that answers, not only by the address.

What differs from Perspective: the text is always taken as English (no language detection: "languages" in the
response is the request's, else ["en"]); span scores are one span covering the whole text (the scorer does not
score sentences separately); scoreThreshold drops an attribute whose score is below it, as Perspective does; the
API key (``?key=`` or ``X-Goog-Api-Key``) is accepted and ignored, and never logged (uvicorn's access log, which
prints query strings, is off). Scores go through the scorer's cache as any toxlib scoring does.

Built on Starlette (routing, requests) and uvicorn (HTTP). Scoring runs in a worker thread, one request at a time
(the model is not shared across threads); ``max_waiting`` bounds the queue. Connections that have not sent a
whole request are timed out and bounded per client address by ``toxlib.scorers.serve_guard``, so slow clients
cannot shut normal requests out.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import uuid
from email.parser import BytesParser
from http import HTTPStatus
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toxlib.scorers import get_scorer
from toxlib.scorers.perspective import SCORER_HEADER
from toxlib.scorers.serve_guard import guarded_protocol

log = logging.getLogger(__name__)

ANALYZE_PATH = "/v1alpha1/comments:analyze"
#: Perspective's limit on a comment (bytes of UTF-8)
MAX_TEXT_BYTES = 20480
ERROR_TYPE = "type.googleapis.com/google.commentanalyzer.v1alpha1.Error"
STATUS_NAMES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT", 413: "INVALID_ARGUMENT",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def error_body(code: int, message: str, error_type: str | None = None) -> tuple[int, dict]:
    """(code, Google's error shape {"error": {code, message, status, details?}})."""
    error = {"code": code, "message": message, "status": STATUS_NAMES.get(code, "UNKNOWN")}
    if error_type:
        error["details"] = [{"@type": ERROR_TYPE, "errorType": error_type}]
    return code, {"error": error}


def perspective_error(code: int, message: str, error_type: str | None = None) -> JSONResponse:
    """A JSON response in Google's error shape (``error_body``); an overload (429, 503) says when to retry."""
    code, body = error_body(code, message, error_type)
    return JSONResponse(body, status_code=code, headers={"Retry-After": "1"} if code in (429, 503) else None)


class BadRequest(Exception):
    """A request Perspective would refuse: (HTTP code, message, Perspective errorType)."""

    def __init__(self, message: str, error_type: str | None = None, code: int = 400):
        super().__init__(message)
        self.code, self.error_type = code, error_type


def parse_request(body: bytes, supported: tuple[str, ...]) -> tuple[str, dict[str, float], list[str], str | None]:
    """(text, {ATTRIBUTE: score threshold}, languages, clientToken or None) from an analyze request body;
    ``BadRequest`` otherwise.

    supported: the upper-case attribute names the scorer can give."""
    try:
        request = json.loads(body)
        # a lone surrogate (JSON's "\ud800") anywhere would fail later, when the answer is encoded
        json.dumps(request, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeError) as exc:
        raise BadRequest(f"Invalid JSON payload received. {exc}") from None
    except RecursionError:
        raise BadRequest("Invalid JSON payload received. The body is nested too deeply.") from None
    if not isinstance(request, dict):
        raise BadRequest("Invalid JSON payload received. The request must be a JSON object.")
    comment = request.get("comment")
    text = comment.get("text") if isinstance(comment, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise BadRequest("Comment must be non-empty.", "COMMENT_EMPTY")
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        raise BadRequest(f"Comment text too long: {len(text.encode('utf-8'))} bytes, the limit is "
                         f"{MAX_TEXT_BYTES}.", "COMMENT_TOO_LONG")
    requested = request.get("requestedAttributes")
    if not isinstance(requested, dict) or not requested:
        raise BadRequest("Must request at least one attribute (requestedAttributes).", "NO_REQUESTED_ATTRIBUTES")
    thresholds = {}
    for name, options in requested.items():
        if name not in supported:
            raise BadRequest(f"Attribute {name} is not supported by this local emulation; supported: "
                             f"{', '.join(supported)}.", "ATTRIBUTE_NOT_SUPPORTED")
        threshold = (options or {}).get("scoreThreshold", 0.0) if isinstance(options, dict) else None
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise BadRequest(f"Invalid requestedAttributes.{name}: scoreThreshold must be a number in [0, 1].")
        thresholds[name] = float(threshold)
    languages = request.get("languages") or []
    if not isinstance(languages, list) or not all(isinstance(code, str) for code in languages):
        raise BadRequest("Invalid JSON payload received. languages must be a list of language codes.")
    other = [code for code in languages if code.lower().split("-")[0] != "en"]
    if other:
        raise BadRequest(f"Attribute {next(iter(thresholds))} does not support request languages: "
                         f"{', '.join(other)}", "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE")
    token = request.get("clientToken")
    return text, thresholds, languages or ["en"], token if isinstance(token, str) else None


def analyze_response(text: str, scores: dict[str, float], thresholds: dict[str, float], languages: list[str],
                     client_token: str | None = None) -> dict:
    """The analyze response for ``scores`` ({ATTRIBUTE: value in [0, 1]}): attributes below their threshold left
    out, one whole-text span per attribute."""
    attribute_scores = {}
    for name, value in scores.items():
        if value < thresholds.get(name, 0.0):
            continue
        score = {"value": value, "type": "PROBABILITY"}
        attribute_scores[name] = {"summaryScore": score,
                                  "spanScores": [{"begin": 0, "end": len(text), "score": dict(score)}]}
    response = {"attributeScores": attribute_scores, "languages": languages, "detectedLanguages": ["en"]}
    if client_token is not None:
        response["clientToken"] = client_token
    return response


def discovery_document(root_url: str) -> dict:
    """A minimal Google API discovery document for commentanalyzer v1alpha1 whose ``rootUrl`` is this server, so
    ``googleapiclient.discovery.build(..., discoveryServiceUrl=<this server>/$discovery/rest?version=v1alpha1)``
    sends ``comments().analyze(...)`` and ``new_batch_http_request()`` here."""
    ref = {"AnalyzeCommentRequest": "the request body", "AnalyzeCommentResponse": "the response body"}
    return {
        "kind": "discovery#restDescription", "discoveryVersion": "v1", "id": "commentanalyzer:v1alpha1",
        "name": "commentanalyzer", "version": "v1alpha1", "protocol": "rest",
        "title": "Perspective Comment Analyzer API (local emulation by toxlib, not Perspective)",
        "rootUrl": root_url, "baseUrl": root_url, "servicePath": "", "batchPath": "batch",
        "parameters": {"key": {"type": "string", "location": "query"},
                       "alt": {"type": "string", "location": "query", "default": "json", "enum": ["json"]}},
        "resources": {"comments": {"methods": {"analyze": {
            "id": "commentanalyzer.comments.analyze", "path": ANALYZE_PATH[1:], "flatPath": ANALYZE_PATH[1:],
            "httpMethod": "POST", "parameters": {}, "parameterOrder": [],
            "request": {"$ref": "AnalyzeCommentRequest"}, "response": {"$ref": "AnalyzeCommentResponse"}}}}},
        "schemas": {name: {"id": name, "type": "object", "description": text, "properties": {}}
                    for name, text in ref.items()},
    }


def split_batch(content_type: str, body: bytes, max_parts: int) -> list[tuple[str, str, str, bytes]]:
    """The parts of a Google batch request (multipart/mixed of application/http, as googleapiclient's
    ``BatchHttpRequest`` sends): [(Content-ID, method, path, body)]; ``BadRequest`` when the whole is not one. A part
    without an HTTP request line comes back with method "" and the problem as its body (a 400 for that part)."""
    if not content_type.startswith("multipart/mixed"):
        raise BadRequest("A batch request must be multipart/mixed (Google API batch format).")
    message = BytesParser().parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    parts = message.get_payload() if message.is_multipart() else None
    if not parts:
        raise BadRequest("The batch request has no parts.")
    if len(parts) > max_parts:
        raise BadRequest(f"Too many requests in one batch: {len(parts)}, the limit is {max_parts}.")
    out = []
    for part in parts:
        payload = part.get_payload(decode=True) or b""
        request_line, _, rest = payload.partition(b"\n")
        fields = request_line.decode("latin-1").split()
        content_id = re.sub(r"\r?\n(?=[ \t])", "", str(part.get("Content-ID", "")))  # unfold a long header
        if len(fields) < 2:
            out.append((content_id, "", "", b"This batch part does not hold an HTTP request line."))
            continue
        inner = re.split(rb"\r?\n\r?\n", rest, maxsplit=1)
        out.append((content_id, fields[0], urlsplit(fields[1]).path, inner[1] if len(inner) > 1 else b""))
    return out


def batch_response(answers: list[tuple[str, int, dict]]) -> Response:
    """A multipart/mixed batch response, one application/http part per (Content-ID, status, JSON body)."""
    boundary = f"batch_{uuid.uuid4().hex}"
    lines = []
    for content_id, status, payload in answers:
        lines += [f"--{boundary}", "Content-Type: application/http",
                  f"Content-ID: <response-{content_id.strip().lstrip('<').rstrip('>')}>", "",
                  f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: application/json; charset=UTF-8",
                  "", json.dumps(payload), ""]
    lines.append(f"--{boundary}--")
    return Response("\r\n".join(lines) + "\r\n", media_type=f"multipart/mixed; boundary={boundary}")


def make_app(scorer, max_body: int = 65536, max_waiting: int = 64, cache: bool = True,
             max_batch: int = 100):
    """The ASGI app serving ``scorer`` (a toxlib ``Scorer``): ``POST ANALYZE_PATH``, ``POST /batch`` (Google's
    batch format, up to ``max_batch`` analyze requests), and the discovery document at
    ``GET /$discovery/rest?version=v1alpha1`` and ``GET /discovery/v1/apis/commentanalyzer/v1alpha1/rest``.
    Returns an ASGI app (a Starlette app wrapped by ``naming_the_scorer``).

    max_body: largest analyze body in bytes (413 beyond it; a batch may be ``max_batch`` times larger);
    max_waiting: requests allowed to wait for the scorer before new ones get 429; cache: use the score cache (as
    ``Scorer.score``)."""
    supported = tuple(a.upper() for a in scorer.attributes)
    served = f"{scorer.name}@{scorer.version}"
    lock = threading.Lock()  # one scoring at a time: the model is not shared across threads
    waiting = {"n": 0}

    def score_texts(texts: list[str]) -> list[tuple[dict[str, float], str | None]]:
        with lock:
            table = scorer.score(texts, cache=cache, progress=False)
        return [({a.upper(): float(row[a]) for a in scorer.attributes}, row["error"]) for _, row in table.iterrows()]

    async def read_body(request: Request, limit: int) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise BadRequest(f"Request payload size exceeds the limit: {limit} bytes.", code=413)
        body = bytearray()
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise BadRequest(f"Request payload size exceeds the limit: {limit} bytes.", code=413)
        except ClientDisconnect:  # the client left, or the guard closed a request that took too long
            raise BadRequest("The client disconnected before the request was complete.") from None
        return bytes(body)

    async def answer(bodies: list[bytes]) -> list[tuple[int, dict]]:
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
                log.exception("the scorer failed on %d text(s)", len(texts))
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
            [(status, payload)] = await answer([await read_body(request, max_body)])
        except BadRequest as exc:
            return perspective_error(exc.code, str(exc), exc.error_type)
        return JSONResponse(payload, status_code=status)

    async def batch(request: Request) -> Response:
        try:
            body = await read_body(request, max_body * max_batch)
            parts = split_batch(request.headers.get("content-type", ""), body, max_batch)
            routed = [(cid, body) for cid, method, path, body in parts if (method, path) == ("POST", ANALYZE_PATH)]
            answers = iter(await answer([body for _, body in routed]))
        except BadRequest as exc:
            return perspective_error(exc.code, str(exc), exc.error_type)
        out = []
        for cid, method, path, part_body in parts:
            if (method, path) == ("POST", ANALYZE_PATH):
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


def serve(host: str = "127.0.0.1", port: int = 8080, scorer: str = "distilled", max_body: int = 65536,
          max_waiting: int = 64, max_connections: int = 512, max_per_client: int = 32,
          request_timeout: float = 5.0, cache: bool = True) -> None:
    """Load ``scorer`` by name and serve it until interrupted (uvicorn; access log off so keys in query strings
    are never printed). max_connections, max_per_client: connections still sending their request, in all and per
    client address; request_timeout: seconds a connection gets to send a whole request (``serve_guard``)."""
    import uvicorn

    loaded = get_scorer(scorer)
    app = make_app(loaded, max_body=max_body, max_waiting=max_waiting, cache=cache)
    print(f"serving {loaded.name}@{loaded.version} (a local emulation of Perspective, not Perspective) at "
          f"http://{host}:{port}{ANALYZE_PATH}", flush=True)
    protocol = guarded_protocol(request_timeout, max_connections, max_per_client)
    uvicorn.run(app, host=host, port=port, access_log=False, http=protocol, log_level="warning")

