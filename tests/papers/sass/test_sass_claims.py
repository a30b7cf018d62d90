"""SASS claims (toxlib.papers.sass.paper_claims) on small hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.metrics.baselines import F1_FLOOR
from toxlib.papers import sass
from toxlib.papers.sass import paper_claims
from toxlib.publish import claims


def _floor_row(f1: float) -> pd.DataFrame:
    """The "always toxic" baseline's row (only its F1 is read)."""
    return pd.DataFrame({"system": [F1_FLOOR], "f1": [f1]})


def _recorded_tables(perspective_f1: float = 0.08, sexual_harassment: float = 0.219, floor: float = 0.84):
    table3 = sass.PAPER_TABLE3.copy()
    table3.loc[table3["system"] == "PERSPECTIVE", "f1"] = perspective_f1
    table3 = pd.concat([table3, _floor_row(floor)], ignore_index=True)
    table5 = pd.DataFrame({"category": ["False Positive", "Sexual Harassment", "Neutral"],
                           "perspective": [0.8, sexual_harassment, 0.1], "human": [0.05, 0.8, 0.0]})
    table6 = pd.DataFrame({"word_list": ["LDNOOBW rtp (378)"] * 2 + ["LDNOOBW en (403)"],
                           "scope": ["all 250 comments", "False Positive category", "all 250 comments"],
                           "system": ["PERSPECTIVE"] * 3, "p_toxic_given_swear": [1.0, 0.5, 0.2],
                           "p_swear_given_toxic": [0.5, 0.9, 0.1], "n_contains": [12, 5, 30],
                           "n_both": [12, 3, 6], "n_flagged": [24, 4, 60]})
    return table3, table5, table6, sass.PAPER_TABLE7.copy()


def _local_tables(models=("m",), floor: float = 0.35):
    """Local tables whose "always toxic" baseline scores F1 ``floor`` (0.35: a prevalence of about 21%, below the
    few-shot LM's 0.4)."""
    rows = [{"system": "PERSPECTIVE", "kind": "recorded", "setting": "threshold", "reading": "recorded",
             "model": "Perspective", "f1": 0.1},
            {"system": "distilled", "kind": "local scorer", "setting": "threshold", "reading": "score",
             "model": "distilled", "f1": 0.2},
            {"system": "bilstm", "kind": "local scorer", "setting": "threshold", "reading": "score",
             "model": "bilstm", "f1": 0.1}]
    for m in models:
        for setting, f1 in (("zero", 0.3), ("one", 0.2), ("few", 0.4)):
            rows.append({"system": f"{m} {setting.upper()} (next-token)", "kind": "local LM", "setting": setting,
                         "reading": "next-token", "model": m, "f1": f1})
    rows.append({"system": F1_FLOOR, "kind": "trivial baseline", "setting": "constant", "reading": "none",
                 "model": "none", "f1": floor})
    classifiers = pd.DataFrame(rows)
    table6_local = pd.DataFrame({"word_list": ["LDNOOBW rtp"] * 3, "system": ["PERSPECTIVE", "distilled", "bilstm"],
                                 "p_toxic_given_swear": [1.0, 0.75, 0.2], "n_contains": [12, 12, 100],
                                 "n_both": [12, 9, 20], "n_flagged": [20, 15, 40], "n": [250, 250, 250]})
    table7_local = pd.DataFrame({"system": ["PERSPECTIVE", "GPT-3-FEW", "m FEW (next-token)", "distilled", F1_FLOOR],
                                 "f1": [0.48, 0.52, 0.45, 0.3, floor]})
    return classifiers, table6_local, table7_local


