"""Metrics. One job per module: ``classification`` (precision/recall/F1), ``conditional`` (conditional rates),
``agreement`` (correlation, AUC and calibration of one score against another), ``safety`` (the safety score)."""

from toxlib.metrics.agreement import agreement, calibration_bins
from toxlib.metrics.classification import binary_prf, prf_table
from toxlib.metrics.conditional import conditional_rates

__all__ = ["agreement", "binary_prf", "calibration_bins", "conditional_rates", "prf_table"]
