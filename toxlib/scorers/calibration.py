"""Calibrating a scorer's attributes to the reference it emulates: one monotone map per attribute, fitted by
isotonic regression (scikit-learn) of the reference on the raw score, stored as JSON knots.

Perspective's own scores are isotonic-calibrated (RealToxicityPrompts, section 2), so the distilled scorer is mapped
the same way: for each attribute, ``IsotonicRegression`` fits a step function s -> E[reference | raw score s] on a
calibration split that neither trained the network nor evaluates it. Plain isotonic regression is a step function,
which ties every text inside a step and so costs ranking (AUC); ``centered=True`` keeps one knot per step at the
mean raw score of the step's texts and interpolates linearly between knots (centred isotonic regression, Oron and
Flournoy 2017), a strictly increasing map that keeps the ranking inside the knots' range and the step means.

A calibrator file (``calibration.json``): {"method": str, "n": texts fitted on, "attributes": {attribute: {"x":
[raw knots, increasing], "y": [calibrated values, non-decreasing, in [0, 1]]}}}. Applying it is ``np.interp``
(flat beyond the first and last knots).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.isotonic import IsotonicRegression

CALIBRATION_FILE = "calibration.json"


def fit_isotonic(score, reference, centered: bool = True) -> dict:
    """Knots {"x": [...], "y": [...]} of the isotonic map from ``score`` to ``reference`` (array-like floats, shape
    (n,); NaN pairs left out). centered: one knot per step at its texts' mean score (see the module doc); else the
    step function's own end points (sklearn's ``X_thresholds_``, ``y_thresholds_``)."""
    raw, ref = np.asarray(score, dtype=float), np.asarray(reference, dtype=float)
    keep = ~(np.isnan(raw) | np.isnan(ref))
    raw, ref = raw[keep], ref[keep]
    if len(raw) < 2:
        raise ValueError(f"cannot calibrate on {len(raw)} scored pair(s); give at least two texts with a reference")
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(raw, ref)
    if not centered:
        return {"x": iso.X_thresholds_.tolist(), "y": iso.y_thresholds_.tolist()}
    fitted = iso.predict(raw)
    steps = np.unique(fitted)  # PAV blocks have distinct, increasing values
    x = [float(raw[fitted == value].mean()) for value in steps]
    return {"x": x, "y": steps.tolist()}


def apply_isotonic(score, knots: dict) -> np.ndarray:
    """``score`` (array-like, any shape) mapped through ``knots`` ({"x", "y"} from ``fit_isotonic``); NaN stays
    NaN."""
    raw = np.asarray(score, dtype=float)
    out = np.interp(raw, knots["x"], knots["y"])
    return np.where(np.isnan(raw), np.nan, out)


def fit_calibrators(scores: np.ndarray, reference, attributes, centered: bool = True) -> dict:
    """A calibrator file's content for ``scores`` (n, len(attributes)) raw scores against ``reference`` (a
    DataFrame with one column per attribute, n rows aligned with ``scores``)."""
    method = "centred isotonic regression" if centered else "isotonic regression (step function)"
    return {"method": f"{method}, sklearn.isotonic.IsotonicRegression", "n": int(len(scores)),
            "attributes": {a: fit_isotonic(scores[:, j], reference[a], centered) for j, a in enumerate(attributes)}}


def apply_calibrators(scores: np.ndarray, calibrators: dict, attributes) -> np.ndarray:
    """``scores`` (n, len(attributes)) with each column mapped through its attribute's knots; a new array."""
    maps = calibrators["attributes"]
    missing = [a for a in attributes if a not in maps]
    if missing:
        raise ValueError(f"the calibrators have no map for {', '.join(missing)}; refit them on these attributes")
    return np.column_stack([apply_isotonic(scores[:, j], maps[a]) for j, a in enumerate(attributes)])


def save_calibrators(calibrators: dict, folder) -> Path:
    """Write ``calibrators`` to ``folder/calibration.json``; returns the path."""
    path = Path(folder) / CALIBRATION_FILE
    path.write_text(json.dumps(calibrators, indent=None, sort_keys=True) + "\n")
    return path


def load_calibrators(folder) -> dict | None:
    """The calibrators stored in ``folder``, or None when it has none (weights trained before calibration)."""
    path = Path(folder) / CALIBRATION_FILE
    return json.loads(path.read_text()) if path.exists() else None
