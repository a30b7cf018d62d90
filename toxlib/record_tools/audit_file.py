"""An audit's ``--out`` file: the per-row comparison, appended key by key, so an interrupted audit keeps every key
it finished and ``--resume`` goes on from there.

Each row holds the audit's columns (``toxlib.record_tools.audit.AUDIT_COLUMNS``), its ``slice`` and ``seed``, and
``key_rows``: how many rows its key has in this audit. A resumed audit takes a key back only when the file holds all
of its rows with one slice and seed; a key cut short (a kill between two writes of a large key, a last line without
its end) is audited again, never counted with the rows it lacks. Rows of keys outside a run's scope stay in the
file, uncounted; keys the file lists as not audited are tried again.

``resumable_audit`` runs ``toxlib.record_tools.audit.audit`` with such a file and returns the rows; the command prints.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from toxlib.common.errors import ToxlibError
from toxlib.record_tools.audit import AUDIT_COLUMNS, audit, check_chapters, in_scope
from toxlib.store import paths
from toxlib.store.record_reader import Record, record_dir

FILE_COLUMNS = [*AUDIT_COLUMNS, "key_rows", "slice", "seed"]


def check_out_path(path: str | Path, resume: bool) -> Path:
    """``path`` as a Path after checking it can be an audit's --out file: ToxlibError naming the fix for a folder,
    a missing parent folder, or (without ``resume``) a file that exists and holds rows."""
    path = Path(path)
    if path.is_dir():
        raise ToxlibError(f"--out {path} is a folder: give a file name, such as {path / 'audit.csv'}")
    if not path.parent.is_dir():
        raise ToxlibError(f"--out {path}: the folder {path.parent} does not exist; create it or give another path")
    if not resume and path.exists() and path.stat().st_size:
        raise ToxlibError(f"--out {path} exists: add --resume to go on with that audit, or give a new file")
    return path


@dataclass
class EarlierRows:
    """What an --out file holds for a resumed audit: ``complete`` rows (``FILE_COLUMNS``) of keys whose every row
    is there, and the keys ``dropped`` because the file lacks some of their rows."""
    complete: pd.DataFrame
    dropped: list[tuple[str, str]] = field(default_factory=list)


def read_earlier(path: str | Path, n: int, seed: int) -> EarlierRows:
    """The rows of an --out file for ``--resume`` (empty when it does not exist or is empty). ToxlibError naming
    the fix for a file that is not an audit's --out file, was written by a toxlib without ``key_rows``, or holds
    another slice or seed."""
    path = Path(path)
    if not path.exists() or not path.stat().st_size:
        return EarlierRows(pd.DataFrame(columns=FILE_COLUMNS))
    text = path.read_text(encoding="utf-8")
    text = text if text.endswith("\n") else text[:text.rfind("\n") + 1]  # a last line cut short: its key is redone
    try:
        old = pd.read_csv(io.StringIO(text), dtype={"item": str, "detail": str}, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ToxlibError(f"--resume: {path} cannot be read as an audit's --out file ({exc}); give a new --out") \
            from None
    missing = sorted(set(FILE_COLUMNS) - set(old.columns))
    if missing:
        raise ToxlibError(f"--resume: {path} is not this toxlib's audit --out file (no column "
                          f"{', '.join(missing)}): give a new --out file")
    try:
        old = old.astype({"slice": int, "seed": int, "rows": int, "matched": int, "key_rows": int})
    except (ValueError, TypeError) as exc:
        raise ToxlibError(f"--resume: {path} holds a row that cannot be read ({exc}); give a new --out") from None
    found = {k: sorted(set(old[k])) for k in ("slice", "seed")}
    if len(old) and found != {"slice": [n], "seed": [seed]}:
        raise ToxlibError(f"--resume: {path} holds an audit with slice {found['slice']} and seed {found['seed']}, "
                          f"not slice {n} and seed {seed}: give another --out, or the same --slice and --seed")
    held = old.groupby(["kind", "key"], sort=False)["key_rows"].transform("size")
    whole = held == old["key_rows"]
    dropped = sorted(set(zip(old.loc[~whole, "kind"], old.loc[~whole, "key"])))
    return EarlierRows(old[whole][FILE_COLUMNS].reset_index(drop=True), dropped)


def with_file_columns(rows: pd.DataFrame | list[dict], n: int, seed: int) -> pd.DataFrame:
    """Audit rows (``AUDIT_COLUMNS``) with ``key_rows``, ``slice`` and ``seed`` added (``FILE_COLUMNS``)."""
    frame = pd.DataFrame(rows, columns=AUDIT_COLUMNS)
    frame["key_rows"] = frame.groupby(["kind", "key"], sort=False)["key"].transform("size")
    return frame.assign(slice=n, seed=seed)[FILE_COLUMNS]


@dataclass
class AuditRun:
    """A resumable audit's result: every row of this run's scope (``AUDIT_COLUMNS``), the keys taken from the --out file
    (``resumed``) and those it held only in part (``redone``)."""
    rows: pd.DataFrame
    resumed: list[tuple[str, str]] = field(default_factory=list)
    redone: list[tuple[str, str]] = field(default_factory=list)


def resumable_audit(out: str | Path | None = None, resume: bool = False, n: int = 20, seed: int = 0, chapters=None,
                    kinds=None, max_keys: int | None = None, folder=None, device: str | None = None) -> AuditRun:
    """``audit(...)`` over the record in ``folder`` (default ``record_dir()``) on ``device`` (default: CUDA when
    available, else the CPU), keeping each key's rows in ``out``
    as soon as it is audited; with ``resume``, the complete keys ``out`` holds are taken instead of recomputed (see
    the module docstring). Errors (``ToxlibError``) come before any row is recomputed."""
    if resume and not out:
        raise ToxlibError("--resume needs --out: the file the interrupted audit wrote its rows to")
    out = check_out_path(out, resume) if out else None
    earlier = read_earlier(out, n, seed) if resume else EarlierRows(pd.DataFrame(columns=FILE_COLUMNS))
    old = earlier.complete
    record = Record(folder or record_dir())
    check_chapters(record, chapters)
    keys = record.keys
    scoped = pd.Series([(kind, key) in keys and in_scope(kind, keys[(kind, key)], chapters, kinds)
                        for kind, key in zip(old["kind"], old["key"])], index=old.index, dtype=bool)
    retried = scoped & (old["rows"] == 0)  # listed as not audited: tried again, and appended again
    if out:  # rewritten now, then appended key by key: an interrupted audit keeps every key it finished
        with paths.written_atomically(out) as partial:
            old[~retried].to_csv(partial, index=False)

    def keep(key_rows: list[dict]) -> None:
        with open(out, "a", encoding="utf-8", newline="") as handle:
            with_file_columns(key_rows, n, seed).to_csv(handle, header=False, index=False)

    taken = old[scoped & ~retried]
    rows = audit(folder, n=n, chapters=chapters, kinds=kinds, seed=seed, max_keys=max_keys, device=device,
                 earlier=taken[AUDIT_COLUMNS], on_key=keep if out else None)
    resumed = sorted(set(zip(rows["kind"], rows["key"])) & set(zip(taken["kind"], taken["key"])))
    return AuditRun(rows, resumed, [k for k in earlier.dropped if k in keys])
