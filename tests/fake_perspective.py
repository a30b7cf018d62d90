"""A fake Perspective API on 127.0.0.1 for tests: ``POST /v1alpha1/comments:analyze`` with Perspective's JSON shapes.

    with FakePerspective(key="SECRET") as server:
        PerspectiveScorer(url=server.url) ...
        server.requests          # every request: path, headers, body, time (monotonic), status answered

Scores are ``fake_score(text, ATTR)``, deterministic in [0.01, 0.99]; span scores differ from the summary.
Markers in the comment text inject faults, counted per text (``server.tries[text]``):
  [429xN] [500xN]  N answers 429 (with ``Retry-After: server.retry_after``) or 500, then success; [500xinf]: always
  [slow]           wait ``server.slow_seconds`` (longer than the client's time-out) before answering
  [badjson]        200 with a truncated JSON body
  [lang]           400 INVALID_ARGUMENT "Attribute TOXICITY does not support request languages: xx"
  [missing]        the last requested attribute is left out of attributeScores
  [redirect]       307 to /elsewhere on this server
  [trickle]        200 whose body comes one byte every ``server.trickle_seconds`` (shorter than the client's time-out)
  [trickle-head]   the same from the status line on
  [str] [bool] [nan]  the first requested attribute's value as the string "0.5", true, or NaN
A wrong or missing X-Goog-Api-Key gets 403 PERMISSION_DENIED, or with ``bad_key_status=400`` Google's
400 "API key not valid" answer.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATH = "/v1alpha1/comments:analyze"
TRICKLE = "X-Fake-Trickle"  # internal: tells the handler to trickle the answer (never sent)


def fake_score(text: str, attribute: str) -> float:
    """The summary score the fake server gives ``text`` for ``attribute`` (upper case), in [0.01, 0.99]."""
    h = int(hashlib.sha256(f"{attribute}|{text}".encode()).hexdigest()[:8], 16)
    return round(0.01 + 0.98 * h / 0xFFFFFFFF, 6)


def span_score(text: str, attribute: str) -> float:
    """The (first) span score: never equal to the summary score."""
    return round((fake_score(text, attribute) + 0.37) % 1.0, 6)


def _error(code: int, status: str, message: str, **extra) -> dict:
    return {"error": {"code": code, "message": message, "status": status, **extra}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Google's front end; every answer sets Content-Length
    timeout = 5  # idle keep-alive connections close after this
    server: _Server

    def log_message(self, format, *args):  # quiet
        pass

    def _send(self, status: int, payload: dict | bytes, headers: dict | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        trickle = (headers or {}).pop(TRICKLE, None)
        if trickle:
            self._trickle(status, data, headers, from_start=trickle == "head")
            return
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (time-out)
            pass

    def _trickle(self, status: int, data: bytes, headers: dict, from_start: bool) -> None:
        """Send the answer one byte every ``trickle_seconds`` (the head at once unless ``from_start``)."""
        fake = self.server.fake
        head = (f"HTTP/1.1 {status} OK\r\nContent-Type: application/json; charset=UTF-8\r\n"
                f"Content-Length: {len(data)}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) +
                "\r\n").encode()
        raw, start = head + data, 0 if from_start else len(head)
        try:
            self.wfile.write(raw[:start])
            self.wfile.flush()
            for i in range(start, len(raw)):
                if fake._stop.wait(fake.trickle_seconds):
                    break
                self.wfile.write(raw[i:i + 1])
                self.wfile.flush()
        except OSError:  # the client gave up
            pass
        self.close_connection = True

    def do_POST(self):
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        record = {"path": self.path, "headers": dict(self.headers), "body": body, "time": time.monotonic()}
        with fake.lock:
            fake.requests.append(record)
        status, payload, headers = fake.answer(self.path, self.headers.get("X-Goog-Api-Key"), body)
        record["status"] = status
        self._send(status, payload, headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # server_close() would otherwise wait for idle keep-alive connections
    fake: FakePerspective


class FakePerspective:
    """The fake server, started by ``start()`` or ``with``; ``url`` is its analyze endpoint."""

    def __init__(self, key: str = "SECRET-KEY-123", slow_seconds: float = 2.0, retry_after: str = "0",
                 bad_key_status: int = 403, trickle_seconds: float = 0.2):
        self.key, self.slow_seconds, self.retry_after, self.bad_key_status = key, slow_seconds, retry_after, \
            bad_key_status
        self.trickle_seconds = trickle_seconds
        self.requests: list[dict] = []
        self.tries: dict[str, int] = {}
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{PATH}"

    def start(self) -> FakePerspective:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()  # releases [slow] handlers
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakePerspective:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def requests_for(self, text: str) -> list[dict]:
        """The analyze requests whose comment text is ``text``."""
        return [r for r in self.requests if isinstance(r["body"], dict) and r["body"]["comment"]["text"] == text]

    def answer(self, path: str, key: str | None, body) -> tuple[int, dict | bytes, dict]:
        """(status, JSON payload or raw bytes, extra headers) for one request."""
        if path.split("?")[0] != PATH:
            return 404, _error(404, "NOT_FOUND", f"no such method {path}"), {}
        if key != self.key:
            if self.bad_key_status == 400:
                return 400, _error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                                   details=[{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                             "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]), {}
            return 403, _error(403, "PERMISSION_DENIED", "The caller does not have permission"), {}
        if not isinstance(body, dict):
            return 400, _error(400, "INVALID_ARGUMENT", "Invalid JSON payload received."), {}
        text = body["comment"]["text"]
        with self.lock:
            self.tries[text] = n = self.tries.get(text, 0) + 1
        for code in ("429", "500"):
            match = re.search(rf"\[{code}x(\d+|inf)\]", text)
            if match and (match.group(1) == "inf" or n <= int(match.group(1))):
                if code == "429":
                    return 429, _error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Analysis "
                                                                  "requests'"), {"Retry-After": self.retry_after}
                return 500, _error(500, "INTERNAL", "Internal error encountered."), {}
        if "[slow]" in text:
            self._stop.wait(self.slow_seconds)
        if "[lang]" in text:
            return 400, _error(400, "INVALID_ARGUMENT",
                               "Attribute TOXICITY does not support request languages: xx"), {}
        if "[redirect]" in text:
            return 307, b"", {"Location": "/elsewhere"}
        attributes = list(body["requestedAttributes"])
        if "[missing]" in text:
            attributes = attributes[:-1]
        scores = {a: {"spanScores": [{"begin": 0, "end": len(text),
                                      "score": {"value": span_score(text, a), "type": "PROBABILITY"}}],
                      "summaryScore": {"value": fake_score(text, a), "type": "PROBABILITY"}}
                  for a in attributes}
        for marker, value in (("[str]", "0.5"), ("[bool]", True), ("[nan]", float("nan"))):
            if marker in text:
                scores[attributes[0]]["summaryScore"]["value"] = value
        payload = {"attributeScores": scores, "languages": body.get("languages", ["en"]),
                   "detectedLanguages": ["en"]}
        if "[badjson]" in text:
            return 200, json.dumps(payload).encode()[:40], {}
        if "[trickle-head]" in text or "[trickle]" in text:
            return 200, payload, {TRICKLE: "head" if "[trickle-head]" in text else "body"}
        return 200, payload, {}
