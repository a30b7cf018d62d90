"""A no-change rebuild executes nothing: the stamp of the last default build matches only while nothing that decides
or shows the numbers changed."""

from __future__ import annotations

import pytest

from toxlib.book_build import build_stamp


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    for name, text in {"toxlib/generate/api.py": "x = 1\n", "data/record/keys.csv": "key\n",
                       "benchmarks/runs/2026-01-01-cpu-chapter-timings.jsonl": "{}\n",
                       "notebooks/generation.ipynb": "{}\n", "data/results/generation/speed.csv": "a\n1\n",
                       "book/intro.md": "# Intro\n", "_toc.yml": "root: book/intro\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.delenv("TOXLIB_RECORD", raising=False)
    monkeypatch.delenv("TOXLIB_DEVICE", raising=False)
    return tmp_path


def test_a_fresh_checkout_has_no_stamp_and_executes(checkout):
    assert not build_stamp.unchanged_since(checkout)


def test_nothing_changed_since_the_stamp_means_nothing_to_execute(checkout):
    build_stamp.write_stamp(checkout)
    assert build_stamp.unchanged_since(checkout)
    (checkout / "toxlib" / "generate" / "__pycache__").mkdir()
    (checkout / "toxlib" / "generate" / "__pycache__" / "api.cpython-311.pyc").write_bytes(b"\0")
    assert build_stamp.unchanged_since(checkout)  # bytecode decides nothing


@pytest.mark.parametrize("changed", ["toxlib/generate/api.py", "data/record/keys.csv", "notebooks/generation.ipynb",
                                     "data/results/generation/speed.csv", "book/intro.md", "_toc.yml",
                                     "benchmarks/runs/2026-01-01-cpu-chapter-timings.jsonl"])
def test_any_change_to_what_decides_or_shows_the_numbers_executes_again(checkout, changed):
    build_stamp.write_stamp(checkout)
    (checkout / changed).write_text((checkout / changed).read_text() + " ")
    assert not build_stamp.unchanged_since(checkout)


def test_a_new_benchmark_run_or_another_setting_executes_again(checkout, monkeypatch):
    build_stamp.write_stamp(checkout)
    (checkout / "benchmarks" / "runs" / "2026-02-01-cpu-chapter-timings.jsonl").write_text("{}\n")
    assert not build_stamp.unchanged_since(checkout)
    build_stamp.write_stamp(checkout)
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    assert not build_stamp.unchanged_since(checkout)
    build_stamp.forget(checkout)
    monkeypatch.delenv("TOXLIB_RECORD")
    assert not build_stamp.unchanged_since(checkout)
