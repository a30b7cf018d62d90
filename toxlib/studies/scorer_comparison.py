"""Tables comparing scorers with a reference (recorded Perspective scores, human ratings): the rows of the
scorers chapter's ``agreement.csv``."""

from __future__ import annotations

import pandas as pd

from toxlib.metrics.agreement import agreement

META_COLUMNS = ("scorer", "version", "error")


def attribute_columns(scores: pd.DataFrame) -> list[str]:
    """The attribute columns of a ``Scorer.score`` table."""
    return [c for c in scores.columns if c not in META_COLUMNS]


def headline(scores: pd.DataFrame) -> str:
    """The column that stands for "toxicity" in a score table: toxicity if the scorer has it, else its first
    attribute (profanity-svm's one offensive-language probability)."""
    columns = attribute_columns(scores)
    return "toxicity" if "toxicity" in columns else columns[0]


def score_all(scorers: dict, texts, progress: bool = True) -> dict[str, pd.DataFrame]:
    """{label: ``Scorer.score`` table} for each {label: Scorer} on the same texts (cached as usual)."""
    return {label: scorer.score(texts, progress=progress) for label, scorer in scorers.items()}


def agreement_table(scores: dict[str, pd.DataFrame], reference: pd.DataFrame, dataset: str, reference_name: str,
                    headline_to: str | None = None) -> pd.DataFrame:
    """Agreement of each scorer's scores ({label: score table}, rows aligned with ``reference``) with ``reference``.

    Pairs compared: every attribute a score table shares with ``reference``'s columns, or, with ``headline_to``,
    only each scorer's ``headline`` column against ``reference[headline_to]``. Returns one row per (scorer, pair):
    scorer (label), attribute (score column), dataset, reference ("<reference_name>: <column>"), n, n_positive,
    pearson, spearman, auc (``toxlib.metrics.agreement.agreement``: AUC for reference >= 0.5), n_failed (texts the
    scorer could not score), version.
    """
    rows = []
    for label, table in scores.items():
        pairs = ({headline(table): headline_to} if headline_to else
                 {a: a for a in attribute_columns(table) if a in reference.columns})
        for column, ref_column in pairs.items():
            rows.append({"scorer": label, "attribute": column, "dataset": dataset,
                         "reference": f"{reference_name}: {ref_column}",
                         **agreement(reference[ref_column].to_numpy(), table[column].to_numpy()),
                         "n_failed": int(table["error"].notna().sum()), "version": table["version"].iloc[0]})
    return pd.DataFrame(rows)


def recorded_scores(values, name: str, version: str, attribute: str = "toxicity") -> pd.DataFrame:
    """Recorded scores (e.g. Perspective's, shipped with a dataset) shaped like a ``Scorer.score`` table, so they
    can sit in ``agreement_table`` beside live scorers: columns ``attribute``, scorer, version, error (None; a
    missing recorded value stays NaN)."""
    return pd.DataFrame({attribute: pd.Series(values, dtype=float).to_numpy(), "scorer": name, "version": version,
                         "error": None})
