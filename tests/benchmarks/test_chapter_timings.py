"""Chapters show committed benchmark runs by default and time this machine only when asked."""

from __future__ import annotations

import json

import pytest

from toxlib.benchmarks import chapter_timings

COLUMNS = ["model", "tok_s"]


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.setattr(chapter_timings, "runs_dir", lambda: tmp_path)
    monkeypatch.setattr(chapter_timings, "committed_runs_dir", lambda: tmp_path)
    return tmp_path


def _never():
    raise AssertionError("timed this machine without being asked")


def test_nothing_is_timed_by_default_and_an_untimed_table_is_empty_with_its_columns(runs):
    table = chapter_timings.timing_table("generation/speed", {"models": ["a"]}, False, _never, COLUMNS)
    assert table.empty and table.columns.tolist() == [*COLUMNS, "machine", "date"]
    assert "measure=True" in chapter_timings.not_timed_note("the speed comparison")


def test_a_measured_run_is_written_once_per_day_and_then_shown_by_default(runs):
    values = {"models": ["a"], "prompts": 2}
    for tok_s in (100.0, 120.0):  # a second run of the day replaces the first one's line
        shown = chapter_timings.timing_table("generation/speed", values, True,
                                             lambda t=tok_s: [{"model": "a", "tok_s": t, "extra": 1}], COLUMNS)
        assert shown["tok_s"].tolist() == [tok_s] and shown["machine"].iloc[0] == chapter_timings.this_machine()
    (written,) = chapter_timings.run_files()
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["rows"] == [{"model": "a", "tok_s": 120.0}]  # only the shown columns
    assert written.name == f"{chapter_timings.today()}-{chapter_timings.machine_slug()}-chapter-timings.jsonl"
    default = chapter_timings.timing_table("generation/speed", {"prompts": 2, "models": ["a"]}, False, _never,
                                           COLUMNS)
    assert default.drop(columns=["machine", "date"]).to_dict("records") == [{"model": "a", "tok_s": 120.0}]
    assert chapter_timings.timing_table("generation/speed", {**values, "prompts": 3}, False, _never,
                                        COLUMNS).empty  # other values: not the same timing


def test_runs_of_other_machines_are_shown_oldest_first_and_claims_rest_on_the_newest(runs):
    values = {"models": ["a"]}
    key = chapter_timings.key_of(values)
    for date, machine, tok_s in (("2026-11-27", "Intel Xeon, 16 threads", 900.0), ("2026-11-28", "AMD EPYC, 2 threads",
                                                                                  150.0)):
        line = {"table": "generation/speed", "key": key, "values": values, "rows": [{"model": "a", "tok_s": tok_s}],
                "machine": machine, "date": date}
        (runs / f"{date}-x-chapter-timings.jsonl").write_text(json.dumps(line) + "\n")
    shown = chapter_timings.timing_table("generation/speed", values, False, _never, COLUMNS)
    assert shown["tok_s"].tolist() == [900.0, 150.0] and shown["date"].tolist() == ["2026-11-27", "2026-11-28"]
    assert chapter_timings.newest_run(shown)["machine"].tolist() == ["AMD EPYC, 2 threads"]
    assert chapter_timings.timing_table("scorers/throughput", values, False, _never, COLUMNS).empty


def test_an_untimed_table_is_not_published_and_its_note_is_printed(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOXLIB_RESULTS_DIR", str(tmp_path / "results"))
    empty = chapter_timings.timing_table("generation/speed", {"models": ["a"]}, False, _never, COLUMNS)
    assert not chapter_timings.publish_timings("generation", "speed", empty, "Speed.", "the speed comparison")
    assert "measure=True" in capsys.readouterr().out and not (tmp_path / "results" / "generation").exists()
