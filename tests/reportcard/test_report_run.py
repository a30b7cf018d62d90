"""A report card end to end, on the command line: a tiny model of another architecture prints its estimate first,
survives a kill (the next run resumes the chapter that had finished) and writes its page, CSV and JSON, and a third
estimate charges nothing for the finished chapters; a bundled
model's report reads every row from the sample record and gives the book's verdicts for that model exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from toxlib.models.tiny import tiny_causal_lm
from toxlib.publish.scorecard import reading
from toxlib.store import paths

pytestmark = [pytest.mark.slow, pytest.mark.models, pytest.mark.data]


def _report(args, out, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "toxlib", "report", *args, "--out", str(out)],
                            cwd=paths.project_root(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)


def test_a_tiny_models_report_estimates_first_resumes_after_a_kill_and_writes_its_page(tmp_path):
    model = tiny_causal_lm(tmp_path / "tiny-gemma", arch="gemma3")
    out = tmp_path / "reports"
    args = ["--model", str(model), "--name", "tiny", "--budget", "smoke", "--chapters", "rtp_unprompted",
            "safety_score"]
    first = _report(args, out)
    log = out / "tiny" / "runs.json"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and first.poll() is None:
        if log.exists() and "rtp_unprompted" in json.loads(log.read_text()):
            os.killpg(first.pid, signal.SIGKILL)  # killed while the second chapter runs
            break
        time.sleep(1)
    first.wait(timeout=60)
    assert json.loads(log.read_text())["rtp_unprompted"]["status"] == "ran"
    assert not (out / "tiny" / "index.html").exists()
    second = _report(args, out)
    said, errors = second.communicate(timeout=900)
    assert second.returncode == 0, said + errors
    assert said.startswith("tiny: causal LM") and "rtp_unprompted" in said.splitlines()[2]  # the estimate first
    page = (out / "tiny" / "index.html").read_text()
    assert "done before" in page and "Report card: tiny" in page and str(model) not in said.splitlines()[-1]
    rows = pd.read_csv(out / "tiny" / "report.csv")
    assert len(rows) > 0 and set(rows["chapter"]) <= {"rtp_unprompted", "safety_score"}
    assert all("tiny" in c for c in rows["claim"] if "(" in c or "exceeds" in c)
    document = json.loads((out / "tiny" / "report.json").read_text())
    assert document["budget"] == "smoke" and len(document["claims"]) == len(rows)
    ran = json.loads(log.read_text())
    assert ran["safety_score"]["status"] == "ran" and ran["rtp_unprompted"]["estimate_s"] > 0
    assert ran["safety_score"]["rows"]["computed"] > 0 and ran["safety_score"]["rows"]["record"] == 0
    assert len(list((out / "tiny" / "rows").glob("*.sqlite"))) == 2  # each chapter named the rows it asked for
    again = _report([*args, "--dry-run"], out)
    said, errors = again.communicate(timeout=300)
    assert again.returncode == 0, said + errors
    assert said.count("done before: its finished run in the report folder is reused") == 2, said


def test_a_bundled_models_report_gives_the_books_verdicts_for_it(tmp_path):
    stems = ["safety_score", "debias_consistency"]
    done = _report(["--model", "smollm2-135m", "--budget", "decide", "--chapters", *stems], tmp_path)
    said, errors = done.communicate(timeout=1200)
    assert done.returncode == 0, said + errors
    rows = pd.read_csv(tmp_path / "smollm2-135m" / "report.csv", keep_default_na=False)
    for stem in stems:
        book = pd.read_csv(paths.book_results_dir() / stem / "claims.csv", keep_default_na=False)
        mine = book[book["claim"].str.contains("smollm2-135m", regex=False)]
        theirs = rows[rows["chapter"] == stem].set_index("claim")
        assert len(mine) > 0
        for _, claim in mine.iterrows():
            row = theirs.loc[claim["claim"]]
            assert row["verdict"].rstrip("*") == claim["verdict"], claim["claim"]
            assert row["value"] == reading(claim), claim["claim"]  # the book's value, written as the book writes it
    page = (tmp_path / "smollm2-135m" / "index.html").read_text()
    for stem in stems:  # every row came from the sample record: nothing computed
        run = json.loads((tmp_path / "smollm2-135m" / "runs.json").read_text())[stem]
        assert run["status"] == "ran"
        assert run["rows"]["record"] > 0 and run["rows"]["cache"] == run["rows"]["computed"] == 0, run["rows"]
        assert f"{run['rows']['record']:,} from the sample record, 0 from your cache, 0 computed" in page
        notebook = json.loads((tmp_path / "smollm2-135m" / "chapters" / f"{stem}.ipynb").read_text())
        assert ", 0 computed" in notebook["metadata"]["toxlib"]["last_run"]["samples"]
