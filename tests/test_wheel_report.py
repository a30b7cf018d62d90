"""The README's report command from an installed wheel: ``pip install "toxlib[report]"`` into a fresh virtual
environment (``wheel_env``: offline, no checkout visible), then ``toxlib report --model <folder> --budget smoke`` in
an empty folder: killed once its first chapter has finished, run again (it resumes, its estimate charges nothing for
that chapter and reuses the first run's timing of the model), and estimated a third time (every chapter done before).
The chapters' notebooks, the data registry and the book's claims travel in the wheel (pyproject.toml's
``wheel-companion``); data come from the mirror (standing in for the download), caches go to the user's cache
folder, and nothing is written inside the installed package. A model of an architecture the bundled ones are not
(Gemma-3 text with random weights) stands for the reader's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from wheel_env import build_wheel, fresh_environment, no_deps_packages, user_env

from toxlib.chapters import model_chapters
from toxlib.models.tiny import tiny_causal_lm
from toxlib.store import paths

pytestmark = [pytest.mark.slow, pytest.mark.models, pytest.mark.data]


def _package_files(venv: Path) -> dict[str, int]:
    """{path: mtime_ns} of every file of the installed toxlib package except bytecode."""
    [package] = venv.glob("lib/python*/site-packages/toxlib")
    return {str(p.relative_to(package)): p.stat().st_mtime_ns for p in package.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _killed_after_the_first_chapter(process: subprocess.Popen, log: Path) -> None:
    """Kill ``process`` (a report) once ``log`` (its runs.json) records a finished chapter, before the last one."""
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and process.poll() is None:
        if log.exists() and json.loads(log.read_text()):
            os.killpg(process.pid, signal.SIGKILL)  # killed while the second chapter runs
            break
        time.sleep(0.05)  # a smoke chapter of a tiny model can finish in about a second
    process.wait(timeout=60)
    statuses = [run["status"] for run in json.loads(log.read_text()).values()]
    assert set(statuses) == {"ran"} and len(statuses) < len(model_chapters()), f"killed too late: {statuses}"


def test_an_installed_wheel_runs_a_report_card_in_an_empty_folder(tmp_path):
    timings, start = {}, time.monotonic()
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    assert "toxlib/companion/data/sources.yaml" in shipped
    assert "toxlib/reportcard/human_reference.json" in shipped  # the domain check's human side, not recomputed
    for stem in model_chapters():
        assert f"toxlib/companion/notebooks/{stem}.ipynb" in shipped, stem
        assert f"toxlib/companion/data/results/{stem}/claims.csv" in shipped, stem
    assert not any(n.startswith("toxlib/companion/data/record/") for n in shipped)  # the record stays out
    python = fresh_environment(wheel, tmp_path, ("report",), no_deps_packages(""))
    venv = python.parent.parent
    timings["environment"] = time.monotonic() - start

    model = tiny_causal_lm(tmp_path / "tiny-gemma", arch="gemma3")  # an architecture the bundled models are not
    home, work = tmp_path / "home", tmp_path / "empty"
    home.mkdir()
    work.mkdir()
    before = _package_files(venv)
    # the bundled models converted once per machine, as a user who ran toxlib before has them (and no second 540 MB
    # conversion on the test machine's disk); every other cache starts empty in the user's cache folder
    env = user_env(venv, home, TOXLIB_DATA_MIRROR=str(paths.mirror_dir()),
                   TOXLIB_MODEL_CACHE=str(paths.model_cache_dir()))
    command = [venv / "bin" / "toxlib", "report", "--model", str(model), "--name", "tiny", "--budget", "smoke",
               "--out", "reports"]
    folder = work / "reports" / "tiny"
    _killed_after_the_first_chapter(subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.DEVNULL,
                                                     stderr=subprocess.DEVNULL, start_new_session=True),
                                    folder / "runs.json")
    assert not (folder / "index.html").exists()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=1200)
    timings["report"] = time.monotonic() - start - timings["environment"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = done.stdout.splitlines()
    assert said[0].startswith("tiny: causal LM")  # the estimate first, which charges nothing for the finished chapter
    assert any(line.split()[:3] == [model_chapters()[0], "done", "before:"] for line in said[:12]), done.stdout
    assert "timed by an earlier report at" in said[1], said[1]  # the killed run's timing, not a second one
    assert str(model) not in said[-1] and "page:" in said[-1]
    runs = json.loads((folder / "runs.json").read_text())
    assert {stem: run["status"] for stem, run in runs.items()} == dict.fromkeys(model_chapters(), "ran")
    rows = pd.read_csv(folder / "report.csv")
    assert set(rows["chapter"]) == set(model_chapters())
    claims = json.loads((folder / "report.json").read_text())["claims"]
    bundled = {entry["model"] for claim in claims for entry in claim["bundled"]}
    assert {"smollm2-135m", "gemma3-270m"} <= bundled  # the book's columns, from the claims the wheel carries
    assert {p.name for p in (folder / "figures").glob("*.png")} == {"unprompted.png", "table2.png", "safety.png"}
    assert sum(run["rows"].get("computed", 0) for run in runs.values()) > 0
    assert all(run["rows"].get("record", 0) == 0 for run in runs.values())  # the record stays in the clone
    logs = home / ".cache" / "toxlib" / "report-rows"  # each chapter named its rows, beside the cache they are in
    assert len(list(logs.glob("*.sqlite"))) == len(model_chapters())
    page = (folder / "index.html").read_text()
    assert "Report card: tiny" in page and "not inside the companion" not in page and "done before" in page
    assert (home / ".cache" / "toxlib" / "generations.sqlite").exists()  # the user's cache folder
    assert sorted(p.name for p in work.iterdir()) == ["reports"]  # results under --out, nothing else in the folder
    assert _package_files(venv) == before  # nothing written into the installed package
    again = subprocess.run([*command, "--dry-run"], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert again.stdout.count("done before: its finished run in the report folder is reused") == len(
        model_chapters()), again.stdout
    print(json.dumps({"seconds": {k: round(v, 1) for k, v in timings.items()}}))  # shown with pytest -s
