"""The local Perspective-compatible endpoint (toxlib.scorers.serve) on 127.0.0.1: toxlib's own Perspective
client pointed at it gives the scores of direct scoring; Perspective's response and error shapes; bounds."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import socket
import threading
import time

import numpy as np
import pytest
import requests
from local_server import LengthScorer, Running, free_port, google_batch

from toxlib.scorers.base import BatchScores
from toxlib.scorers.perspective import PerspectiveScorer
from toxlib.scorers.serve import ANALYZE_PATH, MAX_TEXT_BYTES, make_app


@pytest.fixture(scope="module")
def length_server():
    with Running(make_app(LengthScorer(), max_body=4096, cache=False)) as running:
        yield running


@pytest.mark.models
def test_perspective_client_round_trip_equals_direct_distilled_scoring(monkeypatch):
    from toxlib.scorers.distilled import DistilledScorer

    scorer = DistilledScorer()
    texts = ["You are a wonderful person.", "Shut up, you stupid idiot.", "The cat sat on the mat.",
             "what the hell is wrong with you people"]
    attributes = list(scorer.attributes)
    # the server scores one text per request, so the direct reference is one text per call too (in a batch, padding
    # moves scores by float rounding)
    direct = np.vstack([scorer.score([t], cache=False, progress=False)[attributes].to_numpy() for t in texts])
    batched = scorer.score(texts, cache=False, progress=False)[attributes].to_numpy()
    monkeypatch.setenv("PERSPECTIVE_API_KEY", "any-key-works-locally")
    with Running(make_app(scorer, cache=False)) as running:
        client = PerspectiveScorer(url=running.url, qps=math.inf)
        served = client.score(texts, cache=False, progress=False)
    assert served["error"].isna().all(), served["error"].tolist()
    assert np.array_equal(served[attributes].to_numpy(), direct)  # exact: JSON floats round-trip
    assert np.allclose(served[attributes].to_numpy(), batched, atol=1e-4)


def test_response_has_perspectives_shape_and_honours_score_threshold(length_server):
    body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}, "INSULT": {"scoreThreshold": 0.9}},
            "languages": ["en"], "doNotStore": True, "clientToken": "abc"}
    reply = requests.post(length_server.url, json=body, params={"key": "k"}, timeout=10)
    assert reply.status_code == 200
    out = reply.json()
    # "hello": 5 characters -> TOXICITY 0.5; INSULT 5/7 = 0.714 is below its threshold 0.9 and left out
    assert out == {"attributeScores": {"TOXICITY": {
        "summaryScore": {"value": 0.5, "type": "PROBABILITY"},
        "spanScores": [{"begin": 0, "end": 5, "score": {"value": 0.5, "type": "PROBABILITY"}}]}},
        "languages": ["en"], "detectedLanguages": ["en"], "clientToken": "abc"}


@pytest.mark.parametrize("body,code,error_type,message", [
    (b"{not json", 400, None, "Invalid JSON payload"),
    (b"[1, 2]", 400, None, "JSON object"),
    (json.dumps({"comment": {"text": "  "}, "requestedAttributes": {"TOXICITY": {}}}).encode(), 400, "COMMENT_EMPTY",
     "non-empty"),
    (json.dumps({"comment": {"text": 3}, "requestedAttributes": {"TOXICITY": {}}}).encode(), 400, "COMMENT_EMPTY",
     "non-empty"),
    (json.dumps({"comment": {"text": "hi"}, "requestedAttributes": {}}).encode(), 400, "NO_REQUESTED_ATTRIBUTES",
     "at least one attribute"),
    (json.dumps({"comment": {"text": "hi"}, "requestedAttributes": {"THREAT": {}}}).encode(), 400,
     "ATTRIBUTE_NOT_SUPPORTED", "THREAT is not supported"),
    (json.dumps({"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {}}, "languages": ["de"]}).encode(),
     400, "LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE", "does not support request languages: de"),
    (json.dumps({"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {"scoreThreshold": 2}}}).encode(),
     400, None, "scoreThreshold"),
])
def test_malformed_or_unsupported_requests_get_perspectives_error_shape(length_server, body, code, error_type,
                                                                         message):
    reply = requests.post(length_server.url, data=body, headers={"Content-Type": "application/json"}, timeout=10)
    assert reply.status_code == code
    error = reply.json()["error"]
    assert error["code"] == code and error["status"] == "INVALID_ARGUMENT" and message in error["message"]
    assert error.get("details", [{}])[0].get("errorType") == error_type


def test_request_size_is_bounded(length_server):
    # over the server's body limit (4096 bytes here): 413 before parsing
    big = json.dumps({"comment": {"text": "x" * 5000}, "requestedAttributes": {"TOXICITY": {}}})
    reply = requests.post(length_server.url, data=big, timeout=10)
    assert reply.status_code == 413 and "exceeds the limit: 4096" in reply.json()["error"]["message"]


def test_text_over_perspectives_limit_is_refused_as_perspective_does():
    with Running(make_app(LengthScorer(), max_body=10 * MAX_TEXT_BYTES, cache=False)) as running:
        body = {"comment": {"text": "é" * (MAX_TEXT_BYTES // 2 + 1)}, "requestedAttributes": {"TOXICITY": {}}}
        reply = requests.post(running.url, json=body, timeout=10)
    assert reply.status_code == 400 and reply.json()["error"]["details"][0]["errorType"] == "COMMENT_TOO_LONG"


def test_other_paths_and_methods_answer_in_the_error_shape(length_server):
    base = length_server.url.removesuffix(ANALYZE_PATH)
    missing = requests.post(base + "/v1alpha1/comments:suggestscore", json={}, timeout=10)
    assert missing.status_code == 404 and missing.json()["error"]["status"] == "NOT_FOUND"
    wrong = requests.get(length_server.url, timeout=10)
    assert wrong.status_code == 405 and "use POST" in wrong.json()["error"]["message"]


def test_waiting_requests_are_bounded():
    release = threading.Event()

    class Slow(LengthScorer):
        def score_batch(self, texts):
            release.wait(10)
            return super().score_batch(texts)

    body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    with Running(make_app(Slow(), max_waiting=1, cache=False)) as running:
        first = threading.Thread(target=requests.post, args=(running.url,), kwargs={"json": body, "timeout": 20})
        first.start()
        time.sleep(0.5)  # the first request now holds the only waiting slot
        refused = requests.post(running.url, json=body, timeout=10)
        release.set()
        first.join(20)
        after = requests.post(running.url, json=body, timeout=10)
    assert refused.status_code == 429 and refused.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert refused.headers["Retry-After"] == "1"
    assert after.status_code == 200


def test_google_batch_requests_get_one_answer_per_part_as_googleapiclient_reads_them(length_server):
    from email.parser import FeedParser

    analyze = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    body = google_batch([("0", ANALYZE_PATH, analyze), ("1", ANALYZE_PATH, {**analyze, "comment": {"text": ""}}),
                         ("2", "/v1alpha1/comments:suggestscore", analyze),
                         ("a%20long%20id" * 9, ANALYZE_PATH, analyze)])
    reply = requests.post(length_server.url.replace(ANALYZE_PATH, "/batch"), data=body, timeout=10, headers={
        "content-type": 'multipart/mixed; boundary="===============1724565216827302468=="'})
    assert reply.status_code == 200
    # read the reply as googleapiclient's BatchHttpRequest._execute does
    parser = FeedParser()
    parser.feed(f"content-type: {reply.headers['content-type']}\r\n\r\n" + reply.text)
    answers = {}
    for part in parser.close().get_payload():
        request_id = part["Content-ID"][1:-1].split(" + ", 1)[1]
        status_line, payload = part.get_payload().split("\n", 1)
        answers[request_id] = (int(status_line.split(" ")[1]), json.loads(payload.split("\r\n\r\n", 1)[1]))
    assert answers["0"] == (200, requests.post(length_server.url, json=analyze, timeout=10).json())
    assert answers["1"][0] == 400 and answers["1"][1]["error"]["details"][0]["errorType"] == "COMMENT_EMPTY"
    assert answers["2"][0] == 404 and answers["a%20long%20id" * 9] == answers["0"]


def test_discovery_document_points_googleapiclient_at_this_server(length_server):
    base = length_server.url.removesuffix(ANALYZE_PATH)
    doc = requests.get(base + "/$discovery/rest", params={"version": "v1alpha1"}, timeout=10).json()
    method = doc["resources"]["comments"]["methods"]["analyze"]
    assert doc["rootUrl"] + method["path"] == length_server.url and doc["rootUrl"] + doc["batchPath"] == base + "/batch"
    assert "not Perspective" in doc["title"]


SURROGATE = '{"comment": {"text": "%s"}, "requestedAttributes": {"TOXICITY": {}}%s}'


@pytest.mark.parametrize("body", [
    b'{"comment": {"text": "hi"}, "requestedAttributes": {"TOXICITY": {}}, "x": ' + b"[" * 1500 + b"]" * 1500 + b"}",
    (SURROGATE % ("\\ud800 lone", "")).encode(),
    (SURROGATE % ("fine", ', "clientToken": "\\udfff"')).encode(),
    (SURROGATE % ("fine", ', "languages": ["\\ud83d"]')).encode(),
], ids=["nested", "surrogate-text", "surrogate-token", "surrogate-language"])
def test_hostile_bodies_get_400_in_googles_shape_not_500(length_server, body, caplog):
    assert len(body) < 4096  # under the size limit: the parser itself must refuse it
    reply = requests.post(length_server.url, data=body, headers={"Content-Type": "application/json"}, timeout=10)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "Traceback" not in caplog.text


def test_a_malformed_batch_part_fails_only_itself(length_server):
    analyze = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    nested = {**analyze, "x": json.loads("[" * 50 + "]" * 50)}
    body = google_batch([("ok", ANALYZE_PATH, analyze), ("nested", ANALYZE_PATH, nested),
                         ("also-ok", ANALYZE_PATH, {**analyze, "comment": {"text": "hi"}})])
    deep = json.dumps(nested).encode()
    body = body.replace(deep, b'{"comment": {"text": "x"}, "requestedAttributes": {"TOXICITY": {}}, "x": '
                        + b"[" * 1500 + b"]" * 1500 + b"}")
    body = body.replace(f"content-length: {len(deep)}".encode(), b"content-length: 3060")
    boundary = b"===============1724565216827302468=="
    body = body.replace(b"--" + boundary + b"--", b"--" + boundary + b"\nContent-Type: application/http\n"
                        b"Content-ID: <x + no-request-line>\n\ngarbage\n--" + boundary + b"--")
    reply = requests.post(length_server.url.replace(ANALYZE_PATH, "/batch"), data=body, timeout=10,
                          headers={"content-type": f'multipart/mixed; boundary="{boundary.decode()}"'})
    assert reply.status_code == 200, reply.text
    statuses = dict(re.findall(r"Content-ID: <response-[^+]*\+ ([^>]+)>\r\n\r\nHTTP/1.1 (\d+)", reply.text))
    assert statuses == {"ok": "200", "nested": "400", "also-ok": "200", "no-request-line": "400"}


def test_every_response_and_the_discovery_document_name_the_scorer(length_server):
    expected = "length@1"
    base = length_server.url.removesuffix(ANALYZE_PATH)
    body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    replies = [requests.post(length_server.url, json=body, timeout=10), requests.post(length_server.url, data=b"{",
               timeout=10), requests.get(base + "/nowhere", timeout=10),
               requests.get(base + "/$discovery/rest", params={"version": "v1alpha1"}, timeout=10)]
    assert [r.headers.get("X-Toxlib-Scorer") for r in replies] == [expected] * 4
    assert replies[-1].json()["servedScorer"] == expected


class OtherLengthScorer(LengthScorer):
    name, version = "other-length", "2"

    def score_batch(self, texts):
        return BatchScores(np.array([[0.25, 0.75] for _ in texts]))


def test_the_client_keys_scores_by_the_model_the_server_names(monkeypatch, tmp_path):
    """Two scorers served one after the other on the same port: the second is asked, not the first's cache."""
    from toxlib.scorers.perspective import EndpointChangedError
    from toxlib.store.cache import ScoreStore

    monkeypatch.setenv("PERSPECTIVE_API_KEY", "any-key-works-locally")
    port = free_port()
    with ScoreStore(tmp_path / "scores.sqlite") as store:
        with Running(make_app(LengthScorer(), cache=False), port=port) as running:
            first_client = PerspectiveScorer(url=running.url, qps=math.inf, attributes=("toxicity",))
            first = first_client.score(["hello"], cache=store, progress=False)
        with Running(make_app(OtherLengthScorer(), cache=False), port=port) as running:
            second = PerspectiveScorer(url=running.url, qps=math.inf, attributes=("toxicity",)).score(
                ["hello"], cache=store, progress=False)
            with pytest.raises(EndpointChangedError, match="other-length@2"):  # a client made before the restart
                first_client.score(["a text not cached"], cache=store, progress=False)
    assert first.loc[0, "toxicity"] == 0.5 and second.loc[0, "toxicity"] == 0.25
    assert "served=length@1" in first.loc[0, "version"] and "served=other-length@2" in second.loc[0, "version"]


