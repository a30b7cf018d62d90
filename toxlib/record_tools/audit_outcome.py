"""What decides an audit of the sample record, from its rows (``toxlib.record_tools.audit.AUDIT_COLUMNS``).

``counted(rows)``: the rows that decide it (keys whose precision promises the same rows on another CPU);
``shown_only(rows)``: the ``MACHINE_DEPENDENT`` keys' rows, shown and never counted; ``summary(rows)``: per
chapter, kind and precision, keys, rows, matched and share; ``outcome(rows)``: rows counted, matched, share and
whether at least ``PASS_SHARE`` matched.
"""

from __future__ import annotations

import pandas as pd

#: the share of audited rows that must match for the audit to pass
PASS_SHARE = 0.95

#: precisions whose rows are machine-dependent by design (bf16 kernels differ between CPUs, with AMX even within a
#: batch): their rows are audited and shown, but not counted in the share that decides the audit
MACHINE_DEPENDENT = ("bfloat16", "float16")


def counted(rows: pd.DataFrame) -> pd.DataFrame:
    """The audited rows that decide the audit: those of keys whose precision promises the same rows on another CPU
    (not ``MACHINE_DEPENDENT``)."""
    return rows[(rows["rows"] > 0) & ~rows["precision"].isin(MACHINE_DEPENDENT)]


def shown_only(rows: pd.DataFrame) -> pd.DataFrame:
    """The audited rows of ``MACHINE_DEPENDENT`` keys: shown, never counted."""
    return rows[(rows["rows"] > 0) & rows["precision"].isin(MACHINE_DEPENDENT)]


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per chapter (a key used by several counts for each), kind and precision: keys audited, rows, matched, share."""
    audited = rows[rows["rows"] > 0].assign(chapter=lambda f: f["chapters"].str.split("; ")).explode("chapter")
    table = audited.groupby(["chapter", "kind", "precision"]).agg(keys=("key", "nunique"), rows=("rows", "sum"),
                                                     matched=("matched", "sum")).reset_index()
    return table.assign(share=lambda f: f["matched"] / f["rows"])


def outcome(rows: pd.DataFrame) -> dict:
    """What decides the audit: {"rows": counted rows, "matched": of them identical, "share", "passed": at least
    ``PASS_SHARE`` of at least one counted row}."""
    audited = counted(rows)
    total, matched = int(audited["rows"].sum()), int(audited["matched"].sum())
    share = matched / total if total else 0.0
    return {"rows": total, "matched": matched, "share": share, "passed": bool(total) and share >= PASS_SHARE}
