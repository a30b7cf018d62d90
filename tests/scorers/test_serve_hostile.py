"""``toxlib serve`` against hostile clients, on 127.0.0.1: a request without a key is refused before its body is read,
a batch is refused at the part that breaks a rule (too many, or a keyless first part) while it arrives, nothing a
client sends holds up the others, and the wire's small rules (one gzip member, one Content-Encoding, keys as UTF-8 in
the header and the query alike)."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time

import pytest
import requests
from local_server import LengthScorer, Running

from toxlib.scorers.serve import ANALYZE_PATH, make_app
from toxlib.scorers.serve_access import load_keys

KEY = "key-one"
BODY = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
BOUNDARY = "===============7330845974216740156=="
BATCH_TYPE = f'multipart/mixed; boundary="{BOUNDARY}"'


@pytest.fixture(scope="module")
def keyed():
    with Running(make_app(LengthScorer(), cache=False, api_keys=frozenset({KEY, "clé-deux"}))) as running:
        yield running


def base(running) -> str:
    return running.url.removesuffix(ANALYZE_PATH)


def part(i: int, body: bytes, key: str | None = KEY) -> bytes:
    query = f"?key={key}&alt=json" if key else "?alt=json"
    return (f"--{BOUNDARY}\nContent-Type: application/http\nContent-ID: <p+{i}>\n\nPOST {ANALYZE_PATH}{query} "
            f"HTTP/1.1\nContent-Type: application/json\ncontent-length: {len(body)}\n\n").encode() + body + b"\n"


def empty_parts(n: int) -> bytes:
    """The issue's attack: ``n`` empty parts (no request line, no key) between delimiters of boundary "b"."""
    return b"--b\r\n\r\n" * n + b"--b--\r\n"


