"""``toxlib serve``'s limits on what arrives, on 127.0.0.1: a slow but steady upload is answered while silence or a
trickle below the least rate is cut (``serve_guard``); gzip bodies are decoded within the size cap and other
encodings refused (``serve_body``); every command-line value is checked before anything starts."""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import time

import pytest
import requests
from local_server import LengthScorer, Running

from toxlib.scorers.serve import ANALYZE_PATH, ServeConfigError, make_app, serve
from toxlib.scorers.serve_guard import guarded_protocol


def guarded(timeout: float, min_rate: float = 1000.0, **app_options):
    app = make_app(LengthScorer(), cache=False, **app_options)
    return Running(app, http=guarded_protocol(timeout, 64, 8, min_rate=min_rate))


def trickle(port: int, body: bytes, chunk: int, pause: float) -> tuple[bytes, float]:
    """POST ``body`` to analyze in pieces of ``chunk`` bytes with ``pause`` seconds between them; (the raw answer,
    seconds from the first byte to the end of the answer)."""
    head = (f"POST {ANALYZE_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        start = time.monotonic()
        sock.sendall(head)
        with contextlib.suppress(OSError):  # the server may cut the connection while bytes still go out
            for i in range(0, len(body), chunk):
                time.sleep(pause)
                sock.sendall(body[i:i + chunk])
        sock.settimeout(10)
        answer = b""
        with contextlib.suppress(OSError):
            while data := sock.recv(65536):
                answer += data
    return answer, time.monotonic() - start


def analyze_body(text: str) -> bytes:
    return json.dumps({"comment": {"text": text}, "requestedAttributes": {"TOXICITY": {}}}).encode()


def test_an_upload_that_keeps_coming_is_answered_however_long_it_takes():
    """More than twice the time-out in all, never silent for long, at 5,000 bytes/s (the least rate is 1,000): a
    deadline for the whole request cut this off with 408 after 0.6 s."""
    body = analyze_body("y" * 7000)
    with guarded(timeout=0.6) as running:
        answer, seconds = trickle(running.port, body, chunk=500, pause=0.1)
    assert seconds > 1.3 and answer.startswith(b"HTTP/1.1 200"), answer[:300]


def test_a_trickle_below_the_least_rate_is_cut_although_it_is_never_silent():
    body = analyze_body("y" * 2000)  # 100 bytes/s with pauses of 0.1 s against a least rate of 1,000 bytes/s
    with guarded(timeout=0.4, min_rate=1000) as running:
        answer, seconds = trickle(running.port, body, chunk=10, pause=0.1)
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and seconds < 3, (answer[:300], seconds)
    assert "too slowly" in json.loads(payload)["error"]["message"]


def test_silence_as_long_as_the_time_out_is_cut_with_a_message_that_says_so():
    with guarded(timeout=0.4) as running:
        answer, seconds = trickle(running.port, analyze_body("hello"), chunk=20, pause=1.0)
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and seconds < 3.5
    assert "No bytes of the request arrived for 0.4 s" in json.loads(payload)["error"]["message"]


# --- Content-Encoding ---

@pytest.fixture(scope="module")
def small_server():
    with Running(make_app(LengthScorer(), max_body=4096, cache=False)) as running:
        yield running


def post(running, body: bytes, encoding: str | None = None) -> requests.Response:
    headers = {"Content-Type": "application/json", **({"Content-Encoding": encoding} if encoding else {})}
    return requests.post(running.url, data=body, headers=headers, timeout=10)


def test_a_gzip_body_is_decoded_and_answered_as_the_plain_one(small_server):
    body = analyze_body("hello there")
    plain, zipped = post(small_server, body), post(small_server, gzip.compress(body), "gzip")
    assert zipped.status_code == 200 and zipped.json() == plain.json()


def test_a_gzip_body_that_inflates_beyond_the_cap_is_refused_413(small_server):
    bomb = gzip.compress(b" " * 3_000_000)  # 3 KB that inflate to 3 MB; the cap is 4,096 bytes
    assert len(bomb) < 4096
    reply = post(small_server, bomb, "gzip")
    assert reply.status_code == 413 and "inflates beyond the limit: 4096" in reply.json()["error"]["message"]


@pytest.mark.parametrize("body,encoding,code,message", [
    (gzip.compress(analyze_body("hi")), "br", 415, "Content-Encoding 'br' is not supported"),
    (gzip.compress(analyze_body("hi")), "gzip, br", 415, "is not supported"),
    (b"\x1f\x8b not gzip at all", "gzip", 400, "could not be decoded"),
    (gzip.compress(analyze_body("hi"))[:-6], "gzip", 400, "ends before its gzip stream does"),
], ids=["brotli", "two-encodings", "damaged", "truncated"])
def test_other_encodings_and_broken_gzip_are_refused_with_a_clear_error(small_server, body, encoding, code, message):
    reply = post(small_server, body, encoding)
    assert reply.status_code == code and message in reply.json()["error"]["message"], reply.text


# --- command-line values ---

@pytest.mark.parametrize("argv,flag,value", [
    (["--request-timeout", "0"], "--request-timeout", "0"),
    (["--request-timeout", "inf"], "--request-timeout", "inf"),
    (["--max-connections", "0"], "--max-connections", "0"),
    (["--max-per-client", "-1"], "--max-per-client", "-1"),
    (["--port", "99999"], "--port", "99999"),
    (["--port", "http"], "--port", "http"),
    (["--max-waiting", "0"], "--max-waiting", "0"),
    (["--max-body", "10"], "--max-body", "10"),
    (["--min-upload-rate", "-5"], "--min-upload-rate", "-5"),
])
def test_every_serve_value_out_of_range_stops_argparse_with_the_flag_value_and_range(argv, flag, value, capsys):
    from toxlib.cli import parser

    with pytest.raises(SystemExit) as stop:
        parser().parse_args(["serve", *argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"argument {flag}: " in err and value in err and "give " in err and "Traceback" not in err


def test_the_defaults_pass_their_own_checks():
    from toxlib.cli import parser
    from toxlib.scorers.serve_guard import MIN_RATE

    args = parser().parse_args(["serve"])
    assert (args.port, args.request_timeout, args.max_waiting, args.min_upload_rate) == (8080, 5.0, 64, MIN_RATE)


def test_the_library_refuses_bounds_that_would_refuse_every_request():
    with pytest.raises(ValueError, match="max_waiting"):
        make_app(LengthScorer(), max_waiting=0)
    with pytest.raises(ValueError, match="request_timeout"):
        guarded_protocol(0)


def test_a_port_in_use_is_an_error_naming_the_fix_before_the_scorer_loads():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ServeConfigError, match=f"port {port}: .*choose another --port"):
            serve(port=port, scorer="no-such-scorer-is-loaded")
