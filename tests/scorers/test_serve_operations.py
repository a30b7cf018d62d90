"""Running ``toxlib serve`` for others, on 127.0.0.1: API keys (403 without a listed one, as Perspective answers), a
remote host only when asked for and with keys, the health and information endpoints, an access log without texts or
keys, and concurrent requests scored together."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import requests
from local_server import LengthScorer, Running, google_batch

from toxlib.scorers.base import BatchScores
from toxlib.scorers.serve import ANALYZE_PATH, ServeConfigError, make_app, serve
from toxlib.scorers.serve_access import KEYS_VARIABLE, ApiKeyError, KeyCheck, load_keys

BODY = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}


@pytest.fixture(scope="module")
def keyed():
    """A server that requires one of two keys."""
    with Running(make_app(LengthScorer(), cache=False, api_keys=frozenset({"key-one", "key-two"}))) as running:
        yield running


def base(running) -> str:
    return running.url.removesuffix(ANALYZE_PATH)


# --- API keys ---

@pytest.mark.parametrize("params,headers", [({}, {}), ({"key": "wrong"}, {}), ({}, {"X-Goog-Api-Key": "wrong"}),
                                            ({"key": ""}, {})], ids=["none", "wrong-query", "wrong-header", "empty"])
def test_a_request_without_a_listed_key_gets_403_as_from_perspective(keyed, params, headers):
    reply = requests.post(keyed.url, json=BODY, params=params, headers=headers, timeout=10)
    assert reply.status_code == 403
    error = reply.json()["error"]
    assert error["status"] == "PERMISSION_DENIED" and "missing a valid API key" in error["message"]


@pytest.mark.parametrize("params,headers", [({"key": "key-one"}, {}), ({}, {"X-Goog-Api-Key": "key-two"})],
                         ids=["query", "header"])
def test_a_listed_key_is_answered_as_googles_client_and_toxlibs_send_it(keyed, params, headers):
    reply = requests.post(keyed.url, json=BODY, params=params, headers=headers, timeout=10)
    assert reply.status_code == 200 and reply.json()["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == 0.5


def test_each_batch_part_needs_a_listed_key_its_own_or_the_batchs(keyed):
    body = google_batch([("a", ANALYZE_PATH, BODY), ("b", ANALYZE_PATH, BODY)])
    body = body.replace(b"?key=KEY&", b"?key=key-one&", 1)
    body = body.replace(b"?key=KEY&", b"?key=x&")  # part a carries a listed key, part b a wrong one
    headers = {"content-type": 'multipart/mixed; boundary="===============1724565216827302468=="'}
    url = base(keyed) + "/batch"
    plain = requests.post(url, data=body, headers=headers, timeout=10).text
    outer = requests.post(url, data=body, headers=headers, params={"key": "key-two"}, timeout=10).text
    assert plain.index("HTTP/1.1 200") < plain.index("HTTP/1.1 403")  # a: 200, b: 403, in order
    assert outer.count("HTTP/1.1 200") == 2


def test_a_batch_without_a_key_of_its_own_or_in_its_first_part_is_refused_whole(keyed):
    body = google_batch([("a", ANALYZE_PATH, BODY), ("b", ANALYZE_PATH, BODY)]).replace(b"?key=KEY&", b"?key=x&", 1)
    body = body.replace(b"?key=KEY&", b"?key=key-one&")  # a listed key in the second part only
    headers = {"content-type": 'multipart/mixed; boundary="===============1724565216827302468=="'}
    reply = requests.post(base(keyed) + "/batch", data=body, headers=headers, timeout=10)
    assert reply.status_code == 403 and "missing a valid API key" in reply.json()["error"]["message"]


def test_discovery_information_and_health_need_no_key(keyed):
    for path in ("/$discovery/rest?version=v1alpha1", "/info", "/healthz"):
        assert requests.get(base(keyed) + path, timeout=10).status_code == 200, path


def test_keys_are_compared_whole():
    check = KeyCheck(frozenset({"secret"}))
    assert check.allowed("secret") and not check.allowed("secre") and not check.allowed("secret ")
    assert not check.allowed(None) and KeyCheck().allowed(None)


def test_the_key_list_comes_from_a_file_or_the_environment(tmp_path, monkeypatch):
    listed = tmp_path / "keys.txt"
    listed.write_text("# team keys\nalpha\n\n  beta  \n")
    assert load_keys(listed) == {"alpha", "beta"}
    monkeypatch.setenv(KEYS_VARIABLE, "gamma, delta,")
    assert load_keys() == {"gamma", "delta"}
    monkeypatch.delenv(KEYS_VARIABLE)
    assert load_keys() == frozenset()
    (tmp_path / "empty.txt").write_text("# nothing yet\n")
    with pytest.raises(ApiKeyError, match="holds no API key"):
        load_keys(tmp_path / "empty.txt")
    with pytest.raises(ApiKeyError, match="cannot read the API key file"):
        load_keys(tmp_path / "missing.txt")


def test_a_remote_host_needs_the_explicit_flag_and_keys():
    with pytest.raises(ServeConfigError, match="--allow-remote"):
        serve(host="0.0.0.0", scorer="never-loaded")
    with pytest.raises(ServeConfigError, match="needs API keys"):
        serve(host="0.0.0.0", allow_remote=True, scorer="never-loaded")


# --- health, information, access log ---

def test_the_health_endpoint_says_the_scorer_is_loaded_and_how_full_the_queue_is(keyed):
    reply = requests.get(base(keyed) + "/healthz", timeout=10)
    assert reply.json() == {"status": "ok", "servedScorer": "length@1", "waiting": 0, "maxWaiting": 64,
                            "workers": 1, "workerProcesses": 0, "busy": 0, "queuedTexts": 0, "queuedRequests": 0}
    assert reply.headers["X-Toxlib-Scorer"] == "length@1"


def test_the_access_log_has_one_json_line_per_request_without_texts_or_keys():
    secret_text, secret_key = "a private text 8341", "key-one"
    lines: list[str] = []  # a server of its own: a line is written after its answer, so another test's could trail
    app = make_app(LengthScorer(), cache=False, api_keys=frozenset({secret_key}), log_write=lines.append)
    with Running(app) as running:
        requests.post(running.url, json={**BODY, "comment": {"text": secret_text}}, params={"key": secret_key},
                      timeout=10)
        requests.post(running.url, json=BODY, params={"key": "a-wrong-key-5521"}, timeout=10)
        time.sleep(0.3)
    records = [json.loads(line) for line in lines]
    assert [(r["method"], r["path"], r["status"], r["texts"]) for r in records] == [
        ("POST", ANALYZE_PATH, 200, 1), ("POST", ANALYZE_PATH, 403, 0)]
    assert all(r["client"] == "127.0.0.1" and r["ms"] >= 0 and r["bytes_out"] > 0 for r in records)
    assert 0 <= records[0]["wait_ms"] and 0 < records[0]["score_ms"] <= records[0]["ms"]
    assert records[1]["wait_ms"] == records[1]["score_ms"] == 0
    assert records[0]["bytes_in"] > 0 and records[1]["bytes_in"] == 0  # refused before its body was read
    assert not any(word in "\n".join(lines) for word in (secret_text, secret_key, "a-wrong-key-5521", "key="))


@pytest.mark.models
def test_information_and_discovery_give_the_shipped_agreement_per_attribute():
    from toxlib.scorers.distilled import WEIGHTS_DIR, DistilledScorer

    shipped = json.loads((WEIGHTS_DIR / "training.json").read_text())
    scorer = DistilledScorer()  # the network is not loaded: nothing here scores
    with Running(make_app(scorer, cache=False)) as running:
        info = requests.get(base(running) + "/info", timeout=10).json()
        discovery = requests.get(base(running) + "/$discovery/rest", params={"version": "v1alpha1"}, timeout=10).json()
    assert info["servedScorer"] == f"distilled@{scorer.version}" and info["emulation"] is True
    assert info["agreement"]["texts"] == shipped["held_out_texts"] == 2896
    assert info["agreement"]["weights"] == shipped["version"]
    for attribute, measured in shipped["held_out"].items():
        assert info["attributes"][attribute.upper()]["agreement"] == measured
    assert info["window"] == {"size": 128, "unit": "tokens", "side": "first"} and info["languages"] == ["en"]
    assert discovery["toxlib"] == info and discovery["servedScorer"] == info["servedScorer"]
    assert "Pearson 0.944" in discovery["description"] and "not Perspective" in discovery["description"]


def test_a_scorer_without_a_measurement_says_so(keyed):
    info = requests.get(base(keyed) + "/info", timeout=10).json()
    assert info["agreement"] is None and info["attributes"] == {"TOXICITY": {"agreement": None},
                                                                "INSULT": {"agreement": None}}
    assert "No agreement with Perspective was measured" in info["summary"]


# --- concurrent requests scored together ---

class SlowCounting(LengthScorer):
    """Records the size of each scoring call; the first call waits until released."""

    def __init__(self):
        self.calls, self.release = [], threading.Event()

    def score_batch(self, texts):
        self.calls.append(len(texts))
        self.release.wait(10)
        return BatchScores(np.array([[len(t) % 10 / 10, len(t) % 7 / 7] for t in texts]))


@pytest.mark.parametrize("coalesce", [True, False])
def test_requests_that_arrive_while_the_scorer_is_busy_are_scored_together(coalesce):
    scorer = SlowCounting()
    texts = [f"text {'x' * i}" for i in range(9)]
    with Running(make_app(scorer, cache=False, coalesce=coalesce)) as running:
        def waiting(n: int) -> None:  # until n requests wait for the scorer or are being scored (/healthz)
            deadline = time.monotonic() + 15
            while requests.get(running.url.removesuffix(ANALYZE_PATH) + "/healthz", timeout=5).json()["waiting"] < n:
                assert time.monotonic() < deadline, f"{n} requests did not arrive"
                time.sleep(0.05)

        with ThreadPoolExecutor(9) as pool:
            first = pool.submit(requests.post, running.url, json={**BODY, "comment": {"text": texts[0]}}, timeout=30)
            waiting(1)  # the first call is under way; the others queue behind it
            rest = [pool.submit(requests.post, running.url, json={**BODY, "comment": {"text": t}}, timeout=30)
                    for t in texts[1:]]
            waiting(9)
            scorer.release.set()
            replies = [first.result(), *(f.result() for f in rest)]
    values = [r.json()["attributeScores"]["TOXICITY"]["summaryScore"]["value"] for r in replies]
    assert values == [len(t) % 10 / 10 for t in texts]  # each request gets its own text's score
    assert scorer.calls == ([1, 8] if coalesce else [1] * 9)


class KeyedByLength(SlowCounting):
    """Texts share a batch key when their lengths do; records each call's texts."""

    def batch_keys(self, texts):
        return [len(t) for t in texts]

    def batch_rows(self, key):
        return 3

    def score_batch(self, texts):
        self.calls.append(sorted(texts))
        self.release.wait(10)
        return BatchScores(np.array([[len(t) % 10 / 10, len(t) % 7 / 7] for t in texts]))


