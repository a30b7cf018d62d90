"""Metrics. One job per module: ``classification`` (precision/recall/F1), ``baselines`` (what a constant or random
answer scores on the same items, and the "not informative" verdict), ``conditional`` (conditional rates),
``agreement`` (correlation, AUC and calibration of one score against another), ``safety_score`` (the safety score),
``toxicity`` (expected maximum toxicity, toxicity probability, the bootstrap curve), ``uncertainty`` (intervals,
verdicts and the sample size that would decide a claim; ``interval_key``: the key its bootstrap bounds are kept
under).

May import: common (never store: intervals are kept through ``toxlib.common.memo``).
"""

from toxlib.metrics.agreement import agreement, calibration_bins
from toxlib.metrics.classification import binary_prf, prf_table
from toxlib.metrics.conditional import conditional_rates
from toxlib.metrics.toxicity import (
                                     bootstrap_expected_max,
                                     expected_max_of_pool,
                                     expected_max_toxicity,
                                     toxicity_probability,
)

__all__ = ["agreement", "binary_prf", "bootstrap_expected_max", "calibration_bins", "conditional_rates",
           "expected_max_of_pool", "expected_max_toxicity", "prf_table", "toxicity_probability"]
