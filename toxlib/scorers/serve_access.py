"""Who may use ``toxlib serve``, and the record of what it answered: API keys and a JSON-lines access log.

API keys. ``load_keys(file)`` reads one key per line (blank lines and lines starting with ``#`` skipped) from a file,
or, with no file, from the environment variable ``TOXLIB_SERVE_API_KEYS`` (keys separated by commas). A request
carries its key as Perspective's clients send it: ``?key=KEY`` in the URL (Google's API client) or the
``X-Goog-Api-Key`` header (toxlib's client); a batch part may carry its own ``?key=``. ``KeyCheck`` compares a
key with every listed one in constant time (``hmac.compare_digest``); with no keys listed every request passes.

Access log. ``with_access_log(app, write)`` wraps an ASGI app so that every HTTP request gives ``write`` one JSON line:

    {"time": ISO 8601 UTC, "client": address, "method", "path" (no query string: a key travels there), "status",
     "ms": milliseconds to the end of the answer, "bytes_in": body bytes read (as sent; 0 for a request refused
     before its body was read), "bytes_out", "texts": texts scored}

Never a text, a key, a query string or a header. ``texts`` is what the app put in ``scope["toxlib.texts"]``.
"""

from __future__ import annotations

import hmac
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from toxlib.common.errors import ToxlibError

KEYS_VARIABLE = "TOXLIB_SERVE_API_KEYS"
KEY_HEADER = "x-goog-api-key"
#: where an app records how many texts a request had scored, for the access log
TEXTS_SCOPE_KEY = "toxlib.texts"


class ApiKeyError(ToxlibError):
    """The API key list cannot be read, or holds no key."""


def load_keys(path: str | Path | None = None) -> frozenset[str]:
    """The listed API keys: from ``path`` (one per line), else from ``TOXLIB_SERVE_API_KEYS`` (comma-separated),
    else none (an empty set). ApiKeyError when the file cannot be read or a source given holds no key."""
    if path is not None:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ApiKeyError(f"cannot read the API key file {path}: {reason}; give a UTF-8 file with one key per "
                              "line") from None
        keys = {line.strip() for line in lines if line.strip() and not line.strip().startswith("#")}
        where = f"the API key file {path}"
    else:
        keys = {k.strip() for k in os.environ.get(KEYS_VARIABLE, "").split(",") if k.strip()}
        where = f"${KEYS_VARIABLE}"
        if KEYS_VARIABLE not in os.environ:
            return frozenset()
    if not keys:
        raise ApiKeyError(f"{where} holds no API key; list at least one (one per line in a file, comma-separated in "
                          f"${KEYS_VARIABLE})")
    return frozenset(keys)


class KeyCheck:
    """``allowed(key)``: True when no keys are listed, or ``key`` is one of them (constant-time comparison)."""

    def __init__(self, keys: frozenset[str] = frozenset()):
        self._keys = [k.encode("utf-8") for k in sorted(keys)]

    @property
    def required(self) -> bool:
        return bool(self._keys)

    def allowed(self, key: str | None) -> bool:
        if not self._keys:
            return True
        if not key:
            return False
        given = key.encode("utf-8", "replace")
        found = False
        for listed in self._keys:  # every key compared, so the time does not tell which one nearly matched
            found |= hmac.compare_digest(given, listed)
        return found


def with_access_log(app, write):
    """``app`` (ASGI) writing one JSON line per HTTP request to ``write`` (module docstring)."""

    async def logged(scope, receive, send):
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        start = time.perf_counter()
        counts = {"status": 0, "in": 0, "out": 0}

        async def counting_receive():
            message = await receive()
            counts["in"] += len(message.get("body", b""))
            return message

        async def counting_send(message):
            if message["type"] == "http.response.start":
                counts["status"] = message["status"]
            elif message["type"] == "http.response.body":
                counts["out"] += len(message.get("body", b""))
            await send(message)

        try:
            await app(scope, counting_receive, counting_send)
        finally:
            client = scope.get("client")
            write(json.dumps({
                "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                "client": client[0] if client else None, "method": scope["method"], "path": scope["path"],
                "status": counts["status"], "ms": round((time.perf_counter() - start) * 1000, 1),
                "bytes_in": counts["in"], "bytes_out": counts["out"], "texts": scope.get(TEXTS_SCOPE_KEY, 0)}))

    return logged
