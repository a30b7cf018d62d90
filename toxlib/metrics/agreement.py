"""How well one score stands in for another: Pearson and Spearman correlation (scipy.stats), ROC AUC against the
reference thresholded at 0.5 (scikit-learn), the mean absolute calibration error over decile bins, and a binned
calibration table."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import roc_auc_score


def agreement(reference, score, threshold: float = 0.5) -> dict:
    """Agreement of ``score`` with ``reference`` (both array-like of floats, shape (n,); NaN pairs are left out).

    Returns: n (pairs used), n_positive (reference >= threshold), pearson, spearman (NaN when either side is
    constant or n < 3), auc (ROC AUC of ``score`` for the label reference >= threshold; NaN when only one class
    is present), calibration_error (``calibration_error``: mean absolute gap over decile bins of the score).
    """
    ref, pred = np.asarray(reference, dtype=float), np.asarray(score, dtype=float)
    if ref.shape != pred.shape:
        raise ValueError(f"reference has shape {ref.shape} but score has {pred.shape}")
    keep = ~(np.isnan(ref) | np.isnan(pred))
    ref, pred = ref[keep], pred[keep]
    label = ref >= threshold
    nan = float("nan")
    varied = len(ref) >= 3 and np.ptp(ref) > 0 and np.ptp(pred) > 0
    return {
        "n": int(len(ref)),
        "n_positive": int(label.sum()),
        "pearson": float(pearsonr(ref, pred)[0]) if varied else nan,
        "spearman": float(spearmanr(ref, pred)[0]) if varied else nan,
        "auc": float(roc_auc_score(label, pred)) if 0 < label.sum() < len(label) else nan,
        "calibration_error": calibration_error(ref, pred),
    }


def calibration_error(reference, score, bins: int = 10) -> float:
    """Mean absolute calibration error over decile bins of ``score`` (both array-like of floats, shape (n,); NaN
    pairs are left out).

    Definition: sort the pairs by ``score`` (ties keep their input order), cut them into ``bins`` consecutive
    groups of equal count (deciles for bins=10; ``np.array_split``, so sizes differ by at most one), and average
    |mean score - mean reference| over the groups, each group counting equally. 0 when, in every tenth of the
    texts ranked by score, the scores average what the reference averages (a calibrated emulator; the distilled
    scorer aims at <= 0.02). Returns NaN when there are fewer pairs than bins.
    """
    ref, pred = np.asarray(reference, dtype=float), np.asarray(score, dtype=float)
    if ref.shape != pred.shape:
        raise ValueError(f"reference has shape {ref.shape} but score has {pred.shape}")
    keep = ~(np.isnan(ref) | np.isnan(pred))
    ref, pred = ref[keep], pred[keep]
    if len(ref) < bins:
        return float("nan")
    groups = np.array_split(np.argsort(pred, kind="stable"), bins)
    return float(np.mean([abs(pred[g].mean() - ref[g].mean()) for g in groups]))


def calibration_bins(reference, score, bins: int = 10) -> pd.DataFrame:
    """Mean reference per bin of ``score`` (equal-width bins over [0, 1]): the data of a calibration plot.

    Returns one row per non-empty bin: bin_low, bin_high, mean_score, mean_reference, n. A perfectly calibrated
    emulator has mean_reference == mean_score in every bin.
    """
    frame = pd.DataFrame({"reference": np.asarray(reference, float), "score": np.asarray(score, float)}).dropna()
    edges = np.linspace(0, 1, bins + 1)
    frame["bin"] = np.clip(np.digitize(frame["score"], edges[1:-1]), 0, bins - 1)
    grouped = frame.groupby("bin").agg(mean_score=("score", "mean"), mean_reference=("reference", "mean"),
                                       n=("score", "size")).reset_index()
    grouped.insert(0, "bin_low", edges[grouped["bin"]])
    grouped.insert(1, "bin_high", edges[grouped["bin"] + 1])
    return grouped.drop(columns="bin")
