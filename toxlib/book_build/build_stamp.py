"""Whether a default build would only repeat the last one on this checkout: then ``toxlib book`` builds the HTML
from the notebooks as they are, without executing them (a no-change rebuild; ``--force`` executes anyway).

After a default build of every chapter, ``write_stamp`` keeps in ``_build/toxlib-build-stamp.json`` the digest of
what decides the numbers (the library, its pins, the sample record: ``DECIDING_PATHS``, and the committed benchmark
runs the timing tables show), of what the build wrote (the notebooks, the book's pages, ``data/results/``), the
library versions and the settings every kernel inherits (``TOXLIB_RECORD``, ``TOXLIB_DEVICE``). ``unchanged_since``
is true when all of them are the same now. A fresh clone has no stamp, so its first build executes every chapter.

Written by hand: the build's own inputs and outputs are this project's convention, which no build tool knows.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from toxlib.book_build.machine import library_versions
from toxlib.common import settings
from toxlib.common.provenance import DECIDING_PATHS

STAMP = Path("_build") / "toxlib-build-stamp.json"
#: what decides a default build's numbers: what decides a run record's commit (``DECIDING_PATHS``, its git
#: exclusions dropped: a stamp may only err towards executing) and the committed benchmark runs the timing tables show
DECIDING = (*(p for p in DECIDING_PATHS if not p.startswith(":")), "benchmarks/runs")
#: what a build writes and reads back as its sources: the notebooks, the book's pages, the results
WRITTEN = ("notebooks", "book", "data/results", "_toc.yml")
SKIPPED = ("__pycache__", ".ipynb_checkpoints")


def tree_digest(root: Path, names: tuple[str, ...]) -> str:
    """sha256 over the relative path and content of every file under ``names`` (files or folders of ``root``), in
    path order; caches and checkpoints left out."""
    digest = hashlib.sha256()
    for name in names:
        top = root / name
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else []
        for path in files:
            if any(part in SKIPPED for part in path.parts) or path.suffix == ".pyc":
                continue
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build_facts(root: Path) -> dict:
    """The facts a stamp compares (module docstring)."""
    return {"deciding": tree_digest(root, DECIDING), "written": tree_digest(root, WRITTEN),
            "libraries": library_versions(),
            "settings": {name: settings.raw(name) or "" for name in ("TOXLIB_RECORD", "TOXLIB_DEVICE")}}


def write_stamp(root: Path) -> Path:
    """Keep this checkout's ``build_facts`` after a default build of every chapter. Returns the stamp's path."""
    path = root / STAMP
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(build_facts(root), indent=1) + "\n")
    return path


def unchanged_since(root: Path) -> bool:
    """True when the last default build's stamp matches ``build_facts`` now (nothing to execute again)."""
    path = root / STAMP
    try:
        return json.loads(path.read_text()) == build_facts(root)
    except (OSError, ValueError):
        return False


def forget(root: Path) -> None:
    """Drop the stamp (a build that executes only some chapters, or fails, leaves none behind)."""
    (root / STAMP).unlink(missing_ok=True)
