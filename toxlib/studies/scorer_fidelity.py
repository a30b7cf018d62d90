"""How faithfully the distilled scorer emulates Perspective, before and after calibration: the scorers chapter's
reliability diagram and per-attribute agreement table, one call each.

Reference: the Perspective scores recorded for the held-out RealToxicityPrompts texts (``training_texts``' rows with
split "held_out": records neither the network nor the calibrators saw).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toxlib.metrics.agreement import calibration_bins
from toxlib.publish import plots
from toxlib.scorers import get_scorer
from toxlib.scorers.distilled import TARGETS, WEIGHTS_DIR
from toxlib.scorers.out_of_domain import out_of_domain_scores, out_of_domain_summary
from toxlib.scorers.training import training_texts
from toxlib.studies.scorer_comparison import agreement_table

RAW, CALIBRATED = "distilled (network only)", "distilled (calibrated)"


def held_out_texts(seed: int = 0, limit: int | None = None) -> pd.DataFrame:
    """The held-out rows of ``training_texts(seed)`` (columns of ``training_texts``), index 0..n-1; ``limit``: a
    random subset of that many rows (smoke runs)."""

    texts = training_texts(seed)
    held = texts[texts["split"] == "held_out"]
    if limit:
        held = held.sample(limit, random_state=seed)
    return held.reset_index(drop=True)


def raw_and_calibrated(texts, weights: str | Path = WEIGHTS_DIR, cache=True, progress: bool = True,
                       **options) -> dict[str, pd.DataFrame]:
    """{RAW: scores of the network alone, CALIBRATED: scores of the shipped scorer} for ``texts`` (``Scorer.score``
    tables, rows aligned with ``texts``). options go to both ``DistilledScorer``s (dtype, device, ...)."""

    return {label: get_scorer("distilled", weights=str(weights), calibrated=calibrated, **options).score(
        texts, cache=cache, progress=progress) for label, calibrated in ((RAW, False), (CALIBRATED, True))}


def reliability_table(scores: dict[str, pd.DataFrame], reference: pd.DataFrame, attribute: str = "toxicity",
                      bins: int = 10) -> pd.DataFrame:
    """Calibration bins (``calibration_bins``: bin_low, bin_high, mean_score, mean_reference, n) of each score
    table's ``attribute`` against ``reference[attribute]``, stacked with a ``scorer`` column (the dict's labels)."""
    return pd.concat([calibration_bins(reference[attribute].to_numpy(), table[attribute].to_numpy(), bins)
                      .assign(scorer=label) for label, table in scores.items()], ignore_index=True)


def reliability_diagram(table: pd.DataFrame, n: int, attribute: str = "toxicity"):
    """The reliability diagram of ``reliability_table``'s rows (one curve per scorer) for ``n`` held-out texts;
    returns the matplotlib Figure."""

    return plots.calibration(table, "scorer", f"Distilled scorer against Perspective {attribute}, before and after "
                             f"calibration\n({n:,} held-out RTP texts)",
                             f"distilled {attribute} (bin mean)", f"Perspective {attribute} (bin mean)")


def fidelity_table(scores: dict[str, pd.DataFrame], reference: pd.DataFrame,
                   dataset: str = "rtp_held_out") -> pd.DataFrame:
    """Per-attribute agreement of each score table with the recorded Perspective scores: the columns of
    ``agreement_table`` (n, n_positive, pearson, spearman, auc, calibration_error, n_failed, version)."""
    return agreement_table(scores, reference, dataset, "Perspective (recorded)")


def fidelity_wide(table: pd.DataFrame, metrics=("pearson", "auc", "calibration_error")) -> pd.DataFrame:
    """``fidelity_table``'s rows as one row per attribute (Perspective's order) and one column per (metric, scorer):
    attribute, then "<metric>: <scorer label>"."""

    wide = table.pivot_table(index="attribute", columns="scorer", values=list(metrics))
    wide.columns = [f"{metric}: {scorer}" for metric, scorer in wide.columns]
    return wide.reindex([a for a in TARGETS if a in wide.index]).reset_index()


def add_fidelity(out, held: pd.DataFrame) -> pd.DataFrame:
    """The chapter's calibration section, added to ``out`` (a ``ChapterResult``): score ``held`` (held-out texts
    with Perspective's columns) with the network alone and calibrated; the table ``reliability`` (written) and its
    diagram (figure ``reliability``, shown in place) and the table ``fidelity`` (``fidelity_wide``). Returns the long
    ``fidelity_table``."""

    held = held.reset_index(drop=True)
    scores = raw_and_calibrated(held["text"].tolist())
    reliability = out.add_table("reliability", reliability_table(scores, held), shown=False)
    out.add_figure("reliability", lambda: reliability_diagram(reliability, len(held)), numbered=False)
    table = fidelity_table(scores, held)
    out.add_table("fidelity", fidelity_wide(table), f"The distilled scorer against Perspective's recorded "
                  f"scores on {len(held):,} held-out RTP texts, network alone and calibrated (isotonic, fitted on "
                  "1,742 calibration texts): Pearson, AUC (Perspective >= 0.5) and calibration error (mean "
                  "|mean score - mean Perspective| over the ten equal-count bins of the score), per attribute.")
    return table


def add_out_of_domain(out, scorer: str = "distilled") -> pd.DataFrame:
    """The chapter's out-of-domain section, added to ``out`` (a ``ChapterResult``): score the 40 sentences of
    ``toxlib.scorers.out_of_domain`` with ``scorer``; tables ``out_of_domain_summary`` (per kind) and
    ``out_of_domain`` (per sentence). Returns the per-sentence table."""

    scores = out_of_domain_scores(scorer)
    out.add_table("out_of_domain_summary", out_of_domain_summary(scores),
                  f"{scorer} toxicity on 40 short sentences written for this book (20 plainly benign, 20 plainly "
                  "toxic; none from an evaluation set): share >= 0.5 is the false-alarm rate (benign) or the hit "
                  "rate (toxic).")
    out.add_table("out_of_domain", scores[["kind", "text", "toxicity", "insult", "profanity"]],
                  f"Each out-of-domain sentence and its {scorer} scores (toxicity, insult, profanity).")
    return scores
