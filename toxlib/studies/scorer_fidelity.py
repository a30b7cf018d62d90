"""How faithfully the distilled scorer emulates Perspective, before and after calibration: the scorers chapter's
reliability diagram and per-attribute agreement table, one call each.

Reference: the Perspective scores recorded for the held-out RealToxicityPrompts texts (``training_texts``' rows with
split "held_out": records neither the network nor the calibrators saw).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toxlib.metrics.agreement import calibration_bins
from toxlib.scorers.distilled import WEIGHTS_DIR
from toxlib.studies.scorer_comparison import agreement_table

RAW, CALIBRATED = "distilled (network only)", "distilled (calibrated)"


def held_out_texts(seed: int = 0, limit: int | None = None) -> pd.DataFrame:
    """The held-out rows of ``training_texts(seed)`` (columns of ``training_texts``), index 0..n-1; ``limit``: a
    random subset of that many rows (smoke runs)."""
    from toxlib.scorers.training import training_texts

    texts = training_texts(seed)
    held = texts[texts["split"] == "held_out"]
    if limit:
        held = held.sample(limit, random_state=seed)
    return held.reset_index(drop=True)


def raw_and_calibrated(texts, weights: str | Path = WEIGHTS_DIR, cache=True, progress: bool = True,
                       **options) -> dict[str, pd.DataFrame]:
    """{RAW: scores of the network alone, CALIBRATED: scores of the shipped scorer} for ``texts`` (``Scorer.score``
    tables, rows aligned with ``texts``). options go to both ``DistilledScorer``s (dtype, device, ...)."""
    from toxlib.scorers import get_scorer

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
    from toxlib import plots

    return plots.calibration(table, "scorer", f"Distilled scorer against Perspective {attribute}, before and after "
                             f"calibration\n({n:,} held-out RTP texts)",
                             f"distilled {attribute} (bin mean)", f"Perspective {attribute} (bin mean)")


def fidelity_table(scores: dict[str, pd.DataFrame], reference: pd.DataFrame,
                   dataset: str = "rtp_held_out") -> pd.DataFrame:
    """Per-attribute agreement of each score table with the recorded Perspective scores: the columns of
    ``agreement_table`` (n, n_positive, pearson, spearman, auc, calibration_error, n_failed, version)."""
    return agreement_table(scores, reference, dataset, "Perspective (recorded)")
