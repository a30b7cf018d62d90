"""The Perspective API (https://perspectiveapi.com) as a toxlib scorer.

    PERSPECTIVE_API_KEY=... python -c 'from toxlib.scorers import score; print(score(["you idiot"], "perspective"))'

One POST to ``comments:analyze`` per text, sequential, at most ``qps`` requests per second (retries included).
The key comes from the environment variable ``PERSPECTIVE_API_KEY`` only and travels in the ``X-Goog-Api-Key``
header, never in the URL, so it cannot show up in exception messages, logs or the score cache; error texts are
redacted as well. Redirects are not followed (requests would forward the header to whatever host a redirect names).

Retries (urllib3's ``Retry`` under a ``requests`` adapter, semantics checked in urllib3 2.x's source): ``total``
bounds every kind of retry. 429 and 5xx responses are retried because POST is in ``allowed_methods`` and the status
is in ``status_forcelist``, sleeping ``Retry-After`` when the server sends a positive one, otherwise
``backoff_factor * 2 ** (n - 1)`` after the n-th consecutive failure (no sleep before the first retry). Read
time-outs and dropped connections (urllib3's "read" errors) are retried only because POST is in ``allowed_methods``;
connect errors are retried for any method. Retrying is safe: analyze has no side effects (``doNotStore``).

Two limits bound a request: ``timeout`` per socket operation (connect, then each read), and ``deadline`` for the
whole request (connect, every read, every retry and its back-off or Retry-After). At the deadline a watchdog shuts
the connection's socket down, so a server that hangs, or trickles a byte every few seconds, costs at most
``deadline`` seconds per text; no retry starts, and no back-off sleeps, past it.

Failures never become numbers: the text gets NaN in every column and an error. Which failures are cached (``keep``):
  HTTP 400 (e.g. "Attribute TOXICITY does not support request languages: xx", text too long)  cached: permanent
  429/5xx after the last retry, time-outs, the deadline, connection errors, other statuses, malformed JSON,
  a response that lacks a requested attribute, or whose value is not a JSON number in [0, 1]
  (a string such as "0.5", a boolean, NaN)                                                     not cached: retried
A response missing one attribute gives the whole text NaN (not a partial row), so a cached row is always complete.
Failures that concern the key or the endpoint rather than a text (401, 403, 404, a 400 "API key not valid") raise
``PerspectiveAuthError`` and stop the run; chunks already scored stay cached.
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
from urllib.parse import quote, urlsplit

import numpy as np
import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import MaxRetryError
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError
from urllib3.util import Retry

from toxlib.common import settings
from toxlib.common.errors import ToxlibError, UnknownNameError
from toxlib.scorers.base import ATTRIBUTES, BatchScores, Scorer

log = logging.getLogger(__name__)

KEY_VARIABLE = "PERSPECTIVE_API_KEY"
URL_VARIABLE = "PERSPECTIVE_API_URL"
DEFAULT_URL = "https://commentanalyzer.googleapis.com/v1alpha1/comments:analyze"
GET_A_KEY = "https://developers.perspectiveapi.com/s/docs-get-started"
RETRY_STATUSES = (429, 500, 502, 503, 504)
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
#: the response header (and discovery field ``servedScorer``) by which ``toxlib serve`` names the scorer that
#: answers ("<name>@<version>")
SCORER_HEADER = "X-Toxlib-Scorer"


class MissingAPIKeyError(ToxlibError):
    """``PERSPECTIVE_API_KEY`` is not set."""


class PerspectiveAuthError(ToxlibError):
    """The API refused the key or the endpoint does not exist: every further request would fail the same way."""


class EndpointChangedError(ToxlibError):
    """The endpoint now answers with another model than the one its cached scores are keyed by."""


class RateLimiter:
    """At most ``qps`` calls of ``wait()`` per second across threads (monotonic clock; ``qps=inf``: no limit).

    Each caller reserves the next free slot under the lock and sleeps outside it."""

    def __init__(self, qps: float):
        self.interval = 0.0 if math.isinf(qps) else 1.0 / qps
        self._next = -math.inf
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


#: thread id -> monotonic deadline of the request that thread is making
_DEADLINES: dict[int, float] = {}
#: thread id -> the urllib3 connection that thread is using (the watchdog shuts its socket down)
_CONNECTIONS: dict[int, HTTPConnection] = {}


class DeadlineExceeded(Urllib3TimeoutError):
    """The request's total deadline passed (raised inside urllib3, seen by requests as a connection error)."""


