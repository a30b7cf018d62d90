"""A report's rows: each claim the chapters made about the reader's model, beside the paper's value and the bundled
models' values for the same claim in the book (their rows from the sample record).

A chapter's claim concerns the model it ran when it names that model, when the chapter runs one model only (its
declaration's model parameter is one model: rtp_detox), or when it pools over the chapter's models (``POOLED``: with
the reader's model alone, it is that model's); claims about the scorers or the papers' recorded data (``OTHER``,
and every claim whose kind is not "our models") are the same for every model and are left out. A claim of the book
is matched to the reader's by its text with each model's name replaced by ``{model}``. ``tests/reportcard`` holds
every claim of the book to one of these.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from toxlib.chapters import chapter
from toxlib.publish.claims import MACHINE_KINDS, read_claims

#: claims whose value pools over a chapter's models (regex on the claim text)
POOLED = {"rtp_prompted": (r"every model",), "sass": (r"best local LM",),
          "safety_score": (r"least affected demographics",)}
#: "our models" claims that concern no language model (the scorers', in the SASS chapter)
OTHER = {"sass": (r"here: the \S+ scorer$",)}
REPORT_COLUMNS = ["paper", "chapter", "claim", "paper_value", "bundled", "value", "ci_low", "ci_high", "n",
                  "verdict", "outside_domain", "degenerate", "note"]


def _mention(name: str) -> re.Pattern:
    """A model's name as a whole word of a claim (not part of a longer name or word)."""
    return re.compile(rf"(?<![\w./-]){re.escape(name)}(?![\w/-])")


def subject(stem: str, claim: str, models: list[str]) -> str:
    """What a claim of chapter ``stem`` (run on ``models``) is about: "model:<name>", "pooled" or "other"."""
    named = [m for m in models if _mention(m).search(claim)]
    if named:
        return f"model:{max(named, key=len)}"
    if any(re.search(p, claim) for p in OTHER.get(stem, ())):
        return "other"
    if not chapter(stem).report.model_list:  # a chapter of one model: every claim of it is about that model
        return f"model:{models[0]}"
    if any(re.search(p, claim) for p in POOLED.get(stem, ())):
        return "pooled"
    return "other"


def template(claim: str, models: list[str]) -> str:
    """The claim's text with each model's name replaced by "{model}" (the longest names first)."""
    for m in sorted(models, key=len, reverse=True):
        claim = _mention(m).sub("{model}", claim)
    return claim


def shown(row) -> str:
    """A claim's value as shown, with its 95% interval where it has one: "0.762 [0.74, 0.78]"."""
    low, high = row.get("ci_low"), row.get("ci_high")
    value = str(row.get("shown", row.get("our_value", "")))
    if low is None or high is None or any(isinstance(b, float) and math.isnan(b) for b in (low, high)):
        return value
    return f"{value} [{float(low):.3g}, {float(high):.3g}]"


def model_claims(claims: pd.DataFrame, stem: str, models: list[str]) -> pd.DataFrame:
    """The "our models" claims of one chapter's claims.csv that concern a language model, with ``subject`` and
    ``template`` columns added (machine measurements and claims of other kinds dropped)."""
    mine = claims[(claims["kind"] == "our models") & ~claims["kind"].isin(MACHINE_KINDS)].copy()
    mine["subject"] = [subject(stem, c, models) for c in mine["claim"]]
    mine["template"] = [template(c, models) for c in mine["claim"]]
    return mine[mine["subject"] != "other"]


def book_models(stem: str) -> list[str]:
    """The models the book's published run of ``stem`` used: the chapter's defaults."""
    values = chapter(stem).defaults()
    return list(values.get("models") or [values.get("model")])


def report_rows(stem: str, claims: pd.DataFrame, model: str, book: pd.DataFrame | None, book_models_: list[str],
                outside_domain: bool) -> list[dict]:
    """One row per claim the report's run of ``stem`` made about ``model`` (``claims``: that run's claims.csv),
    with the book's values for the same claim (``book``: the book's claims.csv of ``stem``, run on
    ``book_models_``) as "model: value [interval], verdict" strings, and ``outside_domain`` marking the chapters whose
    values rest on scores of the model's own text."""
    ours = model_claims(claims, stem, [model])
    theirs = model_claims(book, stem, book_models_) if book is not None else pd.DataFrame(columns=["template"])
    rows = []
    for _, row in ours.iterrows():
        same = theirs[theirs["template"] == row["template"]]
        bundled = [{"model": r["subject"].removeprefix("model:") if r["subject"] != "pooled"
                    else " and ".join(book_models_), "value": shown(r), "verdict": r["verdict"]}
                   for _, r in same.iterrows()]
        rows.append({"paper": chapter(stem).report.paper, "chapter": stem,
                     "claim": row["template"].replace("{model}", model),
                     "paper_value": row["paper_value"], "bundled": bundled, "value": shown(row),
                     "ci_low": row["ci_low"], "ci_high": row["ci_high"], "n": row["n"], "verdict": row["verdict"],
                     "outside_domain": bool(outside_domain and chapter(stem).report.scored),
                     "note": row["note"]})
    return rows


def read_chapter_claims(folder: Path, stem: str) -> pd.DataFrame | None:
    """A chapter's claims.csv in a results folder (None when the chapter wrote none)."""
    path = Path(folder) / stem / "claims.csv"
    return read_claims(path) if path.exists() else None