def test_texts_of_concurrent_requests_are_pooled_by_batch_key_one_key_per_call():
    scorer = KeyedByLength()
    texts = ["aa", "bbb", "cc", "ddd", "ee", "ff", "gg", "hhh"]  # keys 2 and 3 across eight requests
    with Running(make_app(scorer, cache=False)) as running:
        health = running.url.removesuffix(ANALYZE_PATH) + "/healthz"

        def queued(n: int) -> None:
            deadline = time.monotonic() + 15
            while requests.get(health, timeout=5).json()["queuedTexts"] < n:
                assert time.monotonic() < deadline, f"{n} texts did not queue"
                time.sleep(0.05)

        with ThreadPoolExecutor(9) as pool:
            first = pool.submit(requests.post, running.url, json={**BODY, "comment": {"text": "x"}}, timeout=30)
            deadline = time.monotonic() + 15
            while not scorer.calls:
                assert time.monotonic() < deadline
                time.sleep(0.02)
            rest = [pool.submit(requests.post, running.url, json={**BODY, "comment": {"text": t}}, timeout=30)
                    for t in texts]
            queued(len(texts))
            scorer.release.set()
            replies = [first.result(), *(f.result() for f in rest)]
    values = [r.json()["attributeScores"]["TOXICITY"]["summaryScore"]["value"] for r in replies]
    assert values == [len(t) % 10 / 10 for t in ["x", *texts]]
    # after the first call, one key per call, at most batch_rows texts each: the five texts of length 2 in calls of
    # 3 and 2, the three of length 3 in one (which goes first depends on how long they waited: FAIR_WAIT)
    assert scorer.calls[0] == ["x"] and sorted(t for call in scorer.calls[1:] for t in call) == sorted(texts)
    assert all(len({len(t) for t in call}) == 1 for call in scorer.calls[1:])
    assert sorted((len(call[0]), len(call)) for call in scorer.calls[1:]) == [(2, 2), (2, 3), (3, 3)]


