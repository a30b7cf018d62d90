"""``python -m toxlib score``'s output: a closed or full standard output is an error with a non-zero exit, a reader
that has gone (``| head -1``) ends it quietly as Unix tools end, and a text longer than the scorer reads is marked in
the CSV and counted on standard error (subprocesses, as a user runs them)."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

SCORE = [sys.executable, "-m", "toxlib", "score", "--scorer", "profanity-svm", "--no-cache"]


def test_a_closed_standard_output_is_an_error_not_a_silent_success(tmp_path):
    texts = tmp_path / "in.txt"
    texts.write_text("hello friend\n")
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *SCORE, str(texts)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "standard output is closed" in done.stderr and "> scores.csv" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_full_standard_output_is_a_one_line_error(tmp_path):
    with open("/dev/full", "w") as full:
        done = subprocess.run(SCORE, input=b"hello friend\nfuck off\n", stdout=full, stderr=subprocess.PIPE,
                              timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err and "Exception ignored" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0]


def test_a_reader_that_has_gone_ends_it_quietly_with_the_sigpipe_status():
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write gets EPIPE
    try:
        done = subprocess.run(SCORE, input=b"hello friend\nfuck off\n", stdout=write_end, stderr=subprocess.PIPE,
                              timeout=300)
    finally:
        os.close(write_end)
    err = done.stderr.decode()
    assert done.returncode == 141, err
    assert "Traceback" not in err and "Exception ignored" not in err and "error" not in err


def test_head_reads_the_first_line_and_score_leaves_no_traceback(tmp_path):
    texts = tmp_path / "in.txt"
    texts.write_text("".join(f"text number {i} to score\n" for i in range(20000)))  # about 1.4 MB of CSV
    done = subprocess.run(["bash", "-c", '"$@" | head -1; exit "${PIPESTATUS[0]}"', "bash", *SCORE, str(texts)],
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.startswith('"line","text","profanity"') and done.stdout.count("\n") == 1
    assert done.returncode == 141 and "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


@pytest.mark.models
def test_a_text_longer_than_the_window_is_marked_and_counted(tmp_path):
    """The distilled scorer reads 128 tokens: a 3,000-word line is scored on its first 128 tokens, and says so."""
    texts = tmp_path / "in.txt"
    texts.write_text("a short one\n" + "word " * 3000 + "\n")
    done = subprocess.run([sys.executable, "-m", "toxlib", "score", "--no-cache", str(texts)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout, newline="")))
    assert list(rows[0])[:3] == ["line", "text", "toxicity"] and list(rows[0])[-1] == "truncated"
    assert rows[0]["truncated"] == "" and rows[1]["truncated"] == "first 128 of 3002 tokens"  # [CLS] + 3,000 + [SEP]
    assert "note: 1 of 2 text(s) are longer than the distilled scorer reads" in done.stderr
    assert "first 128 tokens (column truncated)" in done.stderr


@pytest.mark.models
def test_truncation_counts_the_tokens_the_scorer_cuts():
    from toxlib.scorers import get_scorer

    scorer = get_scorer("distilled")
    assert scorer.truncation(["hello world", "word " * 126, "word " * 127]) == [None, None, (128, 129)]
