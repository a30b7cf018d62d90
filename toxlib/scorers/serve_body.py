"""Reading a request body for ``toxlib serve``: its size bounded, gzip decoded off the event loop, other encodings
refused, and a watcher (``serve_batch.PartScanner``) told of every decoded byte as it arrives.

``read_body(request, limit, watch=None)`` returns the body as the app should parse it, or raises ``BadRequest``:

- 413 when the body as sent (the ``Content-Length`` it declares, or the bytes that arrive) exceeds ``limit``;
- with ``Content-Encoding: gzip`` (or ``x-gzip``), the body inflated as it arrives, and 413 as soon as the inflated
  bytes exceed ``limit`` (a small body that inflates to gigabytes, a "zip bomb", costs at most ``limit`` bytes of
  memory); 400 when the gzip stream is damaged, ends early, or is followed by anything (a second gzip member, or
  trailing bytes: RFC 1952 allows members one after another, Perspective's front end and this server take one);
- 415 for any other encoding (``deflate``, ``br``), for a list of several (``gzip, gzip``) and for the header given
  more than once: one encoding, once;
- 400 when the client leaves before the body is complete (or the connection guard cut it off);
- whatever ``watch(decoded_bytes)`` raises, as soon as the bytes that make it raise have arrived: the batch route
  counts parts and checks the first part's key there, so a batch over the part limit, or one with no key, is
  refused before the rest of it is read.

Inflating and watching run in a worker thread (``anyio.to_thread``), one chunk at a time, so a body that is costly to
decode never holds the event loop; a plain body with no watcher is only appended to. Bytes go through
``zlib.decompressobj`` with ``max_length``, so no step inflates more than the limit allows.
"""

from __future__ import annotations

import zlib

from anyio import to_thread
from starlette.requests import ClientDisconnect, Request

#: Content-Encoding values read as "not encoded"
IDENTITY = ("", "identity")
#: Content-Encoding values inflated as gzip
GZIP = ("gzip", "x-gzip")


class BadRequest(Exception):
    """A request Perspective would refuse: (HTTP code, message, Perspective errorType)."""

    def __init__(self, message: str, error_type: str | None = None, code: int = 400):
        super().__init__(message)
        self.code, self.error_type = code, error_type


def _too_large(limit: int, inflated: bool = False) -> BadRequest:
    what = "The gzip-encoded request inflates beyond" if inflated else "Request payload size exceeds"
    return BadRequest(f"{what} the limit: {limit} bytes.", code=413)


def content_encoding(request: Request) -> str:
    """The request's ``Content-Encoding``, lower-case: "" (none), "identity" or a gzip name; ``BadRequest`` 415 for
    anything else, for several encodings, and for the header sent more than once."""
    given = request.headers.getlist("content-encoding")
    if len(given) > 1:
        raise BadRequest(f"Content-Encoding is given {len(given)} times; send it once, as gzip or not at all.",
                         code=415)
    encoding = (given[0] if given else "").strip().lower()
    if encoding in IDENTITY or encoding in GZIP:
        return encoding
    raise BadRequest(f"Content-Encoding {encoding!r} is not supported: send the body unencoded or with "
                     "Content-Encoding: gzip (one encoding, applied once).", code=415)


class BodyDecoder:
    """The synchronous half of ``read_body``: ``feed(chunk)`` for each chunk as sent, ``finish()`` for the decoded
    body. Raises ``BadRequest`` as the module docstring says, from the first chunk that breaks a rule."""

    def __init__(self, limit: int, gzipped: bool, watch=None):
        self.limit, self.watch = limit, watch
        self.inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS) if gzipped else None
        self.sent, self.body = 0, bytearray()

    def feed(self, chunk: bytes) -> None:
        self.sent += len(chunk)
        if self.sent > self.limit:
            raise _too_large(self.limit)
        start = len(self.body)
        if self.inflate is None:
            self.body += chunk
        else:
            self._inflate(chunk)
        if self.watch is not None and len(self.body) > start:
            self.watch(bytes(self.body[start:]))

    def _inflate(self, chunk: bytes) -> None:
        inflate, limit = self.inflate, self.limit
        if inflate.eof:
            if chunk:
                raise self._after_the_stream()
            return
        try:  # at most one byte past the limit per step: enough to know it is passed
            self.body += inflate.decompress(chunk, limit + 1 - len(self.body))
            while inflate.unconsumed_tail and len(self.body) <= limit:
                self.body += inflate.decompress(inflate.unconsumed_tail, limit + 1 - len(self.body))
        except zlib.error as exc:
            raise BadRequest(f"The gzip-encoded request body could not be decoded ({exc}); send valid gzip "
                             "or an unencoded body.") from None
        if len(self.body) > limit:
            raise _too_large(limit, inflated=True)
        if inflate.eof and inflate.unused_data:
            raise self._after_the_stream()

    @staticmethod
    def _after_the_stream() -> BadRequest:
        return BadRequest("The gzip-encoded request body holds bytes after the end of its gzip stream (a second "
                          "gzip member, or trailing bytes); send exactly one gzip stream.")

    def finish(self) -> bytes:
        if self.inflate is not None and not self.inflate.eof:
            raise BadRequest("The gzip-encoded request body ends before its gzip stream does; send the whole "
                             "stream.")
        return bytes(self.body)


async def read_body(request: Request, limit: int, watch=None) -> bytes:
    """The request's body, decoded, at most ``limit`` bytes before and after decoding; ``watch`` sees the decoded
    bytes as they arrive (module docstring)."""
    encoding = content_encoding(request)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    decoder = BodyDecoder(limit, encoding in GZIP, watch)
    off_loop = decoder.inflate is not None or watch is not None
    try:
        async for chunk in request.stream():
            if off_loop and chunk:
                await to_thread.run_sync(decoder.feed, chunk)
            else:
                decoder.feed(chunk)
    except ClientDisconnect:  # the client left, or the guard closed a request that took too long
        raise BadRequest("The client disconnected before the request was complete.") from None
    return decoder.finish()
