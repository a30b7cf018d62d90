"""Reading a request body for ``toxlib serve``: its size bounded, gzip decoded, other encodings refused.

``read_body(request, limit)`` returns the body as the app should parse it, or raises ``BadRequest``:

- 413 when the body as sent (the ``Content-Length`` it declares, or the bytes that arrive) exceeds ``limit``;
- with ``Content-Encoding: gzip`` (or ``x-gzip``), the body inflated as it arrives, and 413 as soon as the inflated
  bytes exceed ``limit`` (a small body that inflates to gigabytes, a "zip bomb", costs at most ``limit`` bytes of
  memory); 400 when the gzip stream is damaged or ends early;
- 415 for any other encoding (``deflate``, ``br``, a list of several), naming the encodings accepted;
- 400 when the client leaves before the body is complete (or the connection guard cut it off).

Bytes go through ``zlib.decompressobj`` with ``max_length``, so no step inflates more than the limit allows.
"""

from __future__ import annotations

import zlib

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
    anything else."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding in IDENTITY or encoding in GZIP:
        return encoding
    raise BadRequest(f"Content-Encoding {encoding!r} is not supported: send the body unencoded or with "
                     "Content-Encoding: gzip.", code=415)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, decoded, at most ``limit`` bytes before and after decoding (module docstring)."""
    encoding = content_encoding(request)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS) if encoding in GZIP else None
    sent, body = 0, bytearray()
    try:
        async for chunk in request.stream():
            sent += len(chunk)
            if sent > limit:
                raise _too_large(limit)
            if inflate is None:
                body += chunk
                continue
            try:  # at most one byte past the limit per step: enough to know it is passed
                body += inflate.decompress(chunk, limit + 1 - len(body))
                while inflate.unconsumed_tail and len(body) <= limit:
                    body += inflate.decompress(inflate.unconsumed_tail, limit + 1 - len(body))
            except zlib.error as exc:
                raise BadRequest(f"The gzip-encoded request body could not be decoded ({exc}); send valid gzip "
                                 "or an unencoded body.") from None
            if len(body) > limit:
                raise _too_large(limit, inflated=True)
    except ClientDisconnect:  # the client left, or the guard closed a request that took too long
        raise BadRequest("The client disconnected before the request was complete.") from None
    if inflate is not None and not inflate.eof:
        raise BadRequest("The gzip-encoded request body ends before its gzip stream does; send the whole stream.")
    return bytes(body)
