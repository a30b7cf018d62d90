"""Metrics against values computed by hand (the SASS tables against the paper: tests/papers/sass)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toxlib.data.wordmatch import contains_listed_word, find_listed_words
from toxlib.metrics import binary_prf, conditional_rates, prf_table


def test_binary_prf_by_hand():
    # TP = 1 (index 0), FP = 1 (index 2), FN = 2 (indices 1, 4): P = 1/2, R = 1/3, F1 = 2PR/(P+R) = 0.4
    r = binary_prf([1, 1, 0, 0, 1], [1, 0, 1, 0, 0])
    assert r["precision"] == pytest.approx(0.5)
    assert r["recall"] == pytest.approx(1 / 3)
    assert r["f1"] == pytest.approx(0.4)
    assert (r["n"], r["n_missing"], r["n_true_pos"], r["n_pred_pos"]) == (5, 0, 3, 2)


def test_missing_predictions_are_left_out_not_counted_as_negative():
    # with NaN as 0 the recall would be 1/3; leaving index 1 out gives TP = 1, FN = 1 -> recall 1/2
    r = binary_prf([1, 1, 0, 1], [1, np.nan, 0, 0])
    assert r["recall"] == pytest.approx(0.5)
    assert r["precision"] == pytest.approx(1.0)
    assert (r["n"], r["n_missing"]) == (3, 1)


def test_no_predicted_positive_gives_nan_precision():
    r = binary_prf([1, 0, 1], [0, 0, 0])
    assert math.isnan(r["precision"]) and r["recall"] == 0.0


def test_binary_prf_rejects_bad_input():
    with pytest.raises(ValueError, match="only 0 and 1"):
        binary_prf([1, 0], [2, 0])
    with pytest.raises(ValueError, match="shape"):
        binary_prf([1, 0, 1], [1, 0])


def test_prf_table_rows_per_system():
    table = prf_table([1, 0, 1, 0], {"a": [1, 0, 1, 0], "b": [0, 1, 0, 1]})
    assert table["system"].tolist() == ["a", "b"]
    assert table["f1"].tolist()[0] == 1.0
    assert table["recall"].tolist()[1] == 0.0


def test_conditional_rates_by_hand():
    flagged = [True, True, True, False, False, True]
    contains = [True, False, False, True, False, True]
    r = conditional_rates(flagged, contains)
    assert r["p_contains_given_flagged"] == pytest.approx(2 / 4)
    assert r["p_flagged_given_contains"] == pytest.approx(2 / 3)
    assert (r["n_flagged"], r["n_contains"], r["n_both"], r["n"]) == (4, 3, 2, 6)
    assert math.isnan(conditional_rates([False, False], [True, False])["p_contains_given_flagged"])


def test_word_matching_is_whole_word_and_case_insensitive():
    words = ["ass", "2 girls 1 cup", "b@stard"]
    texts = ["a class act", "You ASS!", "watching 2  girls 1 cup", "what a b@stard.", "assume nothing", None]
    assert contains_listed_word(texts, words).tolist() == [False, True, True, True, False, False]
    assert find_listed_words(["ass and ass"], words) == [["ass", "ass"]]
    with pytest.raises(ValueError, match="empty"):
        contains_listed_word(["x"], [" "])


def test_non_binary_predictions_are_refused_not_rounded():
    with pytest.raises(ValueError, match="only 0 and 1"):
        binary_prf([1, 0, 1], [0.7, 0.2, 1.0])


def test_all_missing_predictions_give_nan_scores():
    r = binary_prf([1, 0], [np.nan, np.nan])
    assert math.isnan(r["f1"]) and (r["n"], r["n_missing"]) == (0, 2)


def test_conditional_rates_refuse_missing_or_fractional_values():
    for bad in ([np.nan, 1.0], [0.3, 1.0], ["False", "True"]):
        with pytest.raises(ValueError, match="booleans or 0/1"):
            conditional_rates(bad, [True, False])
