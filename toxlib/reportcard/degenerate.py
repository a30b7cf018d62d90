"""Whether the reader's model answered the SASS questions as a constant would: its local-LM systems in the report's
``sass/classifiers.csv`` whose ``degenerate`` column is set (``toxlib.metrics.baselines.degenerate``: one answer
for more than 95% of the comments, or a P(True) share that does not vary). A report marks the verdicts of the
chapter's claims about such a model, as it marks those resting on text outside the scorer's domain."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

#: the chapter whose claims rest on the model's answers as a classifier
CLASSIFIER_CHAPTER = "sass"


def degenerate_systems(results: str | Path, model: str) -> dict[str, float]:
    """{system: share given its most common answer} for the local-LM systems of ``model`` that the report's run
    (its results folder ``results``) found degenerate; empty when the chapter did not run or none is."""
    path = Path(results) / CLASSIFIER_CHAPTER / "classifiers.csv"
    if not path.exists():
        return {}
    table = pd.read_csv(path)
    if "degenerate" not in table.columns:
        return {}
    mine = table[(table["kind"] == "local LM") & (table["model"] == model)
                 & table["degenerate"].astype(str).str.lower().eq("true")]
    return {row["system"]: float(row["top_answer_share"]) for _, row in mine.iterrows()}


def mark_degenerate(rows: list[dict], systems: dict[str, float]) -> list[dict]:
    """``rows`` (report rows) with ``degenerate`` set on the classifier chapter's rows when ``systems`` is not empty,
    the note saying which systems answered as a constant would; other rows get ``degenerate`` False."""
    said = "; ".join(f"{s}: {share:.0%} one answer" for s, share in systems.items())
    out = []
    for row in rows:
        marked = bool(systems) and row["chapter"] == CLASSIFIER_CHAPTER
        note = (f"the model answers as a constant would ({said}): this verdict rests on degenerate readings; "
                + str(row.get("note", "")) if marked else row.get("note", ""))
        out.append({**row, "degenerate": marked, "note": note})
    return out
