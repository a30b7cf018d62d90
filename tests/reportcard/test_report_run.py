"""A bundled model's report card on the command line reads every row from the sample record and gives the book's
verdicts for that model exactly. A model of another architecture, killed and resumed, is reported from an installed
wheel (``tests/test_wheel_report.py``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from toxlib.publish.scorecard import reading
from toxlib.store import paths

pytestmark = [pytest.mark.slow, pytest.mark.models, pytest.mark.data]


def _report(args, out, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "toxlib", "report", *args, "--out", str(out)],
                            cwd=paths.project_root(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)


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
    assert not (tmp_path / "smollm2-135m" / "chapters").exists()  # computed in the report's process: no notebook