def test_sigterm_answers_the_requests_in_flight_then_stops(tmp_path):
    """``serve`` with one worker process: a request being scored when SIGTERM arrives still gets its 200."""
    import os
    import signal
    import subprocess
    import sys

    from local_server import free_port

    port = free_port()
    tests = str(Path(__file__).resolve().parents[1])
    code = ("from local_server import SleepyScorer; from toxlib.scorers.serve import serve; "
            f"serve(port={port}, scorer=SleepyScorer(1.5), workers=1, cache=False)")
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env={**os.environ, "PYTHONPATH": tests})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None and time.monotonic() < deadline, server.stdout.read()
            try:
                if requests.get(url + "/healthz", timeout=1).json()["workerProcesses"] == 1:
                    break
            except requests.RequestException:
                time.sleep(0.2)
        with ThreadPoolExecutor(1) as pool:
            reply = pool.submit(requests.post, url + ANALYZE_PATH, json=BODY, timeout=30)
            while requests.get(url + "/healthz", timeout=5).json()["busy"] < 1:
                time.sleep(0.05)
            server.send_signal(signal.SIGTERM)
            answered = reply.result()
        output = server.communicate(timeout=30)[0]
    finally:
        if server.poll() is None:
            server.kill()
    assert answered.status_code == 200 and answered.json()["attributeScores"]["TOXICITY"]
    assert server.returncode in (0, -signal.SIGTERM) and "Traceback" not in output, output
    assert "leaked" not in output  # the worker processes and their queues were stopped, not abandoned
