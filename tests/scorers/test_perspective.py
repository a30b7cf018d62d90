"""PerspectiveScorer against a fake Perspective server on 127.0.0.1 (tests/fake_perspective.py): scores, retries,
failures as NaN, what is cached, rate limit, key hygiene."""

from __future__ import annotations

import logging
import math
import socket
import time

import pytest
from fake_perspective import FakePerspective, fake_score, span_score

from toxlib import scorers
from toxlib.common.errors import ToxlibError, UnknownNameError
from toxlib.scorers import get_scorer
from toxlib.scorers.base import ATTRIBUTES
from toxlib.scorers.perspective import MissingAPIKeyError, PerspectiveAuthError, PerspectiveScorer
from toxlib.store.cache import ScoreStore

KEY = "SECRET-KEY-123"
FAST = {"qps": 1000.0, "timeout": 0.5, "retries": 2, "backoff_factor": 0.01}


@pytest.fixture()
def server(monkeypatch):
    monkeypatch.setenv("PERSPECTIVE_API_KEY", KEY)
    monkeypatch.delenv("PERSPECTIVE_API_URL", raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakePerspective(key=KEY, slow_seconds=1.5) as fake:
        yield fake


@pytest.fixture()
def store(tmp_path):
    with ScoreStore(tmp_path / "scores.sqlite") as s:
        yield s


def scorer_for(server, **options) -> PerspectiveScorer:
    return PerspectiveScorer(url=server.url, **{**FAST, **options})


def expected(text: str) -> list[float]:
    return [fake_score(text, a.upper()) for a in ATTRIBUTES]


def test_happy_path_reads_summary_scores(server, store):
    texts = ["hello there", "you are an idiot", "hello there"]
    table = scorer_for(server).score(texts, cache=store, progress=False)

    assert list(table.columns) == [*ATTRIBUTES, "scorer", "version", "error"]
    for i, text in enumerate(texts):
        assert table.loc[i, list(ATTRIBUTES)].tolist() == pytest.approx(expected(text), abs=1e-9)
        assert table.loc[i, "toxicity"] != pytest.approx(span_score(text, "TOXICITY"))
    assert table["error"].isna().all()
    attrs = ",".join(a.upper() for a in ATTRIBUTES)
    port = server.url.split(":")[2].split("/")[0]
    assert (table["version"] == f"http://127.0.0.1:{port}/v1alpha1/comments:analyze;attrs={attrs};lang=en").all()

    assert len(server.requests) == 2  # duplicates are scored once
    for request in server.requests:
        assert request["path"] == "/v1alpha1/comments:analyze"  # no ?key=
        assert request["headers"]["X-Goog-Api-Key"] == KEY
        body = request["body"]
        assert set(body) == {"comment", "requestedAttributes", "languages", "doNotStore"}
        assert body["comment"]["text"] in texts
        assert body["requestedAttributes"] == {a.upper(): {} for a in ATTRIBUTES}
        assert body["languages"] == ["en"] and body["doNotStore"] is True


def test_attribute_subset_and_languages(server, store):
    scorer = scorer_for(server, attributes=("insult", "toxicity"), languages=("de",), do_not_store=False)
    table = scorer.score(["hallo"], cache=store, progress=False)
    assert scorer.attributes == ("toxicity", "insult")
    # the whole endpoint is in the version: a mock never shares cache rows with the API
    assert scorer.version == f"{server.url};attrs=TOXICITY,INSULT;lang=de"
    assert table.loc[0, "insult"] == pytest.approx(fake_score("hallo", "INSULT"))
    body = server.requests[0]["body"]
    assert set(body["requestedAttributes"]) == {"TOXICITY", "INSULT"}
    assert body["languages"] == ["de"] and body["doNotStore"] is False


@pytest.mark.parametrize("marker", ["[429x2]", "[500x2]"])
def test_retries_then_success(server, store, marker):
    text = f"{marker} flaky"
    table = scorer_for(server).score([text, "fine"], cache=store, progress=False)
    assert table.loc[0, list(ATTRIBUTES)].tolist() == pytest.approx(expected(text))
    assert table.loc[0, "error"] is None
    assert [r["status"] for r in server.requests_for(text)] == [int(marker[1:4])] * 2 + [200]


def test_retry_after_is_respected(server, store):
    server.retry_after = "1"
    text = "[429x1] wait for me"
    scorer_for(server).score([text], cache=store, progress=False)
    first, second = server.requests_for(text)
    assert second["time"] - first["time"] >= 0.9  # backoff alone would be ~0 s


def test_transient_failures_are_nan_and_not_cached(server, store, tmp_path):
    bad = ["[500xinf] down", "[slow] sleepy", "[badjson] garbled", "[missing] partial", "[redirect] moved"]
    good = ["a healthy text", "another healthy one"]
    scorer = scorer_for(server)
    table = scorer.score(bad + good, cache=store, progress=False)

    failed = table.iloc[:len(bad)]
    assert failed[list(ATTRIBUTES)].isna().all().all()
    assert not (table[list(ATTRIBUTES)] == 0.0).any().any()
    for i, value in enumerate(failed["toxicity"]):
        assert math.isnan(value) and table.loc[i, "error"]
    errors = dict(zip(bad, failed["error"]))
    assert "HTTP 500" in errors["[500xinf] down"] and "3 attempts" in errors["[500xinf] down"]
    assert "timed out" in errors["[slow] sleepy"].lower()
    assert "malformed" in errors["[badjson] garbled"]
    assert "lacks attribute(s) FLIRTATION" in errors["[missing] partial"]
    assert "HTTP 307" in errors["[redirect] moved"]
    assert table.iloc[len(bad):][list(ATTRIBUTES)].notna().all().all()

    # urllib3 retried the 500s and the read time-outs (POST is in allowed_methods); the rest are not retried
    counts = {t: len(server.requests_for(t)) for t in bad + good}
    assert counts == {bad[0]: 3, bad[1]: 3, bad[2]: 1, bad[3]: 1, bad[4]: 1, good[0]: 1, good[1]: 1}
    assert not any(r["path"] == "/elsewhere" for r in server.requests)  # redirects are not followed

    stored = store.lookup(scorer.key, bad + good)
    assert set(stored) == set(good)
    again = scorer.score(bad + good, cache=store, progress=False)
    assert {t: len(server.requests_for(t)) for t in bad + good} == \
        {**{t: 2 * n for t, n in counts.items() if t in bad}, good[0]: 1, good[1]: 1}
    assert again[list(ATTRIBUTES)].iloc[len(bad):].values.tolist() == \
        table[list(ATTRIBUTES)].iloc[len(bad):].values.tolist()


def test_connection_refused_is_transient(server, store):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    scorer = PerspectiveScorer(url=f"http://127.0.0.1:{port}/v1alpha1/comments:analyze", **FAST)
    table = scorer.score(["nobody listens"], cache=store, progress=False)
    assert math.isnan(table.loc[0, "toxicity"]) and "request failed" in table.loc[0, "error"]
    assert store.lookup(scorer.key, ["nobody listens"]) == {}


def test_unsupported_language_is_cached(server, store):
    text = "[lang] texte"
    scorer = scorer_for(server)
    table = scorer.score([text], cache=store, progress=False)
    assert table[list(ATTRIBUTES)].isna().all().all()
    assert table.loc[0, "error"] == "HTTP 400 INVALID_ARGUMENT: Attribute TOXICITY does not support request " \
                                    "languages: xx"
    assert len(server.requests_for(text)) == 1  # a 400 is not retried

    again = scorer.score([text], cache=store, progress=False)
    assert len(server.requests_for(text)) == 1  # served from the cache
    assert again.loc[0, "error"] == table.loc[0, "error"] and math.isnan(again.loc[0, "toxicity"])


def test_qps_limit(server, store):
    texts = [f"text number {i}" for i in range(5)]
    start = time.monotonic()
    scorer_for(server, qps=10).score(texts, cache=store, progress=False)
    assert time.monotonic() - start >= 0.4
    times = [r["time"] for r in server.requests]
    assert len(times) == 5
    # server receipt times jitter under load; the exact spacing is tested with a fake clock below
    assert times[-1] - times[0] >= 0.3 and min(b - a for a, b in zip(times, times[1:])) >= 0.05


def test_rate_limiter_spaces_calls_exactly_on_a_fake_clock(monkeypatch):
    from toxlib.scorers import perspective

    clock = {"now": 100.0}
    sent = []
    monkeypatch.setattr(perspective.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(perspective.time, "sleep", lambda s: clock.__setitem__("now", clock["now"] + s))
    limiter = perspective.RateLimiter(4.0)
    for pause in (0.0, 0.0, 0.5, 0.0):  # a caller that is late gets no burst credit beyond its slot
        clock["now"] += pause
        limiter.wait()
        sent.append(clock["now"])
    assert [round(b - a, 9) for a, b in zip(sent, sent[1:])] == [0.25, 0.5, 0.25]  # never closer than 1/qps


def test_qps_limit_covers_retries(server, store):
    text = "[500x2] retried"
    scorer_for(server, qps=10, backoff_factor=0.0).score([text], cache=store, progress=False)
    times = [r["time"] for r in server.requests_for(text)]
    assert len(times) == 3
    assert times[-1] - times[0] >= 0.15 and min(b - a for a, b in zip(times, times[1:])) >= 0.05


@pytest.mark.parametrize("bad_key_status", [403, 400])
def test_rejected_key_stops_the_run(server, store, monkeypatch, bad_key_status):
    server.bad_key_status = bad_key_status
    monkeypatch.setenv("PERSPECTIVE_API_KEY", "WRONG-KEY-456")
    scorer = scorer_for(server)
    with pytest.raises(PerspectiveAuthError, match="PERSPECTIVE_API_KEY") as info:
        scorer.score(["one", "two"], cache=store, progress=False)
    assert "WRONG-KEY-456" not in str(info.value)
    assert len(server.requests) == 1 and store.lookup(scorer.key, ["one", "two"]) == {}


def test_key_never_leaks(server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="urllib3")
    path = tmp_path / "leak.sqlite"
    scorer = scorer_for(server)
    texts = ["fine", "[500xinf] x", "[slow] y", "[badjson] z", "[lang] w", "[429x1] v", "[missing] u"]
    with ScoreStore(path) as store:
        table = scorer.score(texts, cache=store, progress=False)
        assert table["error"].notna().sum() == 5
        assert caplog.records and any("retry" in r.getMessage() for r in caplog.records)

        dumps = {"table": table.to_csv(), "logs": caplog.text, "version": scorer.version, "key": scorer.key,
                 "repr": repr(scorer), "records": "\n".join(r.getMessage() for r in caplog.records)}
        for name, dump in dumps.items():
            assert KEY not in dump, name
        for file in (path, path.with_name(path.name + "-wal")):
            if file.exists():
                assert KEY.encode() not in file.read_bytes(), file.name
    assert KEY not in path.read_bytes().decode("latin-1")


def test_error_text_is_redacted(server):
    scorer = scorer_for(server)
    assert scorer._redact(f"boom {KEY} and {KEY}") == "boom *** and ***"


@pytest.mark.parametrize("offset", [150, 195, 230, 238])
def test_a_long_error_is_redacted_before_it_is_cut(server, offset):
    """A key that starts near the cut used to leak its first characters (cut at 200, then redacted)."""
    import requests

    response = requests.Response()
    response.status_code, response._content = 500, ("x" * offset + KEY + " trailing").encode()
    _, text, _ = scorer_for(server)._http_error(response)
    assert KEY[:4] not in text and "xxxx" in text


def test_two_servers_on_one_host_do_not_share_cached_scores(server, store):
    """Another port (another server, say another scorer behind `toxlib serve`) is another cache key."""
    with FakePerspective(key=KEY) as other:
        first = scorer_for(server).score(["hello there"], cache=store, progress=False)
        second = scorer_for(other).score(["hello there"], cache=store, progress=False)
    assert len(server.requests) == 1 and len(other.requests) == 1
    assert first.loc[0, "version"] != second.loc[0, "version"]


def test_missing_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("PERSPECTIVE_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="PERSPECTIVE_API_KEY") as info:
        PerspectiveScorer()
    assert "perspectiveapi.com" in str(info.value) and isinstance(info.value, ToxlibError)


def test_unknown_attribute_lists_the_known_ones(server):
    with pytest.raises(UnknownNameError) as info:
        PerspectiveScorer(attributes=("toxicity", "spam"), url=server.url)
    message = str(info.value)
    assert "spam" in message and all(a in message for a in ATTRIBUTES)


def test_plain_http_only_to_loopback(server):
    with pytest.raises(ValueError, match="https"):
        PerspectiveScorer(url="http://example.com/v1alpha1/comments:analyze")


def test_url_from_environment_and_registry(server, store, monkeypatch):
    monkeypatch.setenv("PERSPECTIVE_API_URL", server.url)
    monkeypatch.setattr(scorers, "_loaded", {})  # get_scorer's per-process instances
    scorer = get_scorer("perspective", qps=1000.0, timeout=0.5)
    assert isinstance(scorer, PerspectiveScorer) and scorer.url == server.url
    scorer.score(["via the registry"], cache=store, progress=False)
    assert len(server.requests_for("via the registry")) == 1


def test_resume_requests_only_new_texts(server, store):
    first = ["alpha", "beta beta", "gamma gamma gamma"]
    scorer_for(server).score(first, cache=store, progress=False)
    assert len(server.requests) == 3
    table = scorer_for(server).score(first + ["delta", "epsilon epsilon"], cache=store, progress=False)
    assert [r["body"]["comment"]["text"] for r in server.requests[3:]] == ["delta", "epsilon epsilon"]
    assert table[list(ATTRIBUTES)].notna().all().all()


def test_interrupted_run_keeps_finished_chunks(server, store):
    class Interrupted(PerspectiveScorer):
        chunk_size = 2
        calls = 0

        def score_batch(self, texts):
            self.calls += 1
            if self.calls == 2:
                raise KeyboardInterrupt
            return super().score_batch(texts)

    texts = [f"text {'x' * i}" for i in range(5)]
    with pytest.raises(KeyboardInterrupt):
        Interrupted(url=server.url, **FAST).score(texts, cache=store, progress=False)
    done = [r["body"]["comment"]["text"] for r in server.requests]
    assert len(done) == 2
    scorer_for(server).score(texts, cache=store, progress=False)
    assert sorted(r["body"]["comment"]["text"] for r in server.requests[2:]) == sorted(set(texts) - set(done))


# --- issue 17: a total deadline per request, strict JSON numbers ---------------------------------------------------

def _score_bounded(scorer, texts, path, limit_s: float):
    """score() in a thread with a score store at ``path``: (table, rows the store holds afterwards) if it finished
    within ``limit_s``, else the test fails (the fake server's stop releases a hung request afterwards)."""
    import threading

    done = {}

    def run():
        with ScoreStore(path) as store:  # SQLite objects stay in the thread that made them
            done["table"] = scorer.score(texts, cache=store, progress=False)
            done["stored"] = store.lookup(scorer.key, texts)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(limit_s)
    assert not worker.is_alive(), f"scoring {texts} took longer than {limit_s} s: no deadline"
    return done["table"], done["stored"]


@pytest.mark.parametrize("marker", ["[trickle]", "[trickle-head]"])
def test_a_trickling_server_is_cut_off_at_the_deadline(server, tmp_path, marker):
    server.trickle_seconds = 0.1  # every read returns well within the 0.5 s time-out: only a deadline can stop it
    scorer = scorer_for(server, deadline=1.0)
    text = f"{marker} drip"
    table, stored = _score_bounded(scorer, [text, "a healthy text"], tmp_path / "s.sqlite", limit_s=20)
    assert math.isnan(table.loc[0, "toxicity"]) and "1 s deadline" in table.loc[0, "error"]
    assert table.loc[1, list(ATTRIBUTES)].tolist() == pytest.approx(expected("a healthy text"))
    assert len(server.requests_for(text)) == 1  # no retry starts past the deadline
    assert set(stored) == {"a healthy text"}  # the cut-off text is not cached: a later run tries again


def test_a_hanging_server_costs_one_deadline_not_every_retry(server, tmp_path):
    server.slow_seconds = 60
    scorer = scorer_for(server, timeout=0.4, retries=5, backoff_factor=0.0, deadline=1.0)
    table, stored = _score_bounded(scorer, ["[slow] hangs"], tmp_path / "s.sqlite", limit_s=20)
    assert "deadline" in table.loc[0, "error"] and math.isnan(table.loc[0, "toxicity"])
    assert len(server.requests_for("[slow] hangs")) <= 3  # 6 attempts x 0.4 s without the deadline
    assert stored == {}


def test_a_retry_after_beyond_the_deadline_is_not_waited_for(server, tmp_path):
    server.retry_after = "30"
    scorer = scorer_for(server, deadline=1.0)
    table, stored = _score_bounded(scorer, ["[429x1] come back later"], tmp_path / "s.sqlite", limit_s=20)
    assert "deadline" in table.loc[0, "error"] and len(server.requests_for("[429x1] come back later")) == 1


def test_defaults_bound_a_request():
    import inspect

    defaults = inspect.signature(PerspectiveScorer).parameters
    assert defaults["deadline"].default <= 60 and defaults["timeout"].default <= defaults["deadline"].default


@pytest.mark.parametrize("marker,what", [("[str]", "'0.5' is a JSON str"), ("[bool]", "True is a JSON bool"),
                                         ("[nan]", "nan is outside")])
def test_scores_must_be_json_numbers_in_range(server, store, marker, what):
    scorer = scorer_for(server)
    text = f"{marker} typed"
    table = scorer.score([text], cache=store, progress=False)
    assert table[list(ATTRIBUTES)].isna().all().all() and what in table.loc[0, "error"]
    assert store.lookup(scorer.key, [text]) == {}  # not cached