def raw_exchange(port: int, head: str, body: bytes = b"", wait: float = 5.0) -> tuple[bytes, float]:
    """Send ``head`` (request line and headers) and ``body``, then keep the connection open without sending the
    rest; (what the server answered, seconds until it answered)."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        start = time.monotonic()
        sock.sendall(head.encode() + b"\r\n" + body)
        sock.settimeout(wait)
        answer = b""
        try:
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                data = sock.recv(65536)
                if not data:
                    break
                answer += data
        except TimeoutError:
            pass
        return answer, time.monotonic() - start


# --- refused from what arrives first ---

def test_an_analyze_request_without_a_key_is_refused_before_its_body_arrives(keyed):
    head = (f"POST {ANALYZE_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: 60000\r\n")  # the body never comes
    answer, seconds = raw_exchange(keyed.port, head)
    assert answer.startswith(b"HTTP/1.1 403") and seconds < 1.0, (answer[:200], seconds)
    assert b"missing a valid API key" in answer


def test_a_keyless_batch_is_refused_at_its_first_part_before_the_rest_arrives(keyed):
    first = part(0, json.dumps(BODY).encode(), key=None)
    head = (f"POST /batch HTTP/1.1\r\nHost: x\r\nContent-Type: {BATCH_TYPE}\r\n"
            f"Content-Length: {len(first) + 5_000_000}\r\n")  # 5 MB more are promised, none sent
    answer, seconds = raw_exchange(keyed.port, head, first)
    assert answer.startswith(b"HTTP/1.1 403") and seconds < 1.0, (answer[:200], seconds)


def test_a_batch_is_refused_at_the_part_past_the_limit_before_the_rest_arrives(keyed):
    parts = b"".join(part(i, json.dumps(BODY).encode()) for i in range(102))
    head = (f"POST /batch?key={KEY} HTTP/1.1\r\nHost: x\r\nContent-Type: {BATCH_TYPE}\r\n"
            f"Content-Length: {len(parts) + 5_000_000}\r\n")
    answer, seconds = raw_exchange(keyed.port, head, parts)
    assert answer.startswith(b"HTTP/1.1 400") and seconds < 1.0, (answer[:200], seconds)
    assert b"Too many requests in one batch: more than 100, the limit is 100" in answer


def test_nested_multiparts_count_towards_the_part_limit(keyed):
    nested = (f"--{BOUNDARY}\nContent-Type: multipart/mixed; boundary=in\n\n" + "--in\n\n" * 500 + "--in--\n"
              f"--{BOUNDARY}--\n").encode()
    reply = requests.post(base(keyed) + "/batch", data=nested, params={"key": KEY},
                          headers={"Content-Type": BATCH_TYPE}, timeout=10)
    assert reply.status_code == 400 and "Too many requests in one batch" in reply.json()["error"]["message"]


# --- nothing one client sends holds up the others ---

def test_health_and_a_one_text_request_answer_within_200_ms_while_hostile_batches_arrive(keyed):
    bomb = gzip.compress(empty_parts(900_000), 9)  # the 9 KB that inflate to 6.3 MB of parts
    assert len(bomb) < 10_000 and len(gzip.decompress(bomb)) > 6_000_000
    padding = "p" * 40_000
    big = b"".join(part(i, json.dumps({**BODY, "comment": {"text": "t" * 20_000}, "pad": padding}).encode())
                   for i in range(100)) + f"--{BOUNDARY}--\n".encode()
    assert len(big) > 6_000_000
    stop, answers = threading.Event(), {"bomb": set(), "big": set()}

    def send(name, body, headers, params):
        with requests.Session() as session:
            while not stop.is_set():
                reply = session.post(base(keyed) + "/batch", data=body, headers=headers, params=params, timeout=30)
                answers[name].add((reply.status_code, reply.text.count("HTTP/1.1 200")))

    senders = [threading.Thread(target=send, args=("bomb", bomb, {"Content-Type": "multipart/mixed; boundary=b",
                                                                   "Content-Encoding": "gzip"}, {})),
               threading.Thread(target=send, args=("big", big, {"Content-Type": BATCH_TYPE}, {"key": KEY}))]
    for sender in senders:
        sender.start()
    latencies = []
    try:
        time.sleep(0.5)
        with requests.Session() as probe:
            for _ in range(15):
                for call in (lambda: probe.get(base(keyed) + "/healthz", timeout=5),
                             lambda: probe.post(keyed.url, json=BODY, params={"key": KEY}, timeout=5)):
                    start = time.monotonic()
                    assert call().status_code == 200
                    latencies.append(time.monotonic() - start)
                time.sleep(0.1)
    finally:
        stop.set()
        for sender in senders:
            sender.join(60)
    assert max(latencies) < 0.2, sorted(latencies)[-5:]
    assert answers["bomb"] == {(403, 0)}  # refused at its first part: no key there
    assert answers["big"] and all(status == 200 and ok == 100 for status, ok in answers["big"]), answers["big"]


# --- the wire ---

def test_a_non_ascii_key_is_the_same_key_in_the_header_and_in_the_query(keyed):
    in_query = requests.post(keyed.url, json=BODY, params={"key": "clé-deux"}, timeout=10)
    in_header = requests.post(keyed.url, json=BODY, headers={"X-Goog-Api-Key": "clé-deux".encode()}, timeout=10)
    assert in_query.status_code == 200 and in_header.status_code == 200, (in_query.text, in_header.text)
    latin1 = requests.post(keyed.url, json=BODY, headers={"X-Goog-Api-Key": "clé-deux".encode("latin-1")},
                           timeout=10)
    assert latin1.status_code == 403  # other bytes: another key


def test_a_non_ascii_key_in_the_key_file_is_read_with_a_warning(tmp_path):
    listed = tmp_path / "keys.txt"
    listed.write_text("plain\nclé-deux\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="1 API key\\(s\\) that are not ASCII"):
        assert load_keys(listed) == {"plain", "clé-deux"}


@pytest.mark.parametrize("tail", [gzip.compress(b"{}"), b"trailing bytes"], ids=["second-member", "trailing"])
def test_a_gzip_body_with_anything_after_its_stream_is_refused(keyed, tail):
    body = gzip.compress(json.dumps(BODY).encode()) + tail
    reply = requests.post(keyed.url, data=body, params={"key": KEY},
                          headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}, timeout=10)
    assert reply.status_code == 400 and "after the end of its gzip stream" in reply.json()["error"]["message"]


def test_content_encoding_given_twice_is_415_not_invalid_json(keyed):
    body = gzip.compress(gzip.compress(json.dumps(BODY).encode()))
    head = (f"POST {ANALYZE_PATH}?key={KEY} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Encoding: gzip\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}\r\n")
    answer, _ = raw_exchange(keyed.port, head, body)
    assert answer.startswith(b"HTTP/1.1 415"), answer[:300]
    assert b"Content-Encoding is given 2 times" in answer