# --- slow clients (toxlib.scorers.serve_guard) ---

HEAD = (f"POST {ANALYZE_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "X-Padding: " + "p" * 60 + "\r\n").encode()  # never finished: no blank line


def guarded(app, timeout=1.0, max_waiting=64, per_client=8, **config):
    from toxlib.scorers.serve_guard import guarded_protocol

    return Running(app, http=guarded_protocol(timeout, max_waiting, per_client), **config)


def read_all(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(seconds)
    data = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(4096):
            data += chunk
    return data


def is_open(sock: socket.socket) -> bool:
    """True while the server keeps the connection open and silent (a read times out instead of ending)."""
    sock.settimeout(0.2)
    try:
        return sock.recv(1) != b""  # data: open but answered
    except TimeoutError:
        return True
    except OSError:
        return False


def test_an_incomplete_request_is_answered_408_and_closed():
    with guarded(make_app(LengthScorer(), cache=False), timeout=0.5) as running:
        with socket.create_connection(("127.0.0.1", running.port)) as sock:
            sock.sendall(HEAD[:40])
            start = time.monotonic()
            answer = read_all(sock, 5)
    assert time.monotonic() - start < 3
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 408") and json.loads(body)["error"]["code"] == 408


def test_a_request_whose_body_trickles_is_cut_off(caplog):
    with guarded(make_app(LengthScorer(), cache=False), timeout=0.5) as running:
        with socket.create_connection(("127.0.0.1", running.port)) as sock:
            sock.sendall(HEAD + b"Content-Length: 100\r\n\r\n" + b'{"comment"')
            start = time.monotonic()
            answer = read_all(sock, 5)  # returns when the server closes the connection
            elapsed = time.monotonic() - start
        time.sleep(0.2)
    assert elapsed < 3 and answer.startswith(b"HTTP/1.1 408") and "Traceback" not in caplog.text


def test_a_complete_request_slower_to_answer_than_the_time_out_is_answered():
    class Slow(LengthScorer):
        def score_batch(self, texts):
            time.sleep(1.5)
            return super().score_batch(texts)

    body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    with guarded(make_app(Slow(), cache=False), timeout=0.5) as running:
        reply = requests.post(running.url, json=body, timeout=10)
    assert reply.status_code == 200


def test_an_idle_keep_alive_connection_is_not_answered_408():
    """Between requests a keep-alive connection is idle, not waiting: the guard sends nothing unasked on it (a stale
    408 there would be read by the client as the answer to its next request)."""
    body = json.dumps({"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}).encode()
    request = (f"POST {ANALYZE_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    with guarded(make_app(LengthScorer(), cache=False), timeout=0.5) as running:
        with socket.create_connection(("127.0.0.1", running.port)) as sock:
            sock.sendall(request)
            received = read_all(sock, 1.5)  # the answer, then 1.5 s of keep-alive silence (3 request time-outs)
            sock.sendall(request)  # the connection is still good for the next request
            again = read_all(sock, 1.0)
    assert received.count(b"HTTP/1.1 ") == 1 and received.startswith(b"HTTP/1.1 200")
    assert again.startswith(b"HTTP/1.1 200")


def test_a_clients_oldest_incomplete_connection_gives_way_with_503_and_retry_after():
    with guarded(make_app(LengthScorer(), cache=False), timeout=30, per_client=3) as running:
        socks = [socket.create_connection(("127.0.0.1", running.port)) for _ in range(3)]
        for sock in socks:
            sock.sendall(HEAD[:20])
        time.sleep(0.7)  # past the grace (0.5 s at this time-out)
        newest = socket.create_connection(("127.0.0.1", running.port))  # the 4th: the oldest gives way
        answer = read_all(socks[0], 5)
        still_open = [is_open(sock) for sock in socks[1:]]
        for sock in [*socks, newest]:
            sock.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in head
    assert json.loads(body)["error"]["status"] == "UNAVAILABLE" and still_open == [True, True]


def slow_client_flood(port: int, connections: int, seconds: float) -> dict:
    """``connections`` clients that each send a request head one byte every 0.5 s, never finishing it, and
    reconnect 0.1 s after being closed, for ``seconds``; in a thread. Returns counts (opened, answered)."""
    stats = {"opened": 0, "answered": 0}

    async def client(stop_at):
        while time.monotonic() < stop_at:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            stats["opened"] += 1
            try:
                for byte in HEAD:
                    if time.monotonic() >= stop_at:
                        break
                    writer.write(bytes([byte]))
                    await writer.drain()
                    with contextlib.suppress(asyncio.TimeoutError):
                        if await asyncio.wait_for(reader.read(1024), timeout=0.5) or reader.at_eof():
                            stats["answered"] += 1
                            break
            except OSError:
                pass
            finally:
                writer.close()
            await asyncio.sleep(0.1)

    async def flood():
        stop_at = time.monotonic() + seconds
        await asyncio.gather(*(client(stop_at) for _ in range(connections)))

    thread = threading.Thread(target=asyncio.run, args=(flood(),), daemon=True)
    thread.start()
    stats["thread"] = thread
    return stats


def probe_during_flood(running, connections=150, seconds=6.0,
                       attribute="TOXICITY") -> tuple[list[int], list[float], dict]:
    """(statuses, seconds per request) of normal requests made every 0.2 s during a ``slow_client_flood``."""
    stats = slow_client_flood(running.port, connections, seconds)
    time.sleep(1.5)  # the flood is established
    body = {"comment": {"text": "hello"}, "requestedAttributes": {attribute: {}}}
    statuses, latencies = [], []
    while stats["thread"].is_alive() and len(statuses) < 15:
        start = time.monotonic()
        try:
            statuses.append(requests.post(running.url, json=body, timeout=5).status_code)
        except requests.RequestException:
            statuses.append(0)
        latencies.append(time.monotonic() - start)
        time.sleep(0.2)
    stats["thread"].join(15)
    return statuses, latencies, stats


def test_normal_requests_are_answered_within_a_second_during_a_slow_client_flood():
    with guarded(make_app(LengthScorer(), cache=False), timeout=2.0, max_waiting=512, per_client=32) as running:
        statuses, latencies, stats = probe_during_flood(running)
    assert len(statuses) >= 10 and set(statuses) == {200}, statuses
    assert max(latencies) < 1.0, latencies
    assert stats["opened"] > 150 and stats["answered"] > 0  # the flood was real: its connections were cut off


def test_the_same_flood_shuts_out_uvicorns_plain_concurrency_limit():
    """What the guard is for: behind uvicorn's own bound (the old ``serve``), the flood gets every request a 503."""
    with Running(make_app(LengthScorer(), cache=False), limit_concurrency=128) as running:
        statuses, _, _ = probe_during_flood(running)
    assert statuses and all(status == 503 for status in statuses), statuses


def test_toxlib_serve_itself_keeps_answering_during_the_flood(tmp_path):
    """The command a user runs (``python -m toxlib serve``), with its defaults apart from a 2 s time-out."""
    import subprocess
    import sys
    from types import SimpleNamespace

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "toxlib", "serve", "--scorer", "profanity-svm", "--port",
                               str(port), "--request-timeout", "2", "--no-cache"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    running = SimpleNamespace(port=port, url=f"http://127.0.0.1:{port}{ANALYZE_PATH}")
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
            with contextlib.suppress(requests.RequestException):
                requests.get(running.url.replace(ANALYZE_PATH, "/$discovery/rest"), timeout=1)
                break
            time.sleep(0.3)
        statuses, latencies, stats = probe_during_flood(running, attribute="PROFANITY")
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert len(statuses) >= 10 and set(statuses) == {200}, (statuses, output[-2000:])
    assert max(latencies) < 1.0, latencies
    assert stats["answered"] > 0 and "Traceback" not in output
