"""Where notebooks put what they show: tables (CSV), figures (PNG) and claims, under results_dir()/<notebook-stem>/.

Claims contract (the scorecard and later chapters rely on it): claims.csv has the columns
claim, paper_value, our_value, holds, note. ``holds`` is True, False, or empty where the claim cannot be judged.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from toxlib import paths

CLAIM_COLUMNS = ["claim", "paper_value", "our_value", "holds", "note"]


def chapter_dir(stem: str) -> Path:
    out = paths.results_dir() / stem
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_table(stem: str, name: str, table: pd.DataFrame, compress: bool = False) -> Path:
    """Write ``table`` to <results>/<stem>/<name>.csv (index dropped; <name>.csv.gz with ``compress``, for tables
    of tens of thousands of rows) and return the path."""
    path = chapter_dir(stem) / f"{name}.csv{'.gz' if compress else ''}"
    table.to_csv(path, index=False, **({"compression": {"method": "gzip", "mtime": 0}} if compress else {}))
    return path


def publish(stem: str, name: str, table: pd.DataFrame, caption: str, digits: int = 3, columns: list | None = None,
            compress: bool = False) -> None:
    """Write ``table`` to <results>/<stem>/<name>.csv (as ``write_table``) and display it in the notebook (as
    ``toxlib.tables.show``: captioned, floats rounded to ``digits``; only ``columns`` when given), in one call so
    neither half can be forgotten. Displays through IPython, so it works inside loops and functions too; returns
    nothing, so a cell ending in it shows the table once."""
    from IPython.display import display

    from toxlib.tables import show

    write_table(stem, name, table, compress=compress)
    display(show(table if columns is None else table[columns], caption, digits))


def publish_claims(stem: str, rows: list[dict], caption: str) -> None:
    """Write the chapter's claims (as ``write_claims``) and display them under ``caption``."""
    from IPython.display import display

    from toxlib.tables import show

    display(show(write_claims(stem, rows), caption))


def save_figure(stem: str, name: str, fig) -> Path:
    """Save a matplotlib figure to <results>/<stem>/<name>.png."""
    path = chapter_dir(stem) / f"{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def within(paper_value: float, our_value: float, tolerance: float) -> bool:
    """Whether our value equals the paper's up to ``tolerance`` (False when either is NaN)."""
    if any(isinstance(v, float) and math.isnan(v) for v in (paper_value, our_value)):
        return False
    return abs(float(paper_value) - float(our_value)) <= tolerance + 1e-12


def claim(claim: str, paper_value, our_value, holds: bool | None, note: str = "") -> dict:
    """One row of a claims table. Values are formatted as strings so numbers and ranges mix in one column."""

    def fmt(v):
        if isinstance(v, float):
            return "NaN" if math.isnan(v) else f"{v:.3g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"
        return str(v)

    return {
        "claim": claim,
        "paper_value": fmt(paper_value),
        "our_value": fmt(our_value),
        "holds": None if holds is None or pd.isna(holds) else bool(holds),
        "note": note,
    }


def write_claims(stem: str, rows: list[dict]) -> pd.DataFrame:
    """Write the chapter's claims to <results>/<stem>/claims.csv and return them as a DataFrame."""
    table = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    if table["claim"].isna().any() or (table["claim"] == "").any():
        raise ValueError("every claim needs its text")
    write_table(stem, "claims", table)
    return table


def claims_summary(claims: pd.DataFrame) -> pd.DataFrame:
    """Per chapter, how many claims hold, do not, or could not be judged.

    claims: the frame of collect_claims(). Columns: chapter, holds, does_not_hold, not_judged, total.
    """
    holds = claims["holds"]
    table = pd.DataFrame({"chapter": claims["chapter"], "holds": holds.eq(True), "does_not_hold": holds.eq(False),
                          "not_judged": holds.isna()})
    summary = table.groupby("chapter", sort=True).sum().astype(int)
    summary["total"] = summary.sum(axis=1)
    return summary.reset_index()


def collect_claims() -> pd.DataFrame:
    """Every chapter's claims.csv stacked. Columns: chapter + CLAIM_COLUMNS, chapters in name order."""
    frames = []
    for path in sorted(paths.results_dir().glob("*/claims.csv")):
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        missing = set(CLAIM_COLUMNS) - set(table.columns)
        if missing:
            raise ValueError(f"{path} lacks the claims columns {sorted(missing)}")
        # holds: True / False, or None where the chapter could not judge the claim
        holds = table["holds"].str.lower().map({"true": True, "false": False}).astype(object)
        table["holds"] = holds.where(holds.notna(), None)
        table.insert(0, "chapter", path.parent.name)
        frames.append(table[["chapter"] + CLAIM_COLUMNS])
    if not frames:
        return pd.DataFrame(columns=["chapter"] + CLAIM_COLUMNS)
    return pd.concat(frames, ignore_index=True)
