"""The scorers chapter's fidelity tables: reliability bins per scorer, the agreement table with its calibration
column, on a small hand-made example."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.metrics.agreement import calibration_bins, calibration_error
from toxlib.studies.scorer_fidelity import CALIBRATED, RAW, fidelity_table, reliability_table


def tables():
    reference = pd.DataFrame({"toxicity": [0.0, 0.2, 1.0, 0.6] * 5})
    raw = pd.DataFrame({"toxicity": [0.3, 0.4, 0.7, 0.6] * 5, "scorer": "distilled", "version": "v-raw", "error": None})
    calibrated = raw.assign(toxicity=[0.05, 0.2, 0.95, 0.6] * 5, version="v")
    return {RAW: raw, CALIBRATED: calibrated}, reference


def test_reliability_table_stacks_calibration_bins_per_scorer():
    scores, reference = tables()
    table = reliability_table(scores, reference, bins=5)
    expected = calibration_bins(reference["toxicity"], scores[RAW]["toxicity"], 5)
    assert table[table["scorer"] == RAW].drop(columns="scorer").reset_index(drop=True).equals(expected)
    assert set(table["scorer"]) == {RAW, CALIBRATED}


def test_fidelity_table_has_a_calibration_column_per_scorer_and_attribute():
    scores, reference = tables()
    table = fidelity_table(scores, reference).set_index("scorer")
    assert table.loc[RAW, "calibration_error"] == pytest.approx(calibration_error(reference["toxicity"],
                                                                                  scores[RAW]["toxicity"]))
    assert table.loc[CALIBRATED, "calibration_error"] < table.loc[RAW, "calibration_error"]
    assert table.loc[CALIBRATED, "version"] == "v" and (table["dataset"] == "rtp_held_out").all()
