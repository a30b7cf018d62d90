"""Connection guard for ``toxlib serve``: slow or idle clients cannot shut normal requests out.

uvicorn times out idle keep-alive connections but not a connection that sends its request slowly (a header byte a
second: "slowloris"), and its only bound, ``limit_concurrency``, counts those connections too, so about 130 of them
made every normal request get uvicorn's plain-text ``503``. This module replaces that bound with one on what an
attacker can hold cheaply: connections that have not yet sent a complete request (headers and body), called
*waiting* here.

- A waiting connection is cut when it falls silent or too slow: answered ``408`` in Google's JSON error shape and
  closed when no byte of its request has arrived for ``request_timeout`` seconds (silence), or when it has sent
  fewer than ``min_rate`` bytes per second on average once its first ``request_timeout`` seconds are spent
  (``received < min_rate * (elapsed - request_timeout)``, the rule of Apache's mod_reqtimeout ``MinRate``). So a
  request whose bytes keep coming at ``min_rate`` or faster, with no pause as long as ``request_timeout``, is never
  cut, however large (a 6.5 MB batch at 0.5 MB/s takes 13 s and is answered), while one that trickles a byte now
  and then ("slowloris") is cut about ``request_timeout`` seconds after it connects. A new connection waits from
  the moment it connects; a keep-alive connection between requests is idle, not waiting (uvicorn closes it
  silently after ``timeout_keep_alive``), and waits again from the first byte of its next request. While the
  server itself has stopped reading (uvicorn's flow control, when the app has not yet taken the bytes already
  read), the silence is the server's, and the clocks stop.
- At most ``max_waiting_per_client`` waiting connections per client address and ``max_waiting`` in all: a new
  connection beyond either bound closes the *oldest* waiting one (of that address, or of all), answered ``503``
  with ``Retry-After``, provided that one has waited at least ``grace`` seconds. Evicting the old rather than
  refusing the new is what keeps normal clients served during a flood: their requests arrive whole right after
  they connect, while a flood's connections age. The grace matters when connections arrive faster than the loop
  reads them: without it, a burst of newcomers evicted each other, a normal client's among them, before its
  request was read. So the per-client bound may be passed for up to ``grace`` seconds; the global bound may not:
  when it is reached and every waiting connection is younger than the grace, the newcomer itself gets the 503.
- A connection whose request is complete is no longer waiting: it is being answered, and the scorer's own queue
  bound (``max_waiting`` requests of ``make_app``: ``429`` with ``Retry-After``) limits those.

Written by hand because uvicorn has no request-read time-out or per-address bound (its ``timeout_keep_alive`` only
covers the time between requests), and a reverse proxy is not something a local emulation should require. It
subclasses uvicorn's h11 protocol and uses only its ``connection_made``, ``data_received``,
``on_response_complete`` and ``connection_lost`` hooks (checked against uvicorn 0.54).
"""

from __future__ import annotations

import json
import logging
import math

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

#: h11 states of the client's side in which its request is complete (or the connection is over); a complete request
#: with an Upgrade header (or a CONNECT) ends in MIGHT_SWITCH_PROTOCOL
_REQUEST_DONE = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR, h11.MIGHT_SWITCH_PROTOCOL, h11.SWITCHED_PROTOCOL)


