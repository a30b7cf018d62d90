"""Which toxlib computed a row: ``git_commit`` of a checkout, ``uncommitted_files`` that make it "+dirty", and
``library_commit`` of the imported library.

What decides a number (``DECIDING_PATHS``): the library (``toxlib/``), its declared dependencies
(``pyproject.toml``), the exact releases installed (the lock files in ``requirements/``) and the sample record the
caches read first (``data/record/``, but its audit history ``audits.csv``, from which no number is read). Notebooks
and results, rewritten by the very build that records the commit, do not count.

Standard library only: ``toxlib.book_build.runner`` sends these functions' source (and ``DECIDING_PATHS``) into each
notebook's kernel.
"""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path

#: git pathspecs of what decides a number; a change to any makes a commit "+dirty"
DECIDING_PATHS = ("toxlib", "pyproject.toml", "requirements", "data/record", ":(exclude)data/record/audits.csv")


def uncommitted_files(repo: Path, pathspecs: tuple[str, ...] = DECIDING_PATHS) -> list[str]:
    """The files under ``pathspecs`` (git pathspecs relative to ``repo``, default ``DECIDING_PATHS``) that differ
    from the checkout's HEAD (modified, added, deleted; paths relative to the checkout's top, sorted); [] outside
    git. Untracked files count only inside data/record/ (a new module nothing committed imports changes nothing)."""
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--no-renames", "--", *pathspecs],
            cwd=repo, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return []
    found = []
    for line in done.stdout.splitlines():
        status, name = line[:2], line[3:].strip().strip('"')
        if status == "??" and not name.startswith("data/record/"):
            continue  # a new untracked module of the library is not imported by anything committed
        if name.endswith((".pyc", "/")) or "__pycache__" in name:
            continue
        found.append(name)
    return sorted(found)


def git_commit(repo: Path) -> str:
    """Short commit of the checkout, with "+dirty" when what decides a number (``DECIDING_PATHS``) has uncommitted
    changes (``uncommitted_files``); "unknown" outside git."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if uncommitted_files(repo) else "")


@functools.lru_cache(maxsize=1)
def library_commit() -> str:
    """The commit of the toxlib this process imported ("<12 hex>[+dirty]"), or "toxlib <version>" for an
    installed copy outside a git checkout. Asked once per process (two ``git`` calls)."""
    root = Path(__file__).resolve().parents[2]  # toxlib/common/provenance.py -> the checkout
    commit = git_commit(root) if (root / ".git").exists() else "unknown"
    if commit == "unknown":
        try:
            commit = f"toxlib {metadata.version('toxlib')}"
        except metadata.PackageNotFoundError:
            pass
    return commit


def uncommitted_in(folder: Path, ignore: tuple[str, ...] = ()) -> list[str]:
    """The files inside ``folder`` that differ from its git checkout's HEAD (``uncommitted_files``), except the
    names in ``ignore`` (relative to ``folder``); [] when ``folder`` is not inside a git checkout."""
    try:
        top = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True,
                                  text=True, check=True).stdout.strip())
        inside = Path(folder).resolve().relative_to(top.resolve()).as_posix()
    except (OSError, ValueError, subprocess.CalledProcessError):
        return []
    return uncommitted_files(top, (inside, *(f":(exclude){inside}/{name}" for name in ignore)))
