"""The local Perspective-compatible endpoint (toxlib.scorers.serve) on 127.0.0.1: toxlib's own Perspective
client pointed at it gives the scores of direct scoring; Perspective's response and error shapes; bounds."""

from __future__ import annotations

import json
import math
import socket
import threading
import time

import numpy as np
import pytest
import requests
import uvicorn

from toxlib.scorers.base import BatchScores, Scorer
from toxlib.scorers.perspective import PerspectiveScorer
from toxlib.scorers.serve import ANALYZE_PATH, MAX_TEXT_BYTES, make_app


class LengthScorer(Scorer):
    """Two attributes from the text's length: fast and known in advance (for the shape and error tests)."""

    name, version, attributes = "length", "1", ("toxicity", "insult")

    def score_batch(self, texts):
        return BatchScores(np.array([[len(t) % 10 / 10, len(t) % 7 / 7] for t in texts]))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Running:
    """A uvicorn server for ``app`` in a thread on a free 127.0.0.1 port (context manager; ``url`` analyzes)."""

    def __init__(self, app):
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}{ANALYZE_PATH}"

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


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
    assert after.status_code == 200


def google_batch(parts: list[tuple[str, str, dict]], boundary: str = "===============1724565216827302468==") -> bytes:
    """A batch body laid out byte for byte as googleapiclient 2.202's BatchHttpRequest sends it (captured from
    that client): one application/http part per (request id, path, JSON body), LF line ends inside; a long
    Content-ID is folded as the client's email generator folds it (HELM's request ids are whole texts)."""
    out = []
    for request_id, path, body in parts:
        data = json.dumps(body)
        fold = "\n " if len(request_id) > 40 else " "
        out += [f"--{boundary}", "Content-Type: application/http", "MIME-Version: 1.0",
                "Content-Transfer-Encoding: binary",
                f"Content-ID: <7842af4e-3665-445d-9c0e-c9f484b6443c +{fold}{request_id}>",
                "", f"POST {path}?key=KEY&alt=json HTTP/1.1", "Content-Type: application/json", "MIME-Version: 1.0",
                "accept: application/json", "Host: 127.0.0.1", f"content-length: {len(data)}", "", data]
    return ("\n".join(out + [f"--{boundary}--", ""])).encode()


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
