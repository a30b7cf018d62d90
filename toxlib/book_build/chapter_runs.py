"""Whether the published notebooks come from one clean run: every chapter run (the facts of a notebook's last
execution, written by ``toxlib.book_build.runner``) names the same commit, none is ``+dirty``, none is a smoke or paper
run, and the library at that commit is the library of the checkout's HEAD.

A chapter run is stored twice in an executed notebook: as metadata ``toxlib.last_run`` (parameters, profile, smoke,
toxlib_version, commit, machine, finished, wall_s) and as its last cell, a markdown admonition ("Run record", the
readers' name for it) tagged ``CHAPTER_RUN_TAG`` that shows the same facts to the reader. Both are read here.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat

from toxlib.common.errors import ToxlibError
from toxlib.common.provenance import DECIDING_PATHS

CHAPTER_RUN_TAG = "toxlib-run-record"
LIBRARY_PATHS = DECIDING_PATHS  # what decides results (as git_commit's +dirty)


def chapter_run(path: str | Path) -> dict | None:
    """The chapter run of the notebook at ``path`` (metadata toxlib.last_run), with ``shown_cell`` added: the text
    of its last cell when that cell shows the run, else None. None when the notebook has never been run."""
    nb = nbformat.read(str(path), as_version=4)
    run = nb.metadata.get("toxlib", {}).get("last_run")
    if run is None:
        return None
    last = nb.cells[-1] if nb.cells else None
    shown = last.source if last is not None and CHAPTER_RUN_TAG in last.metadata.get("tags", []) else None
    return {**run, "shown_cell": shown}


def _same_library(repo: Path, commit: str) -> str | None:
    """None when what decides the numbers (``DECIDING_PATHS``: the library, its pins, the sample record) is the
    same at ``commit`` as at HEAD in ``repo``; else what differs."""
    done = subprocess.run(["git", "diff", "--stat", commit, "HEAD", "--", *LIBRARY_PATHS], cwd=repo,
                          capture_output=True, text=True)
    if done.returncode != 0:
        return f"commit {commit} is not in {repo} ({done.stderr.strip().splitlines()[-1] if done.stderr else ''})"
    changed = done.stdout.strip().splitlines()
    return f"the library changed since {commit}: {changed[-1].strip()}" if changed else None


def chapter_run_problems(notebooks: list[str | Path], repo: str | Path | None = None) -> list[str]:
    """What keeps ``notebooks`` from being one clean published run, one line per problem ([] when none).

    Checks every notebook has a chapter run, shown as its last cell with the commit of its metadata; that it is a
    default run (not smoke, not paper profile); that its commit is known and not ``+dirty``; that all name one
    commit; and, with ``repo`` (a git checkout), that the library at that commit equals HEAD's.
    """
    problems, commits = [], {}
    for path in map(Path, notebooks):
        run = chapter_run(path)
        if run is None:
            problems.append(f"{path.name}: no run record (execute it with python -m toxlib run or book)")
            continue
        commit = str(run.get("commit", "unknown"))
        commits.setdefault(commit, []).append(path.name)
        if run["shown_cell"] is None:
            problems.append(f"{path.name}: the last cell is not the run record")
        elif f"`{commit}`" not in run["shown_cell"]:
            problems.append(f"{path.name}: the shown run record does not name the metadata's commit {commit}")
        if run.get("smoke") or run.get("profile", "default") != "default":
            problems.append(f"{path.name}: a {run.get('profile', 'smoke')} run, not the default parameters")
        if commit.endswith("+dirty"):
            problems.append(f"{path.name}: run with uncommitted library changes ({commit})")
        elif commit.startswith("unknown"):
            problems.append(f"{path.name}: the run record names no commit ({commit})")
    if len(commits) > 1:
        listing = "; ".join(f"{c}: {', '.join(names)}" for c, names in sorted(commits.items()))
        problems.append(f"the run records name {len(commits)} commits, not one ({listing})")
    if repo is not None and len(commits) == 1:
        commit = next(iter(commits)).removesuffix("+dirty")
        if not commit.startswith("unknown"):
            differs = _same_library(Path(repo), commit)
            if differs:
                problems.append(differs)
    return problems


def check_one_clean_run(notebooks: list[str | Path], repo: str | Path | None = None) -> str:
    """The commit every notebook's chapter run names; ToxlibError listing ``chapter_run_problems`` when there are any
    (the fix: rebuild the whole book with python -m toxlib book at a clean commit and commit the results)."""
    if not notebooks:
        raise ToxlibError("no notebooks to check; give the book's notebooks (toxlib.book_build.book.toc_notebooks)")
    problems = chapter_run_problems(notebooks, repo)
    if problems:
        raise ToxlibError("the notebooks are not one clean run:\n  " + "\n  ".join(problems)
                          + "\nRebuild every chapter at one clean commit (python -m toxlib book) and commit them.")
    return str(chapter_run(notebooks[0])["commit"])
