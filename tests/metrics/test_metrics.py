"""Metrics against values computed by hand, and the SASS tables against the paper (the spine's acceptance check)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from toxlib import data
from toxlib.data.wordmatch import contains_listed_word, find_listed_words
from toxlib.metrics import binary_prf, conditional_rates, prf_table
from toxlib.papers import sass
from toxlib.studies import datasets as describe


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


def test_rtp_statistics_against_numpy():
    frame = pd.DataFrame({"prompt_toxicity": [0.1, 0.6, 0.9, 0.3, np.nan, 0.5],
                          "continuation_toxicity": [0.2, 0.1, 0.4, 0.8, 0.3, np.nan]})
    s = describe.rtp_statistics(frame)
    both = frame.dropna()
    assert s["pearson_r"] == pytest.approx(np.corrcoef(both["prompt_toxicity"], both["continuation_toxicity"])[0, 1])
    assert s["n_pearson"] == 4
    assert (s["n_prompt_scored"], s["n_toxic_prompts"]) == (5, 3)  # 0.6, 0.9 and 0.5 (>= 0.5)
    assert s["share_toxic_prompts"] == pytest.approx(3 / 5)


def test_group_counts_count_each_named_group():
    frame = pd.DataFrame({"target_groups": [["a"], ["a", "b"], ["b"]], "harmful": [True, False, False]})
    table = describe.group_label_counts(frame).set_index("target_group")
    assert table.loc["a", ["harmful", "benign", "total"]].tolist() == [1, 1, 2]
    assert table.loc["b", ["harmful", "benign", "total"]].tolist() == [0, 2, 2]


@pytest.mark.data
def test_sass_table3_matches_paper_within_001():
    ours = sass.table3(data.load_sass_predictions()).set_index("system")
    paper = sass.PAPER_TABLE3.set_index("system")
    diff = (ours[["precision", "recall", "f1"]] - paper).abs()
    assert (diff <= 0.01).all().all(), diff
    # and against the unrounded scores the authors stored for the paper: equal to float precision
    stored = data.load_sass_paper_scores().set_index("system")
    assert np.allclose(ours[["precision", "recall", "f1"]], stored, atol=1e-12)


@pytest.mark.data
def test_sass_table7_matches_paper_within_001():
    ours = sass.table7(data.load_sass_tweeteval()).set_index("system")
    diff = (ours[["precision", "recall", "f1"]] - sass.PAPER_TABLE7.set_index("system")).abs()
    assert (diff <= 0.01).all().all(), diff
    assert ours["n_missing"].tolist() == [3, 7]


@pytest.mark.data
def test_sass_table5_human_and_perspective_columns_match_paper():
    t5 = sass.table5(data.load_sass_predictions()).set_index("category")
    paper = sass.PAPER_TABLE5.set_index("category")
    assert (t5["n"] == 25).all()
    assert ((t5["human"] - paper["human"]).abs() <= 0.005).all()
    assert ((t5["perspective"] - paper["perspective"]).abs() <= 0.015).all()


def test_table6_counts_on_a_hand_made_frame():
    frame = pd.DataFrame({"text": ["fuck yes", "nice day", "shit happens", "you idiot"],
                          "perspective_label": [1, 0, 1, 1]})
    t6 = sass.table6(frame, ["fuck", "shit"], systems={"P": "perspective_label"}).iloc[0]
    assert t6["p_swear_given_toxic"] == pytest.approx(2 / 3)
    assert t6["p_toxic_given_swear"] == pytest.approx(1.0)


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


def test_table6_leaves_out_missing_predictions():
    frame = pd.DataFrame({"text": ["fuck yes", "shit", "nice day", "you idiot"],
                          "g": [1.0, np.nan, 0.0, 1.0]})
    t6 = sass.table6(frame, ["fuck", "shit"], systems={"G": "g"}).iloc[0]
    # "shit" has no prediction: 3 rows remain, 1 with a swear word, flagged
    assert (t6["n"], t6["n_contains"], t6["n_flagged"], t6["n_both"]) == (3, 1, 2, 1)
    assert t6["p_toxic_given_swear"] == pytest.approx(1.0)


def test_relabel_keeps_missing_scores_missing():
    frame = pd.DataFrame({"human_toxicity": [0.7, 0.2], "perspective_toxicity": [np.nan, 0.9]})
    out = sass.relabel(frame)
    assert out["human_label"].tolist() == [1.0, 0.0]
    assert math.isnan(out["perspective_label"][0]) and out["perspective_label"][1] == 1.0


def test_with_paper_refuses_unknown_rows():
    ours = pd.DataFrame({"system": ["PERSPECTIVE", "GPT3-FEW"], "precision": [0.1, 0.2], "recall": [0, 0],
                         "f1": [0, 0]})
    with pytest.raises(ValueError, match="GPT3-FEW"):
        sass.with_paper(ours, sass.PAPER_TABLE3, "system")
