"""A report's rows: each claim the chapters made about the reader's model, beside the paper's value and the bundled
models' values for the same claim in the book (their rows from the sample record).

A claim concerns a language model by its subject (``toxlib.publish.claims``): "model:<name>" is that model's, and
"models:<a>+<b>" pools over the models it names (with the reader's model alone, it is that model's). Claims about
scorers, recorded systems, data, the papers' arithmetic or the machine, and every claim whose kind is not "our
models", are the same for every model and are left out. The reader's claim is matched to the book's by its rule
(the part of its id before ":"); the book's subject tells which bundled model each value is of.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toxlib.chapters import chapter
from toxlib.publish.claims import read_claims, rule_of, subject_models
from toxlib.publish.scorecard import reading

REPORT_COLUMNS = ["paper", "chapter", "id", "claim", "paper_value", "bundled", "value", "ci_low", "ci_high", "n",
                  "verdict", "outside_domain", "degenerate", "note"]


def concerns(subject: str, model: str) -> bool:
    """Whether a claim of ``subject`` is about ``model``: its own ("model:<model>") or pooled over models that
    include it."""
    return subject in (f"model:{model}", f"models:{model}") or model in subject_models(subject)


def model_claims(claims: pd.DataFrame) -> pd.DataFrame:
    """The "our models" claims of one chapter's claims.csv whose subject is one language model or several pooled,
    with a ``rule`` column (the id's rule) added."""
    mine = claims[(claims["kind"] == "our models") & claims["subject"].map(lambda s: bool(subject_models(s)))]
    return mine.assign(rule=mine["id"].map(rule_of))


def book_models(stem: str) -> list[str]:
    """The models the book's published run of ``stem`` used: the chapter's defaults."""
    values = chapter(stem).defaults()
    return list(values.get("models") or [values.get("model")])


def _bundled(row, book_models_: list[str]) -> dict | None:
    """A book claim as the report shows it beside the reader's: {"model", "value", "verdict"}; None for a claim of
    one model that is not among ``book_models_``."""
    names = subject_models(row["subject"])
    if row["subject"].startswith("model:") and names[0] not in book_models_:
        return None
    return {"model": " and ".join(names), "value": reading(row), "verdict": row["verdict"]}


def report_rows(stem: str, claims: pd.DataFrame, model: str, book: pd.DataFrame | None, book_models_: list[str],
                outside_domain: bool) -> list[dict]:
    """One row per claim the report's run of ``stem`` made about ``model`` (``claims``: that run's claims.csv), in
    its order, with the book's values for the same rule (``book``: the book's claims.csv of ``stem``, run on
    ``book_models_``; one entry per bundled model, or one for a pooled claim, in the book's order) and
    ``outside_domain`` marking the chapters whose values rest on scores of the model's own text. Keys:
    ``REPORT_COLUMNS`` but ``degenerate`` (``reportcard.degenerate`` adds it)."""
    ours = model_claims(claims)
    ours = ours[ours["subject"].map(lambda s: concerns(s, model))]
    theirs = model_claims(book) if book is not None else pd.DataFrame(columns=["rule", "subject"])
    needs = chapter(stem).report
    rows = []
    for _, row in ours.iterrows():
        same = [_bundled(r, book_models_) for _, r in theirs[theirs["rule"] == row["rule"]].iterrows()]
        rows.append({"paper": needs.paper, "chapter": stem, "id": row["id"], "claim": row["claim"],
                     "paper_value": row["paper_value"], "bundled": [b for b in same if b is not None],
                     "value": reading(row), "ci_low": row["ci_low"], "ci_high": row["ci_high"], "n": row["n"],
                     "verdict": row["verdict"], "outside_domain": bool(outside_domain and needs.scored),
                     "note": row["note"]})
    return rows


def read_chapter_claims(folder: Path, stem: str) -> pd.DataFrame | None:
    """A chapter's claims.csv in a results folder (None when the chapter wrote none; ``read_claims``' ValueError
    for one written before claims had ids: re-run its chapter)."""
    path = Path(folder) / stem / "claims.csv"
    return read_claims(path) if path.exists() else None
