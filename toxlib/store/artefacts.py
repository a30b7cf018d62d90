"""The one cache of computed things kept between runs, besides the SQLite stores of rows: trained files (the
vocabulary shift's weights, PPLM's discriminator, an adapted model's folder and training metadata), deterministic
tables (``artefact_frame``: the generation chapter's nucleus statistics), timings, bootstrap bounds, digests of model
files and loaded tokenizers.

An artefact is named "<kind>/<file name>" (``artefact_name``: "<kind>/<label>-<stable_hash(key)[:16]><suffix>",
where ``key`` holds everything that decides the artefact and never where the code that makes it lives). A name is
looked up in order:

  1. the sample record's copy (``data/record/artefacts/<name>``), for artefacts asked for with ``recorded=True``:
     trained files whose last bits differ between CPUs, so every machine uses the same ones, and tables a default
     build would otherwise spend minutes recomputing (checked against the record's SHA256SUMS;
     ``toxlib.store.record_reader``);
  2. the user's cache: ``<root>/<name>``, root ``toxlib.store.paths.cache_dir()`` unless given
     (``model_cache_dir()`` for what belongs with the converted models);
  3. made by the caller's function into a temporary file or folder beside it, then renamed into place, so a run
     killed mid-way leaves nothing that looks finished (``tests/store/test_artefacts.py``).

A recorded artefact a build used is named in its usage log, so ``python -m toxlib record write`` copies it into the
record. Callers say which artefact they need and how to make it; none of them reads the record itself.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Callable

from filelock import FileLock, Timeout

from toxlib.store import paths
from toxlib.store.keys import stable_hash
from toxlib.store.paths import written_atomically
from toxlib.store.record_reader import gzip_bytes
from toxlib.store.record_usage import note_artefact, recorded_artefact


def artefact_name(kind: str, label: str, key, suffix: str = "") -> str:
    """"<kind>/<label>-<first 16 hex digits of stable_hash(key)><suffix>": the name of the artefact ``key`` decides."""
    return f"{kind}/{label}-{stable_hash(key)[:16]}{suffix}"


def cache_path(name: str, root: Path | None = None) -> Path:
    """Where the user's cache keeps artefact ``name``: ``<root>/<name>`` (root: ``cache_dir()``)."""
    return (root or paths.cache_dir()) / name


def artefact_file(name: str, make: Callable[[Path], None], recorded: bool = False, root: Path | None = None) -> Path:
    """The file of artefact ``name``: the record's copy when ``recorded`` and the record holds one, else the cache's,
    made first when the cache has none by ``make(partial)``, which writes the file at ``partial`` (renamed into
    place when it returns; removed when it raises). With ``recorded`` the file is named in the usage log."""
    path = (recorded_artefact(name) if recorded else None) or cache_path(name, root)
    if not path.exists():
        with written_atomically(path) as partial:
            make(partial)
    if recorded:
        note_artefact(name, path)
    return path


def _kept(name: str, make: Callable[[Path], None], read: Callable[[Path], object], recorded: bool,
          root: Path | None):
    """``read(path)`` of artefact ``name``'s file (``artefact_file``); a cached file whose contents do not parse (a
    damaged disk: bad JSON, CSV or gzip) is made again and replaced, the record's copy (checked against its sums)
    never. Errors of the file system itself (permissions, I/O) are raised, not taken for damage."""
    path = artefact_file(name, make, recorded, root)
    try:
        return read(path)
    except (ValueError, EOFError, gzip.BadGzipFile, zlib.error):
        if path != cache_path(name, root):
            raise
        path.unlink(missing_ok=True)
        return read(artefact_file(name, make, recorded, root))


def artefact_json(name: str, compute: Callable[[], object], recorded: bool = False, root: Path | None = None):
    """``compute()``'s JSON-ready value, kept as the file of artefact ``name`` (``artefact_file``): computed once,
    read afterwards. A cached file that does not parse is computed again and replaced."""
    def make(partial: Path) -> None:
        partial.write_text(json.dumps(compute()))

    return _kept(name, make, lambda path: json.loads(path.read_text()), recorded, root)


def recorded_json(name: str, compute: Callable[[], object]):
    """``artefact_json(name, compute, recorded=True)``: the sample record's copy first (the keeper of
    ``toxlib.common.memo``, so the bootstrap bounds of the book's claims are read, not recomputed, wherever the
    record is on; a build with a usage log names each one for ``record write``)."""
    return artefact_json(name, compute, recorded=True)


def _read_frame(source):
    import pandas as pd  # heavy

    return pd.read_csv(source, compression="gzip", float_precision="round_trip")


def artefact_frame(name: str, compute: Callable[[], object], recorded: bool = False, root: Path | None = None):
    """``compute()``'s pandas DataFrame, kept as the file of artefact ``name`` (``artefact_file``; name it with the
    suffix ".csv.gz"): computed once, read afterwards, so a table that is costly to recompute but is not texts or
    scores (the generation chapter's nucleus statistics) can be cached and recorded. The file is gzip CSV written
    as the record's files are (no time stamp or file name; floats with ``repr``), so one table gives the same bytes
    wherever the same zlib compresses it. The
    table returned is always the one read back from the file, so a run that computed it and a run that read it get
    the same frame (an empty table reads back with its columns, all of object type). A table with rows that does
    not read back as it was (a column of empty strings, mixed or object types other than strings) raises ValueError
    naming the artefact before anything is kept."""
    def make(partial: Path) -> None:
        frame = compute()
        data = gzip_bytes(frame.to_csv(index=False, lineterminator="\n").encode("utf-8"))
        if len(frame) and not _read_frame(io.BytesIO(data)).equals(frame):
            raise ValueError(f"the table of artefact {name} does not read back from CSV as it was (columns "
                             f"{dict(frame.dtypes.astype(str))}): keep it to a default index and int, float, bool "
                             "and non-empty str columns")
        partial.write_bytes(data)

    return _kept(name, make, _read_frame, recorded, root)


def artefact_folder(name: str, make: Callable[[Path], None], done_file: str | None = None,
                    root: Path | None = None) -> Path:
    """The folder of artefact ``name`` in the cache, made first when it has none by ``make(folder)`` in a temporary
    folder beside it that is then renamed into place, with the umask's default mode (``paths.new_folder_mode``: the
    temporary folder is 0700). With ``done_file`` a folder counts as made only when it holds that file (a folder
    without it, left by other means, is removed and made again). Making holds a lock beside the folder
    (``.<folder name>.lock``, the ``filelock`` package's; the system releases it when its process ends, killed or
    not), so of processes asking for the same folder at once one makes it and the others wait (saying so on
    stderr) and use it: a bundled model is converted once per machine, not once per process that first loads it."""
    folder = cache_path(name, root)

    def made() -> bool:
        return (folder / done_file).exists() if done_file else folder.is_dir()

    if made():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder.parent / f".{folder.name}.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"[toxlib] waiting for another process that is making {folder}", file=sys.stderr, flush=True)
        lock.acquire()
    try:
        if made():  # made by another process while this one waited
            return folder
        if folder.exists():
            shutil.rmtree(folder)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-making-"))
        try:
            make(tmp)
            os.chmod(tmp, paths.new_folder_mode())
            os.replace(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        lock.release()
    return folder
