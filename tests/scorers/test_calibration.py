"""Isotonic calibrators (toxlib.scorers.calibration) against hand computations and scikit-learn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import roc_auc_score

from toxlib.metrics.agreement import calibration_error
from toxlib.scorers.calibration import (
    apply_calibrators,
    apply_isotonic,
    fit_calibrators,
    fit_isotonic,
    load_calibrators,
    save_calibrators,
)


def test_isotonic_knots_by_hand():
    # pool adjacent violators: 0.0 | (0.2, 0.1) -> 0.15 | 0.5; centred knots at each block's mean score
    score, ref = [0.1, 0.2, 0.3, 0.4], [0.0, 0.2, 0.1, 0.5]
    centred = fit_isotonic(score, ref)
    assert centred["x"] == pytest.approx([0.1, 0.25, 0.4]) and centred["y"] == pytest.approx([0.0, 0.15, 0.5])
    assert apply_isotonic([0.0, 0.2, 0.25, 0.9, np.nan], centred)[:4] == pytest.approx([0.0, 0.1, 0.15, 0.5])
    assert np.isnan(apply_isotonic([np.nan], centred)[0])
    steps = fit_isotonic(score, ref, centered=False)
    assert steps["y"] == pytest.approx([0.0, 0.15, 0.15, 0.5])
    assert apply_isotonic([0.2, 0.3], steps) == pytest.approx([0.15, 0.15])


def synthetic(n, seed):
    """A miscalibrated score: the reference is score**2 plus noise, clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    score = rng.uniform(0, 1, n)
    return score, np.clip(score ** 2 + rng.normal(0, 0.05, n), 0, 1)


def test_calibration_fitted_on_one_sample_fixes_another_and_keeps_the_ranking():
    fit_score, fit_ref = synthetic(4000, 0)
    score, ref = synthetic(4000, 1)
    knots = fit_isotonic(fit_score, fit_ref)
    calibrated = apply_isotonic(score, knots)
    assert calibration_error(ref, score) > 0.1 and calibration_error(ref, calibrated) < 0.01
    assert (np.diff(knots["x"]) > 0).all() and (np.diff(knots["y"]) > 0).all()  # strictly increasing map
    label = ref >= 0.5
    assert roc_auc_score(label, calibrated) == pytest.approx(roc_auc_score(label, score), abs=1e-3)
    # the step map is scikit-learn's own prediction
    steps = fit_isotonic(fit_score, fit_ref, centered=False)
    sk = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(fit_score, fit_ref)
    assert apply_isotonic(score, steps) == pytest.approx(sk.predict(score))


def test_calibrators_round_trip_through_json_and_name_a_missing_attribute(tmp_path):
    score, ref = synthetic(200, 2)
    scores = np.column_stack([score, 1 - score])
    reference = pd.DataFrame({"toxicity": ref, "insult": 1 - ref})
    calibrators = fit_calibrators(scores, reference, ("toxicity", "insult"))
    save_calibrators(calibrators, tmp_path)
    loaded = load_calibrators(tmp_path)
    assert loaded == calibrators and load_calibrators(tmp_path / "none") is None
    out = apply_calibrators(scores, loaded, ("toxicity", "insult"))
    assert out.shape == (200, 2)
    assert np.allclose(out[:, 0], apply_isotonic(score, calibrators["attributes"]["toxicity"]))
    with pytest.raises(ValueError, match="threat"):
        apply_calibrators(scores, loaded, ("toxicity", "threat"))
    with pytest.raises(ValueError, match="at least two"):
        fit_isotonic([0.5, np.nan], [0.1, 0.2])
