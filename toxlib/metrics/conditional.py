"""Conditional rates between two binary properties of the same texts (e.g. "flagged toxic" and "contains a swear
word")."""

from __future__ import annotations

import numpy as np


def _as_bool(values, name: str) -> np.ndarray:
    """Booleans from bools or 0/1; anything else (NaN, 0.3, "False") is an error rather than a silent True."""
    arr = np.asarray(values)
    if arr.dtype != bool:
        try:
            ok = np.isin(arr.astype(float), (0.0, 1.0)).all()
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"{name} must hold booleans or 0/1 (drop missing predictions first)")
    return arr.astype(bool)


def conditional_rates(flagged, contains) -> dict:
    """P(contains | flagged) and P(flagged | contains).

    flagged, contains: boolean array-likes of shape (n,). An empty conditioning set gives NaN, not 0.
    Returns a dict: p_contains_given_flagged, p_flagged_given_contains, n_flagged, n_contains, n_both, n.
    """
    flagged, contains = _as_bool(flagged, "flagged"), _as_bool(contains, "contains")
    if flagged.shape != contains.shape:
        raise ValueError(f"flagged has shape {flagged.shape} but contains has {contains.shape}")
    n_flagged, n_contains = int(flagged.sum()), int(contains.sum())
    n_both = int((flagged & contains).sum())
    return {
        "p_contains_given_flagged": n_both / n_flagged if n_flagged else np.nan,
        "p_flagged_given_contains": n_both / n_contains if n_contains else np.nan,
        "n_flagged": n_flagged,
        "n_contains": n_contains,
        "n_both": n_both,
        "n": int(flagged.size),
    }
