"""Where toxlib reads and writes on disk.

In a checkout (toxlib installed editable from it) the companion's files are the checkout's. Installed from a wheel,
toxlib carries the files a report card needs under ``toxlib/companion/`` (``companion_root``: the data registry, the
chapters' notebooks, the book's claims; listed in pyproject.toml's ``wheel-companion``), downloads go to the user's
cache folder and results to ``./results`` of the working folder; the book build and smoke runs need a checkout.

Every location can be moved with an environment variable (declared in ``toxlib.common.settings``):
  TOXLIB_DATA_DIR      downloaded data files (default: <project>/data/downloads, git-ignored; installed:
                       <TOXLIB_CACHE_DIR>/downloads)
  TOXLIB_RESULTS_DIR   tables, figures and claims written by notebooks (default: <project>/data/results;
                       installed: ./results)
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
#: where a wheel carries the companion's files (setup.py copies them there, paths as in the checkout)
PACKAGED_COMPANION = PACKAGE_DIR / "companion"


def in_checkout() -> bool:
    """Whether toxlib is imported from the companion's checkout (data/sources.yaml beside the package)."""
    return (PACKAGE_DIR.parent / "data" / "sources.yaml").exists()


def project_root() -> Path:
    """The checkout holding _toc.yml and data/sources.yaml (toxlib is installed editable from it); what only a
    checkout has (the book build, smoke runs, benchmark runs) needs it."""
    if in_checkout():
        return PACKAGE_DIR.parent
    raise ToxlibError(
        f"toxlib at {PACKAGE_DIR} is not inside the companion's checkout (no data/sources.yaml beside it), and this "
        "needs the checkout: git clone the companion and pip install -e . inside it"
    )


def companion_root() -> Path:
    """Where the companion's files lie: the checkout, or the files a wheel carries (``PACKAGED_COMPANION``)."""
    if in_checkout():
        return PACKAGE_DIR.parent
    if (PACKAGED_COMPANION / "data" / "sources.yaml").exists():
        return PACKAGED_COMPANION
    raise ToxlibError(
        f"toxlib at {PACKAGE_DIR} has neither a checkout beside it nor the companion files a wheel carries "
        f"({PACKAGED_COMPANION}): reinstall it from a wheel built by pip (pip install toxlib[report]), or pip "
        "install -e . inside a checkout"
    )


def registry_file() -> Path:
    return companion_root() / "data" / "sources.yaml"


def book_results_dir() -> Path:
    """The book's published results (claims, tables): the checkout's data/results, or the part a wheel carries."""
    return companion_root() / "data" / "results"


def data_dir() -> Path:
    if settings.path("TOXLIB_DATA_DIR"):
        return settings.path("TOXLIB_DATA_DIR")
    return project_root() / "data" / "downloads" if in_checkout() else cache_dir() / "downloads"


def results_dir() -> Path:
    if settings.path("TOXLIB_RESULTS_DIR"):
        return settings.path("TOXLIB_RESULTS_DIR")
    return project_root() / "data" / "results" if in_checkout() else Path.cwd() / "results"


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
