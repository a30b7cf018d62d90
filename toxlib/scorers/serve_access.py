"""Who may use ``toxlib serve``, and the record of what it answered: API keys and a JSON-lines access log.

API keys. ``load_keys(file)`` reads one key per line (blank lines and lines starting with ``#`` skipped) from a file,
or, with no file, from the environment variable ``TOXLIB_SERVE_API_KEYS`` (keys separated by commas). A request
carries its key as Perspective's clients send it: ``?key=KEY`` in the URL (Google's API client) or the
``X-Goog-Api-Key`` header (toxlib's client); a batch part may carry its own ``?key=``. ``request_key(scope)`` reads
it from the query or the header, the header's bytes as UTF-8 as the query's percent-escapes are, so a key is the same
string in both. ``KeyCheck`` compares a key with every listed one in constant time (``hmac.compare_digest``); with no
keys listed every request passes. A listed key that is not ASCII works, with a warning when it is read: clients that
put it in a header may send it as Latin-1, which no longer matches.

Access log. ``with_access_log(app, write)`` wraps an ASGI app so that every HTTP request gives ``write`` one JSON line:

    {"time": ISO 8601 UTC, "client": address, "method", "path" (no query string: a key travels there), "status",
     "ms": milliseconds to the end of the answer, "wait_ms": of those, how long its texts waited for a scoring
     worker, "score_ms": from then until its last text was scored (both 0 when nothing was scored),
     "bytes_in": body bytes read (as sent; 0 for a request refused before its body was read), "bytes_out",
     "texts": texts scored}

Never a text, a key, a query string or a header. ``texts`` is what the app put in ``scope["toxlib.texts"]``, the
two durations what it put in ``scope["toxlib.timing"]`` (``serve_pool.Timing``).
"""

from __future__ import annotations

import hmac
import json
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qs

from toxlib.common import settings
from toxlib.common.errors import ToxlibError

KEYS_VARIABLE = "TOXLIB_SERVE_API_KEYS"
KEY_HEADER = "x-goog-api-key"
#: where an app records how many texts a request had scored, for the access log
TEXTS_SCOPE_KEY = "toxlib.texts"
#: where an app records how long a request's texts waited and were scored (an object with .wait and .scoring, s)
TIMING_SCOPE_KEY = "toxlib.timing"
MISSING_KEY = ("The request is missing a valid API key: pass one of this server's keys as ?key=KEY or in the "
               "X-Goog-Api-Key header.")


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
        keys = set(settings.items(KEYS_VARIABLE))
        where = f"${KEYS_VARIABLE}"
        if not settings.is_set(KEYS_VARIABLE):
            return frozenset()
    if not keys:
        raise ApiKeyError(f"{where} holds no API key; list at least one (one per line in a file, comma-separated in "
                          f"${KEYS_VARIABLE})")
    foreign = sum(not key.isascii() for key in keys)
    if foreign:
        warnings.warn(f"{where} holds {foreign} API key(s) that are not ASCII: they are compared as UTF-8, in the "
                      "query (?key=, percent-escaped) and in the X-Goog-Api-Key header alike, but a client may send "
                      "a header in Latin-1; ASCII keys are safer", stacklevel=2)
    return frozenset(keys)


def request_key(scope) -> str | None:
    """The API key an HTTP request carries: its ``?key=`` (percent-escapes read as UTF-8), else its
    ``X-Goog-Api-Key`` header (its bytes read as UTF-8, an undecodable byte as U+FFFD), else None."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), encoding="utf-8").get("key", [""])[0]
    if query:
        return query
    for name, value in scope.get("headers", ()):
        if name.lower() == KEY_HEADER.encode():
            return value.decode("utf-8", "replace")
    return None


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
            client, timing = scope.get("client"), scope.get(TIMING_SCOPE_KEY)
            write(json.dumps({
                "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                "client": client[0] if client else None, "method": scope["method"], "path": scope["path"],
                "status": counts["status"], "ms": round((time.perf_counter() - start) * 1000, 1),
                "wait_ms": round(timing.wait * 1000, 1) if timing else 0.0,
                "score_ms": round(timing.scoring * 1000, 1) if timing else 0.0,
                "bytes_in": counts["in"], "bytes_out": counts["out"], "texts": scope.get(TEXTS_SCOPE_KEY, 0)}))

    return logged