def raw_error(code: int, phrase: str, status: str, message: str, retry_after: int | None = None) -> bytes:
    """A whole HTTP/1.1 response (``Connection: close``) carrying Google's JSON error shape, for answering a
    connection outside the ASGI app (a time-out or an eviction)."""
    body = json.dumps({"error": {"code": code, "message": message, "status": status}}).encode()
    head = [f"HTTP/1.1 {code} {phrase}", "Content-Type: application/json; charset=UTF-8",
            f"Content-Length: {len(body)}", "Connection: close"]
    if retry_after is not None:
        head.append(f"Retry-After: {retry_after}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


#: Default least average upload rate, bytes per second (``min_rate``): 8 kbit/s, far below any working network.
MIN_RATE = 1000.0


def guarded_protocol(request_timeout: float = 5.0, max_waiting: int = 512, max_waiting_per_client: int = 32,
                     min_rate: float = MIN_RATE) -> type[H11Protocol]:
    """The protocol class to give ``uvicorn.Config(http=...)``, with the bounds above (``grace``: a tenth of the
    time-out, at most 0.5 s). ValueError when a bound is out of range (time-out and rate > 0 and finite, counts
    >= 1)."""
    finite = all(math.isfinite(v) and v > 0 for v in (request_timeout, min_rate))
    if not (finite and max_waiting >= 1 and max_waiting_per_client >= 1):
        raise ValueError(f"request_timeout ({request_timeout}) and min_rate ({min_rate}) must be finite numbers > 0, "
                         f"max_waiting ({max_waiting}) and max_waiting_per_client ({max_waiting_per_client}) >= 1")
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {
        "request_timeout": float(request_timeout), "grace": min(0.5, request_timeout / 10),
        "max_waiting": int(max_waiting), "max_waiting_per_client": int(max_waiting_per_client),
        "min_rate": float(min_rate)})


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a silence time-out and a least rate for incomplete requests, and bounds on waiting
    connections (module docstring). Make one with ``guarded_protocol``."""

    request_timeout = 5.0
    grace = 0.5
    max_waiting = 512
    max_waiting_per_client = 32
    min_rate = MIN_RATE

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._timer = None
        self._address = self.client[0] if self.client else ""
        self._start_waiting()
        self._evict_beyond_bounds()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in _REQUEST_DONE:
            self._stop_waiting()
        elif self._timer is None and not self.transport.is_closing():
            self._start_waiting()  # the first bytes of the next request on a keep-alive connection
            self._received = len(data)
            self._evict_beyond_bounds()
        else:  # progress: the timer, when it fires, works out the deadline these counts give
            self._received += len(data)
            self._last = self.loop.time()

    def connection_lost(self, exc) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    # waiting connections, oldest first, shared by every connection of the server
    def _waiting(self) -> dict:
        registry = getattr(self.server_state, "toxlib_waiting", None)
        if registry is None:
            registry = self.server_state.toxlib_waiting = {}
        return registry

    def _start_waiting(self) -> None:
        self._stop_waiting()
        self._waiting()[self] = self._address
        self._since = self._last = self.loop.time()
        self._received = 0
        self._timer = self.loop.call_later(self.request_timeout, self._timed_out)

    def _stop_waiting(self) -> None:
        self._waiting().pop(self, None)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _deadlines(self) -> tuple[float, float]:
        """(end of the allowed silence, time by which the bytes received fall below the least rate)."""
        return (self._last + self.request_timeout,
                self._since + self.request_timeout + self._received / self.min_rate)

    def _timed_out(self) -> None:
        """The timer: cut the connection when a deadline has passed, else wait for the earlier one."""
        self._timer = None
        now = self.loop.time()
        if self.flow.read_paused:  # the server is not reading: the client is not the one being slow
            self._since += now - self._last
            self._last = now
        silence, rate = self._deadlines()
        if min(silence, rate) > now:
            self._timer = self.loop.call_at(min(silence, rate), self._timed_out)
            return
        if silence <= rate:
            message = f"No bytes of the request arrived for {self.request_timeout:g} s; the request was cut off."
        else:
            message = (f"The request arrived too slowly: {self._received} bytes in {now - self._since:.1f} s, below "
                       f"the least rate of {self.min_rate:g} bytes/s after the first {self.request_timeout:g} s.")
        self._close(408, "Request Timeout", "DEADLINE_EXCEEDED", message)

    def _evict_beyond_bounds(self) -> None:
        waiting = self._waiting()
        old_enough = self.loop.time() - self.grace
        mine = [proto for proto, address in waiting.items() if address == self._address]
        if len(mine) > self.max_waiting_per_client and mine[0]._since <= old_enough:
            mine[0]._close(503, "Service Unavailable", "UNAVAILABLE",
                           f"Too many incomplete requests from {self._address} "
                           f"(limit {self.max_waiting_per_client}); retry later.", retry_after=1)
        if len(waiting) > self.max_waiting:
            oldest = next(iter(waiting))
            (oldest if oldest._since <= old_enough else self)._close(
                503, "Service Unavailable", "UNAVAILABLE",
                f"Too many incomplete requests (limit {self.max_waiting}); retry later.", retry_after=1)

    def _close(self, code: int, phrase: str, status: str, message: str, retry_after: int | None = None) -> None:
        """Answer (when no response is under way on this connection) and close."""
        self._stop_waiting()
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started or self.cycle.response_complete:
            self.transport.write(raw_error(code, phrase, status, message, retry_after))
        log.info("closing a connection from %s: %s", self._address, message)
        self.transport.close()
