"""The estimate charges nothing for the rows an earlier run of a report chapter asked for that the user's cache
holds (issue 63, item 3): a chapter's rows log names them as they are served, and ``cached_work`` counts those the
cache still holds, in the work units the chapter's estimate charges."""

from __future__ import annotations

import sqlite3

import pytest

from toxlib.chapters.report_needs import ChapterWork
from toxlib.reportcard.cached import cached_work, left_after, rows_log
from toxlib.store.cache import GenerationStore, LMScoreStore, ScoreStore


@pytest.fixture
def logged(tmp_path, monkeypatch):
    """A cache folder and a rows log, both empty, that the stores write to."""
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    log = tmp_path / "rows" / "chapter.sqlite"
    log.parent.mkdir()
    monkeypatch.setenv("TOXLIB_ROWS_LOG", str(log))
    return log


def test_the_cached_rows_of_a_logged_run_are_counted_in_the_chapters_units(logged, tmp_path):
    with GenerationStore() as store:
        store.register_run("sd", {"decoding": {"max_new_tokens": 20}, "steering": {"name": "self-debiasing"}})
        store.add("sd", [("a prompt", i, "text", 7, True) for i in range(3)])
        store.register_run("plain", {"decoding": {"max_new_tokens": 10}, "steering": None})
        store.add("plain", [("a prompt", 0, "text", 4, True), ("another", 0, "text", 10, False)])
    with LMScoreStore() as store:
        store.add("nll", [("one sentence", 7, 1.5), ("two sentences", 5, 2.5)])
    with ScoreStore() as store:
        store.add("scorer@1", [(f"text {i}", {"toxicity": 0.1}, None) for i in range(4)])
    work, rows = cached_work(logged)
    assert rows == 11
    assert work == ChapterWork(gen_tokens=20, sd_tokens=60, read_tokens=12, scored_texts=4)
    with sqlite3.connect(logged) as con:  # the log names rows by hash: no text is kept twice
        assert con.execute("SELECT COUNT(*) FROM texts").fetchone() == (0,)
    (tmp_path / "cache" / "scores.sqlite").unlink()  # rows the cache no longer holds are charged again
    work, rows = cached_work(logged)
    assert rows == 7 and work.scored_texts == 0 and work.sd_tokens == 60


def test_rows_another_run_computed_are_not_counted(logged, tmp_path, monkeypatch):
    with ScoreStore() as store:
        store.add("scorer@1", [("logged", {"toxicity": 0.1}, None)])
    monkeypatch.setenv("TOXLIB_ROWS_LOG", str(tmp_path / "rows" / "other.sqlite"))
    with ScoreStore() as store:
        store.add("scorer@1", [("not logged", {"toxicity": 0.2}, None)])
    assert cached_work(logged) == (ChapterWork(scored_texts=1), 1)
    assert cached_work(tmp_path / "no log.sqlite") == (ChapterWork(), 0)


def test_the_work_left_is_never_below_nothing_and_the_log_names_model_values_and_device(tmp_path, monkeypatch):
    left = left_after(ChapterWork(gen_tokens=100, scored_texts=5), ChapterWork(gen_tokens=30, scored_texts=9))
    assert left == ChapterWork(gen_tokens=70, scored_texts=0)
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "cache"))
    one = rows_log("sass", "/m@sha256:a", {"n": 1}, "cpu")
    assert one.parent == tmp_path / "cache" / "report-rows" and one.name.startswith("sass-")  # beside the cache
    others = [rows_log("sass", "/m@sha256:b", {"n": 1}, "cpu"), rows_log("sass", "/m@sha256:a", {"n": 2}, "cpu"),
              rows_log("sass", "/m@sha256:a", {"n": 1}, "cuda"),
              rows_log("rtp_prompted", "/m@sha256:a", {"n": 1}, "cpu")]
    assert len({one, *others}) == 5


def test_a_rows_log_that_cannot_be_written_costs_the_estimate_not_the_run(tmp_path, monkeypatch):
    from toxlib.reportcard.runs import ChapterPlan, chapter_settings
    from toxlib.store import record_usage

    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    monkeypatch.setenv("TOXLIB_ROWS_LOG", str(tmp_path / "no such folder" / "log.sqlite"))
    monkeypatch.setattr(record_usage, "_ROWS_LOG_FAILED", [])
    with pytest.warns(RuntimeWarning, match="rows log .* could not be written") as said, ScoreStore() as store:
        store.add("scorer@1", [("one", {"toxicity": 0.1}, None)])
        store.add("scorer@1", [("two", {"toxicity": 0.2}, None)])
        assert len(store.lookup("scorer@1", ["one", "two"])) == 2  # the rows are kept all the same
    assert sum("rows log" in str(w.message) for w in said) == 1  # said once
    (tmp_path / "a file").write_text("")
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "a file"))  # no folder can be made there
    assert "TOXLIB_ROWS_LOG" not in chapter_settings(tmp_path, ChapterPlan("sass", True), "m", "cpu")
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "cache"))
    named = chapter_settings(tmp_path, ChapterPlan("sass", True), "m", "cpu")
    assert named["TOXLIB_ROWS_LOG"].startswith(str(tmp_path / "cache")) and named["TOXLIB_RECORD_CHAPTER"] == "sass"


def test_a_damaged_log_charges_every_row_and_any_folder_name_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "a cache #1?"))
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    log = tmp_path / "a log #1?.sqlite"
    monkeypatch.setenv("TOXLIB_ROWS_LOG", str(log))
    with ScoreStore() as store:
        store.add("scorer@1", [("one", {"toxicity": 0.1}, None)])
    assert cached_work(log) == (ChapterWork(scored_texts=1), 1)
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"not a database" * 100)
    assert cached_work(damaged) == (ChapterWork(), 0)
