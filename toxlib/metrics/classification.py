"""Binary precision, recall and F1 (scikit-learn), with missing predictions counted, never guessed."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import precision_recall_fscore_support


def binary_prf(y_true, y_pred) -> dict:
    """Precision, recall and F1 of the positive class (1).

    y_true: array-like of 0/1, shape (n,). y_pred: array-like of 0/1 or NaN (a prediction that failed), shape (n,).
    Rows whose prediction is NaN are left out and counted in ``n_missing``; an undefined ratio (no predicted or
    no true positives) is NaN, not 0.
    Returns a dict: precision, recall, f1 (floats in [0, 1] or NaN), n (rows scored), n_missing,
    n_true_pos (true positives in y_true), n_pred_pos.
    """
    y_true = np.asarray(y_true, dtype=float)
    y_pred = np.asarray(y_pred, dtype=float)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has shape {y_true.shape} but y_pred has {y_pred.shape}")
    if np.isnan(y_true).any():
        raise ValueError("y_true contains NaN: every gold label must be known")
    keep = ~np.isnan(y_pred)
    for name, arr in (("y_true", y_true), ("y_pred", y_pred[keep])):
        if not np.isin(arr, (0.0, 1.0)).all():
            raise ValueError(f"{name} must hold only 0 and 1, got values {sorted(set(arr.tolist()))[:10]}")
    t, p = y_true[keep].astype(int), y_pred[keep].astype(int)
    if not keep.any():
        nan = float("nan")
        return {"precision": nan, "recall": nan, "f1": nan, "n": 0, "n_missing": int(y_pred.size),
                "n_true_pos": 0, "n_pred_pos": 0}
    precision, recall, f1, _ = precision_recall_fscore_support(
        t, p, average="binary", pos_label=1, zero_division=np.nan
    )
    return {
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
        "n": int(keep.sum()),
        "n_missing": int((~keep).sum()),
        "n_true_pos": int(t.sum()),
        "n_pred_pos": int(p.sum()),
    }


def prf_table(y_true, predictions: dict) -> pd.DataFrame:
    """One :func:`binary_prf` row per system. predictions: {system name: y_pred}. Columns: system + binary_prf's
    keys."""
    rows = [{"system": name, **binary_prf(y_true, y_pred)} for name, y_pred in predictions.items()]
    return pd.DataFrame(rows)
