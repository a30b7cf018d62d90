"""The record's audit history, ``<record>/audits.csv``: one line per audit run with ``--history``, the table the
methods page shows ("Reproducibility audit") and the phrase each chapter's run record cites
(``toxlib.store.record_usage.last_audit``).

``scope_text`` names what an audit covered; ``history_line`` makes its line from the audit's rows;
``check_writable`` refuses, before any row is recomputed, a record folder the line could not be added to;
``append_history`` adds the line.
"""

from __future__ import annotations

import datetime
import tempfile
from pathlib import Path

import pandas as pd

from toxlib.common.errors import ToxlibError
from toxlib.record_tools.audit_outcome import counted, shown_only
from toxlib.store import paths

HISTORY_COLUMNS = ["date", "machine", "commit", "slice", "seed", "scope", "keys audited", "keys not audited", "rows",
                   "identical", "identical share", "bf16 rows (not counted)", "bf16 identical"]


def scope_text(chapters=None, kinds=None, max_keys: int | None = None) -> str:
    """What an audit covered: "all keys", or the chapters, kinds and key cap it was given, "; "-joined (the form
    ``toxlib.store.record_usage.covers`` reads)."""
    parts = [f"chapters {', '.join(chapters)}" if chapters else "",
             f"kinds {', '.join(kinds)}" if kinds else "",
             f"at most {max_keys} keys per kind" if max_keys is not None else ""]
    return "; ".join(p for p in parts if p) or "all keys"


def history_line(rows: pd.DataFrame, scope: str, n: int, seed: int, facts: dict) -> dict:
    """This audit's line (``HISTORY_COLUMNS``): date, machine (CPU model and kernel features), commit, slice, seed,
    scope, keys audited (of any precision) and not, the counted rows and identical ones and their share, and the
    bf16 rows and identical ones (shown, not counted). ``facts``: ``toxlib.book_build.machine.kernel_facts()``."""
    audited, dependent = counted(rows), shown_only(rows)
    line = {"date": datetime.date.today().isoformat(), "machine": facts.get("cpu", facts["machine"]).split("; MKL")[0],
            "commit": facts["commit"], "slice": n, "seed": seed, "scope": scope,
            "keys audited": rows.loc[rows["rows"] > 0, "key"].nunique(),
            "keys not audited": int((rows["rows"] == 0).sum()),
            "rows": int(audited["rows"].sum()), "identical": int(audited["matched"].sum()),
            "bf16 rows (not counted)": int(dependent["rows"].sum()), "bf16 identical": int(dependent["matched"].sum())}
    line["identical share"] = f"{line['identical'] / line['rows']:.3f}" if line["rows"] else ""
    return line


def check_writable(folder: Path) -> None:
    """ToxlibError, naming the file and the fix, when ``folder/audits.csv`` could not be written (the file is
    replaced whole, so the folder must be writable): asked before an audit starts, so hours of recomputation are not
    lost at the end."""
    path = Path(folder) / "audits.csv"
    problem = ""
    if path.exists() and not path.is_file():
        problem = "it is not a file"
    else:
        try:  # a real write: permissions, a read-only mount and a full disk all show here
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            problem = f"its folder cannot be written ({exc.strerror or exc})"
    if problem:
        raise ToxlibError(f"--history cannot add its line to {path}: {problem}. Make it a writable file, or audit "
                          "without --history")


def append_history(folder: Path, line: dict) -> None:
    """Add ``line`` to ``folder/audits.csv`` (written whole, atomically)."""
    path = Path(folder) / "audits.csv"
    old = pd.read_csv(path, dtype=str) if path.exists() else pd.DataFrame(columns=HISTORY_COLUMNS)
    table = pd.concat([old, pd.DataFrame([line]).astype(str)], ignore_index=True)[HISTORY_COLUMNS]
    with paths.written_atomically(path) as partial:
        table.to_csv(partial, index=False)
