"""Conditional rates between two binary properties of the same texts (e.g. "flagged toxic" and "contains a swear word")."""

from __future__ import annotations

import numpy as np


def conditional_rates(flagged, contains) -> dict:
    """P(contains | flagged) and P(flagged | contains).

    flagged, contains: boolean array-likes of shape (n,). An empty conditioning set gives NaN, not 0.
    Returns a dict: p_contains_given_flagged, p_flagged_given_contains, n_flagged, n_contains, n_both, n.
    """
    flagged = np.asarray(flagged, dtype=bool)
    contains = np.asarray(contains, dtype=bool)
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
