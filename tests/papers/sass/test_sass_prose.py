"""The sass chapter's exercise figures (``toxlib.papers.sass.prose``), against counts made by hand on a small
table and against scipy's exact interval."""

from __future__ import annotations

import pandas as pd
from scipy.stats import beta

from toxlib.papers import sass
from toxlib.papers.sass import prose as sass_prose


def _recorded() -> pd.DataFrame:
    """Eight comments: human toxicity and Perspective scores chosen so the counts below are easy to check."""
    return pd.DataFrame({
        "text": ["damn it", "you idiot", "nice day", "hello", "damn nice", "bad words", "fine", "ok then"],
        "human_toxicity": [0.9, 0.8, 0.1, 0.2, 0.7, 0.9, 0.1, 0.6],
        "perspective_toxicity": [0.9, 0.2, 0.6, 0.1, 0.4, 0.35, 0.1, 0.1],
        "category": ["Toxic", "Toxic", "False Positive", "Neutral", "Toxic", "Toxic", "Neutral", "Toxic"],
        "gpt3_zero": 1.0, "gpt3_one": 1.0, "gpt3_few": 1.0,
    })


def test_a_lower_threshold_is_counted_by_hand():
    prose = sass_prose.threshold_prose(_recorded(), ["damn"], 0.5, 0.5, 0.3)
    # > 0.5 flags rows 0 and 2 (one true positive); > 0.3 adds rows 4 and 5, both toxic for humans
    assert prose["sass-flags"] == "4 comments instead of 2"
    assert prose["sass-precision"] == "precision rises from 0.500 to 0.750"
    assert prose["sass-recall"] == "recall rises from 0.200 to 0.600"  # 5 toxic comments
    assert prose["sass-direction"].startswith("Precision and recall both rise")
    assert prose["sass-fp-flags"] == "1 of its 2 flags"
    assert prose["sass-added"].startswith("2 comments it adds between 0.3 and 0.5, 2 are toxic")
    assert prose["sass-added"].endswith("(true positives go from 1 to 3)")
    # "damn" in rows 0 and 4: P(toxic | swear) 1/2 -> 2/2; P(swear | flagged) 1/2 -> 2/4
    assert prose["sass-toxic-given-swear"] == "P(toxic | swear word) rises from 0.500 to 1.000"
    assert prose["sass-swear-given-toxic"] == "P(swear word | flagged) stays at 0.500 (2 of 4)"
    assert prose["sass-swear-all-flagged"] == "1 of them was flagged at 0.5"


def test_a_threshold_that_trades_precision_for_recall_says_so():
    recorded = _recorded().assign(perspective_toxicity=[0.9, 0.6, 0.2, 0.4, 0.8, 0.7, 0.45, 0.35])
    prose = sass_prose.threshold_prose(recorded, ["damn"], 0.5, 0.5, 0.3)
    assert prose["sass-direction"].endswith("the usual trade-off")
    assert prose["sass-auc"] == "0.87" and prose["sass-auc-reading"] == "a good ranking"  # 13 of 15 pairs


def test_the_auc_is_read_around_chance_in_both_directions():
    from toxlib.papers.sass.prose import _auc_reading

    assert _auc_reading(0.4945) == "no better than chance" and _auc_reading(0.40) == "worse than chance"
    assert _auc_reading(0.65) == "a weak ranking"


def test_word_lists_are_compared_and_the_interval_is_clopper_pearsons():
    pred = sass.relabel(pd.concat([_recorded()] * 30, ignore_index=True).assign(
        category=lambda f: f["category"]))
    same = sass_prose.word_list_prose(pred, {"short": ["damn"], "long": ["damn", "zzz"]})
    differ = sass_prose.word_list_prose(pred, {"short": ["damn"], "long": ["damn", "idiot"]})
    assert same["sass-lists-same"].startswith("The list does not matter")
    assert same["sass-lists-extra"].startswith("The 1 word of the longer list that the shorter one lacks occurs in 0 "
                                               "SASS comments. To see the list matter")
    assert differ["sass-lists-same"].startswith("The list matters")
    k, n = 30, 60  # "damn" in 60 comments, flagged (> 0.5) in the 30 copies of row 0
    assert same["sass-list-k-of-n"] == f"{k} of {n}"
    low, high = beta.ppf(0.025, k, n - k + 1), beta.ppf(0.975, k + 1, n - k)
    assert same["sass-list-ci"] == f"{low:.2f} to {high:.2f}"
    assert same["sass-list-without"] == "some of Perspective's flags (30 of 60) contain no swear word at all"
    one = sass_prose.word_list_prose(pred, {"short": ["damn"]})
    assert one.keys() == same.keys() and one["sass-lists-extra"] == "With one list there is nothing to compare"
    assert same["sass-list-reading"] == "Perspective left 30 of the 60 comments with a swear word unflagged"
    every = sass.relabel(_recorded().assign(perspective_toxicity=[0.9, 0.1, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1]))
    both = sass_prose.word_list_prose(every, {"short": ["damn"]})
    assert both["sass-list-reading"].startswith("That is consistent")
    assert both["sass-list-without"] == "every one of Perspective's 2 flags contains a swear word"
