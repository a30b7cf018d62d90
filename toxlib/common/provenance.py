"""Which toxlib computed a row: ``git_commit`` of a checkout and ``library_commit`` of the imported library.

Standard library only: ``toxlib.build.runner`` sends ``git_commit``'s source into each notebook's kernel.
"""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path


def git_commit(repo: Path) -> str:
    """Short commit of the checkout, with "+dirty" when toxlib has uncommitted changes; "unknown" outside git."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        # Only the library decides results; notebooks and results being rewritten by this very build do not count.
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "toxlib", "pyproject.toml"],
            cwd=repo, capture_output=True, text=True,
        ).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


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
