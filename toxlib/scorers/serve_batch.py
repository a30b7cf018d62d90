"""Google's batch format as ``toxlib serve`` reads and answers it: a multipart/mixed body of application/http parts,
each an analyze request (``googleapiclient``'s ``BatchHttpRequest`` sends this; so do the RealToxicityPrompts
scripts and HELM).

- ``PartScanner``: watches the body as it arrives (``serve_body.read_body``'s ``watch``), so a batch is refused by
  what its first bytes show, before the rest is read or parsed: more than ``max_parts`` parts (counted as lines
  that start with ``--``, which in a batch are its delimiters: nested multiparts count too, and a JSON body has no
  line of its own that starts so); and, on a server with keys when the batch itself carries none, a first part
  whose request line has no listed key (Google's client puts the key in each part's URL, so that is where a
  keyless batch must show one).
- ``split_batch``: the parts of a whole, scanned body, with the standard library's MIME parser.
- ``batch_response``: the multipart/mixed answer, one application/http part per request.

The scanner is written by hand because no MIME parser in the standard library or a kept package counts parts while
bytes arrive (``email.feedparser`` builds every part first; ``python-multipart`` insists on CRLF line ends, which
Google's client does not send).
"""

from __future__ import annotations

import json
import re
import uuid
from email.parser import BytesParser
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from starlette.responses import Response

from toxlib.scorers.serve_body import BadRequest

#: how far into a batch its first part's request line must have come (bytes): far more than any client sends
FIRST_LINE_WITHIN = 16384
_DELIMITER = b"\n--"


def too_many_parts(found: str, max_parts: int) -> BadRequest:
    return BadRequest(f"Too many requests in one batch: {found}, the limit is {max_parts}.")


def part_key(target: str) -> str | None:
    """The ``key`` query parameter of a request target (``/path?key=K&alt=json``), or None."""
    return parse_qs(urlsplit(target).query).get("key", [None])[0]


class PartScanner:
    """Called with each run of decoded body bytes, in order; raises ``BadRequest`` as soon as they show more than
    ``max_parts`` parts (400), or, when ``key_allowed`` is given, a first part whose request line carries no key it
    allows (``missing_key``, 403), or no first request line within ``FIRST_LINE_WITHIN`` bytes (400)."""

    def __init__(self, max_parts: int, key_allowed=None, missing_key: str = ""):
        self.max_parts, self.key_allowed, self.missing_key = max_parts, key_allowed, missing_key
        self.delimiters, self.tail = 0, b"\n"  # a delimiter on the body's first line counts too
        self.head = bytearray() if key_allowed is not None else None

    def __call__(self, data: bytes) -> None:
        if self.head is not None:  # the key first: a keyless batch is refused as such, however many parts it has
            self.head += data[:FIRST_LINE_WITHIN + 1 - len(self.head)]
            self._check_first_part()
        joined = self.tail + data
        self.delimiters += joined.count(_DELIMITER)
        self.tail = joined[-(len(_DELIMITER) - 1):]
        if self.delimiters > self.max_parts + 1:  # the closing delimiter is the one more
            raise too_many_parts(f"more than {self.max_parts}", self.max_parts)

    def _check_first_part(self) -> None:
        line = first_request_line(bytes(self.head))
        if line is None:
            if len(self.head) > FIRST_LINE_WITHIN:
                raise BadRequest(f"The batch's first part has no HTTP request line within its first "
                                 f"{FIRST_LINE_WITHIN} bytes.")
            return
        fields = line.decode("latin-1").split()
        if len(fields) < 2 or not self.key_allowed(part_key(fields[1])):
            raise BadRequest(self.missing_key, code=403)
        self.head = None  # decided: the other parts are judged one by one once the batch is whole


def first_request_line(head: bytes) -> bytes | None:
    """The first part's HTTP request line (the first line after the part's headers), or None until it is whole."""
    if head.startswith(b"--"):
        start = 0
    elif (at := head.find(_DELIMITER)) >= 0:
        start = at + 1
    else:
        return None
    line_end = head.find(b"\n", start)  # the delimiter line's end: a blank line may follow it at once (no headers)
    blank = re.compile(rb"\n\r?\n").search(head, line_end) if line_end >= 0 else None
    if blank is None:
        return None
    end = head.find(b"\n", blank.end())
    return head[blank.end():end].rstrip(b"\r") if end >= 0 else None


def split_batch(content_type: str, body: bytes, max_parts: int) -> list[tuple[str, str, str, str | None, bytes]]:
    """The parts of a Google batch request (multipart/mixed of application/http, as googleapiclient's
    ``BatchHttpRequest`` sends): [(Content-ID, method, path, API key of its ``?key=`` or None, body)];
    ``BadRequest`` when the whole is not one. A part without an HTTP request line comes back with method "" and the
    problem as its body (a 400 for that part). Parse a body ``PartScanner`` has seen: it bounds the parts."""
    if not content_type.startswith("multipart/mixed"):
        raise BadRequest("A batch request must be multipart/mixed (Google API batch format).")
    message = BytesParser().parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    parts = message.get_payload() if message.is_multipart() else None
    if not parts:
        raise BadRequest("The batch request has no parts.")
    if len(parts) > max_parts:
        raise too_many_parts(str(len(parts)), max_parts)
    out = []
    for part in parts:
        payload = part.get_payload(decode=True) or b""
        request_line, _, rest = payload.partition(b"\n")
        fields = request_line.decode("latin-1").split()
        content_id = re.sub(r"\r?\n(?=[ \t])", "", str(part.get("Content-ID", "")))  # unfold a long header
        if len(fields) < 2:
            out.append((content_id, "", "", None, b"This batch part does not hold an HTTP request line."))
            continue
        inner = re.split(rb"\r?\n\r?\n", rest, maxsplit=1)
        out.append((content_id, fields[0], urlsplit(fields[1]).path, part_key(fields[1]),
                    inner[1] if len(inner) > 1 else b""))
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