def _remaining() -> float:
    return _DEADLINES.get(threading.get_ident(), math.inf) - time.monotonic()


class _TrackedConnection:
    """Mixin: remember which connection the current thread's request uses."""

    def request(self, *args, **kwargs):
        _CONNECTIONS[threading.get_ident()] = self
        return super().request(*args, **kwargs)


class _HTTPConnection(_TrackedConnection, HTTPConnection):
    pass


class _HTTPSConnection(_TrackedConnection, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def _abort(thread_id: int) -> None:
    """Watchdog: shut down the socket of the connection ``thread_id`` is blocked on (its recv returns at once)."""
    sock = getattr(_CONNECTIONS.get(thread_id), "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _Retry(Retry):
    """urllib3's Retry that logs each retry at WARNING, waits for the rate limiter before it, and gives up at the
    current request's deadline (no retry starts and no back-off sleeps past it)."""

    limiter: RateLimiter | None = None

    def new(self, **kw) -> _Retry:
        retry = super().new(**kw)  # urllib3 builds the copy from its own constructor arguments only
        retry.limiter = self.limiter
        return retry

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        if _remaining() <= 0:
            raise MaxRetryError(_pool, url, DeadlineExceeded(f"deadline reached ({error or 'no error'})"))
        retry = super().increment(method, url, response, error, _pool, _stacktrace)  # raises when exhausted
        cause = f"HTTP {response.status}" if error is None and response is not None else repr(error)
        log.warning("Perspective request failed (%s); retry %d (%s left)", cause, len(retry.history), retry.total)
        return retry

    def sleep(self, response=None) -> None:
        wait = (self.get_retry_after(response) if response is not None and self.respect_retry_after_header
                else None)
        wait = self.get_backoff_time() if wait is None else wait
        if wait >= _remaining():
            raise MaxRetryError(None, None, DeadlineExceeded(f"deadline reached: the next retry is {wait:g} s away"))
        super().sleep(response)
        if self.limiter:
            self.limiter.wait()


def served_scorer(url: str, timeout: float = 3.0) -> str | None:
    """The model a ``toxlib serve`` endpoint says it answers with ("<name>@<version>", from its discovery document
    beside ``url``), or None for a server that does not say (Google, a test server, one not reachable yet). One GET
    without the API key and without retries."""
    parts = urlsplit(url)
    prefix = parts.path.split("/v1alpha1/")[0]
    try:
        answer = requests.get(f"{parts.scheme}://{parts.netloc}{prefix}/$discovery/rest",
                              params={"version": "v1alpha1"}, timeout=timeout, allow_redirects=False)
        served = answer.json().get("servedScorer") if answer.status_code == 200 else None
    except (requests.RequestException, ValueError, AttributeError):
        return None
    return served if isinstance(served, str) and served else None


class PerspectiveScorer(Scorer):
    """Perspective API scores, one column per requested attribute (lower-case Perspective names).

    attributes: a subset of ``ATTRIBUTES`` (default: all 8; columns come in ``ATTRIBUTES`` order); languages: ISO
    codes sent with every text (empty: let Perspective detect the language); qps: request rate limit, retries
    included (Perspective's default quota is 1; one limiter per scorer instance); timeout: seconds per connect and
    per read; deadline: seconds for a whole request, retries included (not the rate-limit wait before it);
    retries, backoff_factor: urllib3 ``Retry(total=, backoff_factor=)``; url: the analyze endpoint (default:
    ``$PERSPECTIVE_API_URL``, else Google's; plain http only to a loopback host); do_not_store: ask Google not to
    keep the texts. ``version`` names what changes the scores (the whole endpoint, attributes, languages, and the
    model behind the endpoint where the server names it: ``toxlib serve`` does, in its discovery document, asked
    once here for any endpoint other than Google's), never the key. Raises ``MissingAPIKeyError`` without
    ``PERSPECTIVE_API_KEY``, ``UnknownNameError`` for an unknown attribute, and, while scoring,
    ``EndpointChangedError`` when the server's answers name another model than the one it named at creation.
    """

    name = "perspective"
    chunk_size = 20  # a cache write and a progress step every ~20 s at the default quota
    description = "Perspective API over HTTP (needs PERSPECTIVE_API_KEY and network)"

    def __init__(self, attributes=ATTRIBUTES, languages=("en",), qps: float = 1.0, timeout: float = 10.0,
                 deadline: float = 30.0, retries: int = 5, backoff_factor: float = 1.0, url: str | None = None,
                 do_not_store: bool = True):
        attributes = (attributes,) if isinstance(attributes, str) else tuple(attributes)
        unknown = [a for a in attributes if a not in ATTRIBUTES]
        if unknown or not attributes:
            raise UnknownNameError(f"unknown Perspective attribute(s) {unknown or '(none given)'}; known: "
                                   f"{', '.join(ATTRIBUTES)}")
        if isinstance(languages, str):
            languages = (languages,)
        if not qps > 0:
            raise ValueError(f"qps must be > 0 (math.inf for no limit), got {qps!r}")
        if not (0 < timeout < math.inf and 0 < deadline < math.inf):
            raise ValueError(f"timeout and deadline must be finite seconds > 0, got {timeout!r} and {deadline!r}")
        self.attributes = tuple(a for a in ATTRIBUTES if a in attributes)
        self.languages = tuple(languages)
        self.qps, self.timeout, self.do_not_store = float(qps), float(timeout), bool(do_not_store)
        self.deadline = float(deadline)
        self.url = url or settings.text(URL_VARIABLE) or DEFAULT_URL
        parts = urlsplit(self.url)
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK):
            raise ValueError(f"refusing to send {KEY_VARIABLE} to {parts.scheme}://{parts.hostname}: use https "
                             f"(plain http only to a local test server)")
        attrs = ",".join(a.upper() for a in self.attributes)
        # the whole endpoint keys the cache: two servers on one host (ports, paths) answer differently
        port = parts.port or {"https": 443, "http": 80}[parts.scheme]
        self.version = (f"{parts.scheme}://{parts.hostname}:{port}{parts.path};attrs={attrs}"
                        f";lang={','.join(self.languages) or 'auto'}")

        self._api_key = settings.text(KEY_VARIABLE, "")
        if not self._api_key:
            raise MissingAPIKeyError(f"the perspective scorer needs an API key in the environment variable "
                                     f"{KEY_VARIABLE}; request one at {GET_A_KEY}")
        self._limiter = RateLimiter(self.qps)
        retry = _Retry(total=retries, backoff_factor=backoff_factor, status_forcelist=RETRY_STATUSES,
                       allowed_methods=frozenset({"POST"}), respect_retry_after_header=True, raise_on_status=False)
        retry.limiter = self._limiter
        self._session = requests.Session()
        for scheme in ("https://", "http://"):
            adapter = HTTPAdapter(max_retries=retry)
            adapter.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
            self._session.mount(scheme, adapter)
        self._session.headers["X-Goog-Api-Key"] = self._api_key
        self.served = None if (parts.hostname or "").endswith(".googleapis.com") else served_scorer(self.url)
        if self.served:
            self.version += f";served={self.served}"

    def __repr__(self) -> str:
        return f"PerspectiveScorer(version={self.version!r}, url={self.url!r}, qps={self.qps})"

    def close(self) -> None:
        self._session.close()

    def _redact(self, message: str) -> str:
        for form in {self._api_key, quote(self._api_key, safe="")}:
            message = message.replace(form, "***")
        return message

    def score_batch(self, texts: list[str]) -> BatchScores:
        """Score ``texts`` one request at a time; see the module docstring for failures and caching."""
        values = np.full((len(texts), len(self.attributes)), np.nan)
        errors: list[str | None] = [None] * len(texts)
        keep = [True] * len(texts)
        for i, text in enumerate(texts):
            row, error, keep[i] = self._analyze(text)
            if error is None:
                values[i] = row
            else:
                errors[i] = self._redact(error)
                log.warning("Perspective could not score a text (%s): %s",
                            "cached" if keep[i] else "will retry on a later run", errors[i])
        return BatchScores(values, errors, keep)

    def _analyze(self, text: str) -> tuple[list[float] | None, str | None, bool]:
        """(scores in ``self.attributes`` order, None, True) or (None, error, keep)."""
        body = {"comment": {"text": text}, "requestedAttributes": {a.upper(): {} for a in self.attributes},
                "doNotStore": self.do_not_store}
        if self.languages:
            body["languages"] = list(self.languages)
        self._limiter.wait()
        me = threading.get_ident()
        _DEADLINES[me] = time.monotonic() + self.deadline
        watchdog = threading.Timer(self.deadline, _abort, args=(me,))
        watchdog.daemon = True
        watchdog.start()
        try:
            per_operation = min(self.timeout, self.deadline)
            response = self._session.post(self.url, json=body, timeout=per_operation, allow_redirects=False)
        except requests.RequestException as e:  # connection errors, time-outs after the last retry, the deadline
            if _remaining() <= 0 or "deadline reached" in str(e):
                cause = getattr(e.args[0], "reason", e) if e.args else e  # urllib3's MaxRetryError names its cause
                return None, f"no complete answer within the {self.deadline:g} s deadline per request ({cause})", False
            return None, f"request failed: {e}", False
        finally:
            watchdog.cancel()
            _DEADLINES.pop(me, None)
            _CONNECTIONS.pop(me, None)
        answered_by = response.headers.get(SCORER_HEADER)  # absent (a proxy's or the HTTP layer's error): no news
        if answered_by is not None and answered_by != self.served:
            cause = (f"keyed by {self.served}, what the server named when this scorer was created: the server was "
                     "restarted with another model" if self.served else
                     "keyed without a model, because the server did not name one (or could not be reached) when "
                     "this scorer was created")
            raise EndpointChangedError(f"{self.url} answered as {answered_by}, but this scorer's cached scores are "
                                       f"{cause}. Create the scorer again to key this model's scores")
        if response.status_code != 200:
            return self._http_error(response)
        try:
            scores = response.json()["attributeScores"]
        except (ValueError, KeyError, TypeError) as e:
            return None, f"malformed response ({type(e).__name__}): {self._redact(response.text)[:200]!r}", False
        row, missing = [], []
        for attr in self.attributes:
            try:
                value = scores[attr.upper()]["summaryScore"]["value"]
            except (KeyError, TypeError):
                missing.append(attr.upper())
                continue
            # a JSON number only: "0.5" or true would otherwise pass float() and be cached as a score
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None, f"{attr.upper()} score {value!r} is a JSON {type(value).__name__}, not a number", False
            if not 0.0 <= value <= 1.0:  # NaN fails this too
                return None, f"{attr.upper()} score {value!r} is outside [0, 1]", False
            row.append(float(value))
        if missing:
            return None, f"response lacks attribute(s) {', '.join(missing)}", False
        return row, None, True

    def _http_error(self, response: requests.Response) -> tuple[None, str, bool]:
        """A non-200 response as (None, error, keep), or ``PerspectiveAuthError`` when no text could succeed."""
        try:
            error = response.json()["error"]
            message = f"{error.get('status', '')}: {error.get('message', '')}"
        except (ValueError, KeyError, TypeError, AttributeError):
            message = response.text
        status = response.status_code
        # redact before cutting: a key that starts near the cut would otherwise leak its first characters
        text = self._redact(f"HTTP {status} {message}".strip())[:240]
        # Google answers a bad key with 400 INVALID_ARGUMENT "API key not valid": not a property of the text.
        if status in (401, 403, 404) or (status == 400 and ("API_KEY" in response.text or "API key" in message)):
            raise PerspectiveAuthError(f"Perspective refused the request ({text}); check {KEY_VARIABLE} (get a key "
                                       f"at {GET_A_KEY}) and the endpoint {self.url}")
        retries = getattr(response.raw, "retries", None)
        if status in RETRY_STATUSES and retries is not None:
            text += f" (after {len(retries.history) + 1} attempts)"
        return None, text, status == 400
