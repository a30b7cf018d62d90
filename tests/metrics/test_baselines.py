"""Trivial baselines (toxlib.metrics.baselines): the constants scored by binary_prf, the random answer's closed forms
equal to binary_prf draw by draw, seeded rows, the floor's verdict rule and the degenerate-model test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.metrics import binary_prf, prf_table
from toxlib.metrics.baselines import (
    ALWAYS,
    BASELINES,
    NEVER,
    RANDOM,
    baseline_rows,
    degenerate,
    f1_floor,
    floored,
    prevalence_text,
    random_draws,
    top_answer_share,
    with_baselines,
)

LABELS = np.array([1] * 181 + [0] * 69)  # SASS: 181 of 250 comments toxic by the human threshold


def test_the_constants_score_what_prevalence_gives_them():
    rows = baseline_rows(LABELS).set_index("system")
    p = 181 / 250
    assert rows.loc[ALWAYS, ["precision", "recall"]].tolist() == pytest.approx([p, 1.0])
    assert rows.loc[ALWAYS, "f1"] == pytest.approx(2 * p / (1 + p)) == pytest.approx(0.8399, abs=1e-4)
    assert f1_floor(LABELS) == rows.loc[ALWAYS, "f1"]
    assert np.isnan(rows.loc[NEVER, "precision"]) and rows.loc[NEVER, "recall"] == 0 and rows.loc[NEVER, "f1"] == 0
    assert rows.loc[RANDOM, "f1"] == pytest.approx(p, abs=0.01)  # a guesser at prevalence: F1 about p
    assert rows.loc[RANDOM, "f1_low"] < rows.loc[RANDOM, "f1"] < rows.loc[RANDOM, "f1_high"]
    assert rows.loc[RANDOM, "n_pred_pos"] == 181 and rows["n"].eq(250).all()
    assert prevalence_text(LABELS, "comments") == "181 of 250 comments (72.4%)"


def test_the_random_answers_closed_forms_equal_binary_prf_on_each_draw():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 40)
    draws = random_draws(labels, draws=50, seed=11)
    answers = np.random.default_rng(11).random((50, 40)) < labels.mean()  # the same draws, as the module makes them
    for i in range(50):
        expected = binary_prf(labels, answers[i].astype(float))
        got = draws.iloc[i]
        for key in ("precision", "recall", "f1"):
            assert got[key] == pytest.approx(expected[key], nan_ok=True)


def test_the_rows_are_the_same_on_every_call():
    first, second = baseline_rows(LABELS), baseline_rows(LABELS)
    pd.testing.assert_frame_equal(first, second)
    assert list(first["system"]) == list(BASELINES)


def test_baselines_sit_below_the_systems_with_empty_columns_they_lack():
    table = prf_table(LABELS, {"system a": LABELS.astype(float)})
    out = with_baselines(table, LABELS)
    assert list(out["system"]) == ["system a", *BASELINES]
    assert out.loc[0, "f1"] == 1.0 and np.isnan(out.loc[0, "f1_low"])


def test_bad_labels_are_refused_by_name():
    with pytest.raises(ValueError, match="only 0 and 1"):
        baseline_rows([0, 1, 2])
    with pytest.raises(ValueError, match="one 0/1 label per item"):
        baseline_rows([])


def test_only_a_holding_claim_that_does_not_beat_the_floor_becomes_not_informative():
    assert floored("holds", True) == "holds"
    assert floored("holds", False) == floored("holds", None) == "not informative"
    for verdict in ("fails", "undecided", "not judged"):
        assert floored(verdict, False) == verdict


def test_degenerate_readings():
    assert top_answer_share(250, 250) == 1.0 and top_answer_share(10, 250) == 0.96
    assert degenerate(0.96) and not degenerate(0.95) and not degenerate(0.7)
    assert degenerate(0.6, score_sd=0.001) and not degenerate(0.6, score_sd=0.2)
    assert not degenerate(float("nan"), float("nan"))