def test_recorded_part_reproduces_the_papers_values():
    rows = sass.claims(*_recorded_tables(), *_local_tables(), 250, 1000, 0.5)
    by_claim = {r["claim"]: r for r in rows}
    prf = by_claim["Table 3 (SASS): GPT-3-FEW precision/recall/F1"]
    assert prf["paper_value"] == "0.73/0.52/0.61" and prf["shown"] == "0.730/0.520/0.610"
    assert prf["verdict"] == "holds"
    assert by_claim["GPT-3-FEW beats Perspective on SASS (F1)"]["paper_value"] == "0.61 vs 0.08"
    fp = by_claim["Perspective rates False Positive comments highest of all categories"]
    assert fp["paper_value"] == "0.809" and fp["shown"] == "0.8" and fp["verdict"] == "holds"
    assert by_claim["Perspective: Sexual Harassment 21.9% vs humans 80%"]["shown"] == "0.219 vs 0.800"
    swear = by_claim["Perspective flags every comment containing a swear word"]
    # the rtp list, all comments: 12 of 12 flagged, but the exact interval [0.735, 1] still reaches below 0.8;
    # 0.025 ** (1 / n) > 0.8 needs n = 17 comments
    assert swear["shown"] == "1" and swear["verdict"] == "undecided"
    assert swear["ci_low"] == pytest.approx(0.7354, abs=2e-4) and swear["n_to_decide"] == 17
    assert swear["note"].startswith("12 of 12 comments with an LDNOOBW swear word flagged (the paper counts 18)")
    given = by_claim["p(swear word | Perspective flags toxic)"]  # 12 of 24 = 0.50, [0.29, 0.71]: not within 0.48..0.58
    assert given["verdict"] == "undecided" and given["threshold"] == "0.48..0.58"
    assert by_claim["Table 7 (TweetEval): PERSPECTIVE precision/recall/F1"]["verdict"] == "holds"


def test_recorded_part_detects_departures():
    rows = sass.claims(*_recorded_tables(perspective_f1=0.7, sexual_harassment=0.3), *_local_tables(), 250, 1000, 0.5)
    by_claim = {r["claim"]: r for r in rows}
    assert by_claim["Table 3 (SASS): PERSPECTIVE precision/recall/F1"]["verdict"] == "fails"
    assert by_claim["GPT-3-FEW beats Perspective on SASS (F1)"]["verdict"] == "fails"  # 0.61 < 0.7
    assert by_claim["Perspective: Sexual Harassment 21.9% vs humans 80%"]["verdict"] == "fails"


def test_local_part_reads_the_best_lm_and_each_scorer():
    rows = sass.claims(*_recorded_tables(), *_local_tables(), 100, 500, 0.5)
    by_claim = {r["claim"]: r for r in rows}
    best = by_claim["A few-shot prompted LM beats Perspective on SASS (F1); here: the best local LM system"]
    assert best["shown"] == "m FEW (next-token): 0.400 vs 0.100" and best["verdict"] == "holds"
    assert best["note"].startswith("100 comments; Perspective recomputed on the same comments")
    few = by_claim["Few-shot prompting beats zero- and one-shot (F1); here: m, next-token reading"]
    assert few["paper_value"] == "0.61 vs 0.31 / 0.19" and few["shown"] == "0.40 vs 0.30 / 0.20"
    scorer = by_claim["Perspective flags every comment with a swear word; here: the distilled scorer"]
    assert scorer["shown"] == "0.75" and scorer["verdict"] == "undecided"  # 9 of 12: [0.43, 0.95] contains 0.8
    reversed_ = by_claim["Perspective flags every comment with a swear word; here: the bilstm scorer"]
    assert reversed_["verdict"] == "fails" and reversed_["ci_high"] < 0.8  # 20 of 100: [0.13, 0.29]
    tweets = by_claim["On TweetEval a few-shot LM is close to Perspective (F1); here: the best local LM"]
    assert tweets["shown"] == "m FEW (next-token): 0.450 vs 0.480" and tweets["verdict"] == "holds"
    assert (best["id"], few["id"], scorer["id"], tweets["id"]) == (
        "best_lm_beats_perspective:models:m", "few_beats_zero_one:model:m",
        "flags_every_swear_comment:scorer:distilled", "tweeteval_close_to_perspective:models:m")
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["subject"] for r in rows if r["kind"] == "recorded predictions"} == {
        "system:PERSPECTIVE", "system:GPT-3-ZERO", "system:GPT-3-ONE", "system:GPT-3-FEW"}


def test_best_lm_system_filters_by_reading():
    classifiers, _, _ = _local_tables()
    assert sass.best_lm_system(classifiers)["system"] == "m FEW (next-token)"
    assert sass.best_lm_system(classifiers, "sampled") is None


