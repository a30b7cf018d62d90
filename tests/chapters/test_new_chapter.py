"""Adding a paper is a recipe: ``python -m toxlib new-chapter NAME`` writes a working chapter, and in a copy of the
project it is found, with no list edited, by ``toxlib chapters``, the table of contents, the smoke run of its
notebook, the scorecard and a report card; its own test passes and ruff finds nothing in what it wrote."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from toxlib.models.tiny import tiny_causal_lm
from toxlib.store import paths

ROOT = paths.project_root()
pytestmark = [pytest.mark.slow, pytest.mark.data]


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """The checkout's files (tracked and new, the sample record left out: the toy computes its rows) in a folder
    of their own, as a contributor's clone."""
    target = tmp_path_factory.mktemp("project")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    for name in files:
        if name.startswith("data/record/") or not (ROOT / name).is_file():
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes((ROOT / name).read_bytes())
    return target


def _toxlib(copy, *args, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(copy)}  # the copy's toxlib, not the checkout's
    return subprocess.run([sys.executable, "-m", *args], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_a_new_chapter_is_found_everywhere_without_editing_a_list(copy, tmp_path):
    made = _toxlib(copy, "toxlib", "new-chapter", "toy", "--title", "A toy chapter", "--paper", "The toy paper")
    assert made.returncode == 0, made.stderr
    again = _toxlib(copy, "toxlib", "new-chapter", "toy")
    assert again.returncode == 2 and "exists already" in again.stderr and "Traceback" not in again.stderr
    listed = _toxlib(copy, "toxlib", "chapters")
    assert "toy: A toy chapter" in listed.stdout, listed.stderr
    written = _toxlib(copy, "toxlib", "chapters", "--write-toc")  # what `toxlib book` does before it builds
    assert written.returncode == 0, written.stderr
    assert "      - file: notebooks/toy\n  - caption: Summary" in (copy / "_toc.yml").read_text()  # the last chapter

    model = str(tiny_causal_lm(tmp_path / "tiny"))
    ran = _toxlib(copy, "toxlib", "run", "notebooks/toy.ipynb", "--smoke", "-p", "models", f'["{model}"]')
    assert ran.returncode == 0, ran.stderr[-2000:]
    results = copy / "_build" / "smoke" / "src" / "data" / "results"
    claims = pd.read_csv(results / "toy" / "claims.csv")
    assert list(claims["id"]) == [f"rarely_toxic:model:{model}"] and claims["n"].tolist() == [4]
    card = _toxlib(copy, "toxlib", "run", "book/scorecard.ipynb", "--smoke")
    assert card.returncode == 0, card.stderr[-2000:]
    assert "The toy paper" in (copy / "_build" / "smoke" / "src" / "book" / "scorecard.ipynb").read_text()

    report = _toxlib(copy, "toxlib", "report", "--model", model, "--name", "tiny", "--chapters", "toy", "--budget",
                     "smoke", "--out", str(tmp_path / "reports"))
    assert report.returncode == 0, report.stderr[-2000:]
    rows = pd.read_csv(tmp_path / "reports" / "tiny" / "report.csv")
    assert rows[["paper", "chapter", "id"]].values.tolist() == [["The toy paper", "toy", "rarely_toxic:model:tiny"]]

    tested = _toxlib(copy, "pytest", "-q", "-p", "no:cacheprovider", "tests/papers/toy",
                     "tests/chapters/test_notebooks_are_narrative.py", "tests/publish/test_captions.py")
    assert tested.returncode == 0, tested.stdout[-3000:]
    linted = _toxlib(copy, "ruff", "check", "toxlib/chapters/toy.py", "toxlib/papers/toy", "tests/papers/toy")
    assert linted.returncode == 0, linted.stdout
