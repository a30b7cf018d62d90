"""``bench serve``'s parts on 127.0.0.1 against a fast stand-in scorer: its batch requests are what Google's batch
format holds, and one cell counts texts, latencies and failures."""

from __future__ import annotations

import json

import pytest
from local_server import LengthScorer, Running

from toxlib.benchmarks.serve_capacity import TextSource, batch_body, run_cell
from toxlib.scorers.serve import make_app
from toxlib.scorers.serve_batch import split_batch
from toxlib.scorers.serve_wire import ANALYZE_PATH


def test_a_batch_body_holds_one_analyze_part_per_text():
    body, kind = batch_body(["first text", "second, \"quoted\" text"], "TOXICITY")
    parts = split_batch(kind, body, 100)
    assert [(method, path) for _, method, path, _, _ in parts] == [("POST", ANALYZE_PATH)] * 2
    assert [json.loads(b)["comment"]["text"] for *_, b in parts] == ["first text", "second, \"quoted\" text"]


@pytest.mark.parametrize("mode,batch", [("single", 1), ("batch", 5)])
def test_a_cell_counts_texts_latencies_and_failures(mode, batch, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Running(make_app(LengthScorer(), cache=False)) as running:
        row = run_cell(running.port, mode, 2, 0.5, batch, "TOXICITY", TextSource(["a text", "another text"]))
    assert row["failed_parts"] == 0 and row["texts"] == row["requests"] * batch > 0
    assert 0 < row["p50_ms"] <= row["p99_ms"] and row["texts_per_s"] > 0
    with Running(make_app(LengthScorer(), cache=False)) as running:
        bad = run_cell(running.port, mode, 1, 0.3, batch, "THREAT", TextSource(["a text"]))  # not served: 400
    assert bad["texts"] == 0 and bad["failed_parts"] == bad["requests"] * batch > 0
