"""Perspective's v1alpha1 wire format, as ``toxlib serve`` speaks it: pure functions from bytes to requests and from
scores to answers (no server, no scorer).

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
                (also a body nested too deeply to parse, or holding a lone surrogate anywhere).
    POST /batch: Google's batch format (multipart/mixed of application/http parts), one answer per part
                 (``toxlib.scorers.serve_batch``).
    GET /$discovery/rest?version=v1alpha1: a discovery document whose root is the server.
"""

from __future__ import annotations

import json

from starlette.responses import JSONResponse

from toxlib.scorers.serve_body import BadRequest

ANALYZE_PATH = "/v1alpha1/comments:analyze"
#: Perspective's limit on a comment (bytes of UTF-8)
MAX_TEXT_BYTES = 20480
ERROR_TYPE = "type.googleapis.com/google.commentanalyzer.v1alpha1.Error"
STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT",
                413: "INVALID_ARGUMENT", 415: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                503: "UNAVAILABLE"}


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


def discovery_document(root_url: str, about: dict | None = None) -> dict:
    """A minimal Google API discovery document for commentanalyzer v1alpha1 whose ``rootUrl`` is this server, so
    ``googleapiclient.discovery.build(..., discoveryServiceUrl=<this server>/$discovery/rest?version=v1alpha1)``
    sends ``comments().analyze(...)`` and ``new_batch_http_request()`` here. ``about`` (the server's information
    document, ``toxlib.scorers.serve_info``) is added whole under ``toxlib`` and summed up in ``description``;
    Google's client ignores both."""
    ref = {"AnalyzeCommentRequest": "the request body", "AnalyzeCommentResponse": "the response body"}
    document = {
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
    if about:
        document["description"] = about["summary"]
        document["servedScorer"] = about["servedScorer"]
        document["toxlib"] = about
    return document
