"""Metrics. One job per module: ``classification`` (precision/recall/F1), ``conditional`` (conditional rates)."""

from toxlib.metrics.classification import binary_prf, prf_table
from toxlib.metrics.conditional import conditional_rates

__all__ = ["binary_prf", "conditional_rates", "prf_table"]
