"""RealToxicityPrompts claims (toxlib.papers.rtp, toxlib.papers.rtp_detox) on small hand-built tables."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.papers import rtp, rtp_detox

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _curves(values: dict[str, dict[int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "n": n, "mean": v} for m, by_n in values.items() for n, v in by_n.items()])


def test_unprompted_claims_read_the_curve_at_100_and_1000():
    curves = _curves({"a": {1: 0.1, 100: 0.6, 1000: 0.95}, "b": {1: 0.1, 100: 0.4, 1000: 0.92}})
    above_half, gpt2, most = rtp.claims_unprompted(curves, ["a", "b"], 1000, "distilled")
    assert above_half["our_value"] == "a: 0.60; b: 0.40"
    assert above_half["verdict"] == "fails"  # b stays below 0.5 at n = 100
    assert gpt2["paper_value"] == "0.65" and gpt2["verdict"] == "not judged"
    assert most["our_value"] == "a: 0.95; b: 0.92" and most["verdict"] == "holds"  # 2 of 2 above 0.9
    assert most["note"] == "at n = 1000 (pool 1,000)"


def test_unprompted_claims_use_the_pool_size_when_smaller_than_100():
    curves = _curves({"a": {1: 0.2, 50: 0.55}})
    above_half, _, most = rtp.claims_unprompted(curves, ["a"], 50, "bilstm")
    assert above_half["verdict"] == "holds" and above_half["note"] == "at n = 50; bilstm scorer"
    assert most["verdict"] == "fails"  # 0.55 < 0.9


def test_prompted_claims_compare_classes_at_k():
    rows = [("a", "toxic", 25, 0.8, 0.9), ("a", "non-toxic", 25, 0.5, 0.45), ("b", "toxic", 25, 0.3, 0.2),
            ("b", "non-toxic", 25, 0.4, 0.35), ("a", "toxic", 5, 0.1, 0.1), ("a", "non-toxic", 5, 0.9, 0.9)]
    table2 = pd.DataFrame(rows, columns=["model", "prompt_class", "k", "exp_max_toxicity", "toxicity_probability"])
    challenging = {"n_prompts": 40, "n_all_models": 10, "share": 0.25}
    higher, near, some = rtp.claims_prompted(table2, challenging, ["a", "b"], 25, 20, 30)
    assert higher["our_value"] == "a: 0.80 vs 0.50; b: 0.30 vs 0.40" and higher["verdict"] == "fails"
    assert higher["note"] == "k = 25; 20 toxic, 30 non-toxic prompts"
    assert near["our_value"] == "a: 0.45; b: 0.35" and near["verdict"] == "fails"  # b below 0.4
    assert some["paper_value"] == rtp.PAPER["challenging_all_models"].value == "327 of 1,225 (27%)"
    assert some["our_value"] == "10 of 40 (25%)" and some["verdict"] == "holds"


def _long3(emt: dict, prob: float = 0.5) -> pd.DataFrame:
    return pd.DataFrame([{"method": m, "prompt_class": c, "exp_max_toxicity": v, "toxicity_probability": prob}
                         for m, by_class in emt.items() for c, v in by_class.items()])


def test_detox_claims_rank_methods_by_relative_effect():
    base = {"toxic": 0.8, "non-toxic": 0.5, "unprompted": 0.4}
    long3 = _long3({"base model": base, "WORD FILTER": {"toxic": 0.72}, "VOCAB-SHIFT": {"toxic": 0.4},
                    "DAPT (non-toxic)": {"toxic": 0.6, "non-toxic": 0.3, "unprompted": 0.2},
                    "DAPT (toxic)": {"toxic": 0.9, "non-toxic": 0.6, "unprompted": 0.5}, "ATCON": {"toxic": 0.76},
                    "base model (PPLM subset, fp32)": {"toxic": 0.5}, "PPLM": {"toxic": 0.25}})
    perplexity = pd.DataFrame({"method": ["base model", "VOCAB-SHIFT", "DAPT (toxic)", "PPLM"],
                               "ratio": [1.0, 1.2, 1.1, 1.6]})
    lower, best, dapt, toxic_ref, failsafe, ppl = rtp_detox.claims(long3, perplexity, 8, 3, 4, 24)
    # effects: VOCAB-SHIFT 0.4/0.8-1 = -50%, DAPT -25%, WORD FILTER -10%, ATCON -5%; PPLM 0.25/0.5-1 = -50%
    assert lower["our_value"] == ("VOCAB-SHIFT: -50%; DAPT (non-toxic): -25%; WORD FILTER: -10%; ATCON: -5%; "
                                  "PPLM (its subset): -50%")
    assert lower["verdict"] == "holds"
    assert best["our_value"] == "VOCAB-SHIFT, DAPT (non-toxic), WORD FILTER, ATCON" and best["verdict"] == "holds"
    assert dapt["our_value"] == "toxic: 0.60 vs 0.90; non-toxic: 0.30 vs 0.60; unprompted: 0.20 vs 0.50"
    assert toxic_ref["verdict"] == "holds"
    assert failsafe["verdict"] == "holds"  # every probability is 0.5 > 0
    assert ppl["our_value"] == "VOCAB-SHIFT: x1.20; DAPT (toxic): x1.10; PPLM: x1.60" and ppl["verdict"] == "fails"


def test_detox_claims_leave_out_the_unprompted_column_without_unprompted_groups():
    base = {"toxic": 0.8, "non-toxic": 0.5}
    long3 = _long3({"base model": base, "WORD FILTER": {"toxic": 0.9}, "VOCAB-SHIFT": {"toxic": 0.4},
                    "DAPT (non-toxic)": {"toxic": 0.9, "non-toxic": 0.3},
                    "DAPT (toxic)": {"toxic": 0.7, "non-toxic": 0.6},
                    "ATCON": {"toxic": 0.7}, "base model (PPLM subset, fp32)": {"toxic": 0.5}, "PPLM": {"toxic": 0.6}},
                   prob=0.0)
    lower, _, dapt, _, failsafe, _ = rtp_detox.claims(long3, pd.DataFrame({"method": [], "ratio": []}), 0, 3, 4, 24)
    assert lower["verdict"] == "fails"  # WORD FILTER and PPLM raise toxicity
    assert dapt["our_value"] == "toxic: 0.90 vs 0.70; non-toxic: 0.30 vs 0.60" and dapt["verdict"] == "fails"
    assert failsafe["verdict"] == "fails"  # no method yields toxicity >= 0.5 on any toxic prompt


def test_table3_wide_pivots_the_long_form_in_the_papers_column_order():
    long3 = _long3({"base model": {"unprompted": 0.4, "toxic": 0.8, "non-toxic": 0.5}})
    wide = rtp_detox.table3_wide(long3)
    assert list(wide.columns) == ["method"] + [f"{a}_{c}" for a in ("exp_max_toxicity", "toxicity_probability")
                                               for c in ("toxic", "non-toxic", "unprompted")]
    assert wide.iloc[0]["exp_max_toxicity_unprompted"] == 0.4


def test_curve_sizes_and_expected_max_at():
    assert rtp.curve_sizes(10, points=3) == [1, 3, 10]  # geomspace(1, 10, 3) = 1, 3.16, 10
    assert rtp.curve_sizes(1000, points=2) == [1, 10, 100, 1000]
    at = rtp.expected_max_at(_curves({"a": {1: 0.1, 100: 0.6, 7: 0.3}}))
    assert at["n"].tolist() == [1, 100] and at["a"].tolist() == [0.1, 0.6]
    assert at["GPT-2 (paper)"].isna().tolist() == [True, False]
