"""Where toxlib reads and writes on disk.

Every location can be moved with an environment variable (declared in ``toxlib.common.settings``):
  TOXLIB_DATA_DIR      downloaded data files (default: <project>/data/downloads, git-ignored)
  TOXLIB_RESULTS_DIR   tables, figures and claims written by notebooks (default: <project>/data/results)
  TOXLIB_DATA_MIRROR   a local mirror laid out as owner/repo/path to copy data from instead of downloading
  TOXLIB_CACHE_DIR     generation and score stores (default: ~/.cache/toxlib, or $XDG_CACHE_HOME/toxlib)
  TOXLIB_MODEL_CACHE   bundled models converted to safetensors (default: <TOXLIB_CACHE_DIR>/models)
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from toxlib.common import settings
from toxlib.common.errors import ToxlibError

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the toxlib package (this file is toxlib/store/paths.py)


def project_root() -> Path:
    """The checkout holding _toc.yml and data/sources.yaml (toxlib is installed editable from it)."""
    root = PACKAGE_DIR.parent
    if (root / "data" / "sources.yaml").exists():
        return root
    raise ToxlibError(
        f"toxlib at {PACKAGE_DIR} is not inside the companion's checkout (no data/sources.yaml beside it). "
        "Install it editable from the repository: pip install -e ."
    )


def registry_file() -> Path:
    return project_root() / "data" / "sources.yaml"


def data_dir() -> Path:
    return settings.path("TOXLIB_DATA_DIR") or project_root() / "data" / "downloads"


def results_dir() -> Path:
    return settings.path("TOXLIB_RESULTS_DIR") or project_root() / "data" / "results"


def mirror_dir() -> Path | None:
    return settings.path("TOXLIB_DATA_MIRROR")


def cache_dir() -> Path:
    """Root of toxlib's user caches (generation and score stores)."""
    base = settings.path("XDG_CACHE_HOME") or (Path.home() / ".cache").resolve()
    return settings.path("TOXLIB_CACHE_DIR") or base / "toxlib"


def model_cache_dir() -> Path:
    """Where bundled GGUF models are stored once converted to safetensors (one folder per weights sha256)."""
    return settings.path("TOXLIB_MODEL_CACHE") or cache_dir() / "models"


def smoke_dir() -> Path:
    """Where smoke runs (tiny parameters) write: <project>/_build/smoke (git-ignored), never data/results."""
    return project_root() / "_build" / "smoke"


def smoke_results_dir() -> Path:
    """Results of smoke runs: the smoke book's staging results folder, <project>/_build/smoke/src/data/results."""
    return smoke_dir() / "src" / "data" / "results"


def new_file_mode() -> int:
    """The permission bits a new file gets: 0o666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def new_folder_mode() -> int:
    """The permission bits a new folder gets: 0o777 less the umask (a folder from ``tempfile.mkdtemp`` is 0700)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def replace_keeping_mode(partial: str | Path, target: str | Path) -> None:
    """``os.replace(partial, target)`` (atomic), giving ``partial`` first the permission bits of the file it
    replaces, or for a new file the umask's default (``new_file_mode``). A temporary file from
    ``tempfile.mkstemp`` is 0600, so without this a rewritten notebook or data file would lose group and other
    read access."""
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_file_mode()
    os.chmod(partial, mode)
    os.replace(partial, target)


@contextlib.contextmanager
def written_atomically(path: Path):
    """Yield a temporary path beside ``path`` (parents created) to write a file to; when the block ends without an
    error it is renamed over ``path``, else removed. A reader, or a run killed mid-write, never sees a half-written
    file, and two processes writing the same file do not share a temporary (its name carries the process id)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial{path.suffix}")
    try:
        yield partial
        replace_keeping_mode(partial, path)
    finally:
        partial.unlink(missing_ok=True)