def test_local_f1_comparisons_carry_paired_intervals_over_comments():
    rng = np.random.default_rng(6)
    human = rng.integers(0, 2, 200)
    flip = lambda p: np.where(rng.random(200) < p, 1 - human, human)  # noqa: E731
    comments = pd.DataFrame({"human_label": human, "persp": flip(0.45), "few": flip(0.05), "zero": flip(0.45),
                             "one": flip(0.05)})
    systems = {"PERSPECTIVE": "persp", "m FEW (next-token)": "few", "m ZERO (next-token)": "zero",
               "m ONE (next-token)": "one"}
    rows = sass.claims(*_recorded_tables(), *_local_tables(), 200, 500, 0.5, comments, systems)
    by_claim = {r["claim"]: r for r in rows}
    best = by_claim["A few-shot prompted LM beats Perspective on SASS (F1); here: the best local LM system"]
    assert best["verdict"] == "holds" and best["ci_low"] > 0 and best["n"] == 200  # few is far better
    few = by_claim["Few-shot prompting beats zero- and one-shot (F1); here: m, next-token reading"]
    assert few["verdict"] == "undecided" and few["ci_low"] < 0 < few["ci_high"]  # one is as good as few
    labels = comments["human_label"].to_numpy()
    assert paper_claims._f1(labels, labels) == 1.0 and paper_claims._f1(labels, 1 - labels) == 0.0
    reversed_ = sass.f1_difference(comments, "persp", ["few"])
    assert reversed_.high < 0  # Perspective-like noise is clearly worse than few


def test_a_scorer_without_swear_comments_is_not_judged():
    classifiers, table6_local, table7_local = _local_tables()
    table6_local.loc[table6_local["system"] == "bilstm", ["n_contains", "n_both"]] = 0
    rows = sass.claims(*_recorded_tables(), classifiers, table6_local, table7_local, 30, 40, 0.5)
    bilstm = {r["claim"]: r for r in rows}["Perspective flags every comment with a swear word; here: the bilstm scorer"]
    assert bilstm["verdict"] == "not judged" and bilstm["ci_low"] is None


def test_a_share_of_nothing_is_not_judged():
    """0 of 0 comments is no evidence: no interval and "not judged", not the 0 of 1 it used to read as."""
    from toxlib.papers.sass.paper_claims import _share, share_interval

    assert share_interval(0, 0) is None
    none = claims.claim("share", 0.9, threshold=0.8, kind="recorded predictions", **_share(share_interval(0, 0)),
                        rule="share", subject="system:PERSPECTIVE")
    assert none["verdict"] == "not judged" and none["ci_low"] is None and none["shown"] == "NaN"
    some = claims.claim("share", 0.9, threshold=0.8, kind="recorded predictions", **_share(share_interval(9, 10)),
                        rule="share", subject="system:PERSPECTIVE")
    assert some["our_value"] == 0.9 and some["n"] == 10 and some["verdict"] == "undecided"


def test_the_bootstrap_f1_is_scikit_learns_with_nan_where_undefined():
    from sklearn.metrics import f1_score

    from toxlib.papers.sass.paper_claims import _f1

    rng = np.random.default_rng(0)
    for _ in range(20):
        labels, predicted = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
        assert _f1(labels, predicted) == pytest.approx(f1_score(labels, predicted, zero_division=np.nan))
    empty = np.zeros(5, dtype=int)
    assert np.isnan(_f1(empty, empty)) and np.isnan(f1_score(empty, empty, zero_division=np.nan))


def test_a_model_whose_every_reply_went_unparsed_is_not_judged_not_a_crash():
    """A model that never answers True or False (gibberish) leaves no comment to compare: the claims say "not
    judged" (it failed with "no units to resample" in the chapter)."""
    human = np.arange(30) % 2
    comments = pd.DataFrame({"human_label": human, "persp": human, "few": np.nan, "zero": np.nan, "one": np.nan})
    systems = {"PERSPECTIVE": "persp", "m FEW (next-token)": "few", "m ZERO (next-token)": "zero",
               "m ONE (next-token)": "one"}
    rows = sass.claims(*_recorded_tables(), *_local_tables(), 30, 40, 0.5, comments, systems)
    by_claim = {r["claim"]: r for r in rows}
    best = by_claim["A few-shot prompted LM beats Perspective on SASS (F1); here: the best local LM system"]
    few = by_claim["Few-shot prompting beats zero- and one-shot (F1); here: m, next-token reading"]
    assert best["verdict"] == few["verdict"] == "not judged" and "no comment" in best["note"]
    assert sass.f1_difference(comments, "few", ["persp"]) is None
