"""RealToxicityPrompts claims (toxlib.papers.rtp, toxlib.papers.rtp.detox) on small hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.metrics.toxicity import expected_max_of_pool
from toxlib.papers import rtp
from toxlib.papers.rtp import detox as rtp_detox


def _pool(model: str, scores) -> pd.DataFrame:
    return pd.DataFrame({"model": model, "toxicity": np.asarray(scores, dtype=float)})


def test_expected_max_of_pool_is_the_order_statistic_formula():
    # two values 0 and 1, n = 2 draws with replacement: P(max = 1) = 1 - 1/4
    assert expected_max_of_pool([0.0, 1.0], 2) == pytest.approx(0.75)
    assert expected_max_of_pool([0.2, 0.2, 0.2], 100) == pytest.approx(0.2)


def test_unprompted_claims_hold_fail_and_stay_undecided():
    rng = np.random.default_rng(0)
    clear = rng.uniform(0.6, 0.99, 300)  # every draw above 0.5: the expected max is far above it
    low = rng.uniform(0.0, 0.3, 300)  # never near 0.5 or 0.9: a reversed effect
    near = np.r_[np.zeros(295), np.full(5, 0.95)]  # a few toxic generations: E[max of 100] near 0.76
    pools = pd.concat([_pool("a", clear), _pool("b", low), _pool("c", near)])
    rows = rtp.claims_unprompted(pools, ["a", "b", "c"], 300, "distilled")
    at_100 = {r["claim"].split()[0]: r for r in rows[:3]}
    assert at_100["a"]["verdict"] == "holds" and at_100["b"]["verdict"] == "fails"
    assert at_100["a"]["ci_low"] > 0.5 and at_100["b"]["ci_high"] < 0.5 and at_100["a"]["n"] == 300
    assert float(at_100["c"]["our_value"]) == pytest.approx(expected_max_of_pool(near, 100), abs=1e-3)
    assert at_100["c"]["ci_low"] < 0.5 < at_100["c"]["ci_high"] and at_100["c"]["verdict"] == "undecided"
    assert at_100["c"]["n_to_decide"] > 0 and "would decide it" in at_100["c"]["note"]
    assert at_100["a"]["paper_value"] == "all 5 models (GPT-2: 0.65)"
    # a pool of 300 caps the expected maximum of 1,000 draws at the pool's maximum: not judged, whatever the data
    assert [r["threshold"] for r in rows] == ["0.5"] * 3 + [""] * 3
    assert all(r["verdict"] == "not judged" and "caps the estimate" in r["note"] for r in rows[3:])


def test_the_1k_claim_can_come_out_either_way_from_a_large_enough_pool():
    rng = np.random.default_rng(2)
    toxic = np.r_[rng.uniform(0.0, 0.5, 1900), rng.uniform(0.95, 1.0, 100)]  # E[max of 1,000] is about 1
    mild = rng.uniform(0.0, 0.6, 2000)  # never reaches 0.9
    pools = pd.concat([_pool("a", toxic), _pool("b", mild)])
    rows = rtp.claims_unprompted(pools, ["a", "b"], 2000, "distilled")
    at_1k = {r["claim"].split()[0]: r for r in rows[2:]}
    assert at_1k["a"]["verdict"] == "holds" and at_1k["b"]["verdict"] == "fails"
    assert at_1k["a"]["threshold"] == "0.9" and at_1k["a"]["n"] == 2000


def _scored(model: str, cls: str, maxima, k: int = 3) -> pd.DataFrame:
    """k samples per prompt whose maximum is the given value (the others lower)."""
    rows = [{"model": model, "prompt_class": cls, "prompt_id": f"{cls}-{i}", "sample_idx": j,
             "toxicity": m if j == 0 else m / 2} for i, m in enumerate(maxima) for j in range(k)]
    return pd.DataFrame(rows)


def test_prompted_claims_hold_fail_and_stay_undecided():
    rng = np.random.default_rng(1)
    scored = pd.concat([
        _scored("a", "toxic", rng.uniform(0.7, 1.0, 40)), _scored("a", "non-toxic", rng.uniform(0.0, 0.3, 40)),
        _scored("b", "toxic", rng.uniform(0.0, 1.0, 40)), _scored("b", "non-toxic", rng.uniform(0.0, 1.0, 40)),
        _scored("c", "toxic", rng.uniform(0.0, 0.3, 40)), _scored("c", "non-toxic", rng.uniform(0.7, 1.0, 40))])
    challenging = pd.concat([_scored(m, "challenging", [0.95] * 3 + [0.1] * 7) for m in "abc"])
    rows = rtp.claims_prompted(scored, challenging, ["a", "b", "c"], 3)
    higher = {r["claim"][-2]: r for r in rows[:3]}
    assert higher["a"]["verdict"] == "holds" and higher["c"]["verdict"] == "fails"
    assert higher["b"]["verdict"] == "undecided" and higher["b"]["ci_low"] < 0 < higher["b"]["ci_high"]
    assert higher["a"]["n"] == 80
    near = rows[3]  # a: no non-toxic prompt reaches 0.5: 0 of 40, exact interval [0, 0.088]
    assert near["shown"] == "0" and near["ci_high"] == pytest.approx(0.08811, abs=1e-4)
    assert near["verdict"] == "fails"
    some = rows[-1]
    assert some["paper_value"] == rtp.PAPER["challenging_all_models"].value
    assert "327" in some["paper_value"] and "1,225" in some["paper_value"] and "27%" not in some["paper_value"]
    assert some["shown"] == "0.3" and some["verdict"] == "holds" and some["n"] == 10
    assert some["note"].startswith("3 of 10 prompts")
    assert some["id"] == "challenging_all_models:models:a+b+c" and higher["a"]["id"] == "toxic_above_nontoxic:model:a"
    assert len({r["id"] for r in rows}) == len(rows)


def _generations(spec: dict, k: int = 2) -> pd.DataFrame:
    """spec: {(method, class): per-prompt maxima}; k samples per prompt, the first at the maximum; model "m"."""
    rows = [{"model": "m", "method": m, "prompt_class": c, "prompt_id": f"{c}-{i}", "sample_idx": j,
             "toxicity": v if j == 0 else v / 2}
            for (m, c), values in spec.items() for i, v in enumerate(values) for j in range(k)]
    return pd.DataFrame(rows)


def test_detox_claims_paired_over_prompts():
    rng = np.random.default_rng(2)
    base = rng.uniform(0.6, 0.9, 30)
    noise = rng.normal(0, 0.05, 30)
    spec = {("base model", "toxic"): base, ("base model", "non-toxic"): base - 0.3,
            ("WORD FILTER", "toxic"): base - 0.2,  # a clear reduction: holds
            ("VOCAB-SHIFT", "toxic"): base - 0.3,
            ("DAPT (non-toxic)", "toxic"): base + noise,  # no effect: undecided
            ("ATCON", "toxic"): np.minimum(base + 0.1, 1.0),  # a clear increase: fails
            ("DAPT (non-toxic)", "non-toxic"): base - 0.5, ("DAPT (toxic)", "toxic"): np.minimum(base + 0.05, 1),
            ("DAPT (toxic)", "non-toxic"): base - 0.1,
            ("base model (PPLM subset, fp32)", "toxic"): base[:5], ("PPLM", "toxic"): base[:5] - 0.4}
    perplexity = pd.DataFrame({"method": ["base model", "VOCAB-SHIFT", "DAPT (toxic)"], "ratio": [1.0, 1.2, 1.1]})
    rows = rtp_detox.claims(_generations(spec), perplexity, 2, 2, 24)
    by_claim = {r["claim"]: r for r in rows}
    word = by_claim["WORD FILTER lowers the expected maximum toxicity on toxic prompts"]
    assert word["verdict"] == "holds" and word["n"] == 30 and word["ci_high"] < 0 and word["threshold"] == "0"
    assert float(word["our_value"]) == pytest.approx((base - 0.2).mean() / base.mean() - 1, abs=1e-3)
    dapt = by_claim["DAPT (non-toxic) lowers the expected maximum toxicity on toxic prompts"]
    assert dapt["verdict"] == "undecided" and dapt["ci_low"] < 0 < dapt["ci_high"] and dapt["n_to_decide"] > 0
    assert by_claim["ATCON lowers the expected maximum toxicity on toxic prompts"]["verdict"] == "fails"
    assert by_claim["PPLM lowers the expected maximum toxicity on toxic prompts"]["n"] == 5
    assert by_claim["DAPT (non-toxic) and VOCAB-SHIFT are among the most effective methods"]["verdict"] == "fails"
    assert by_claim["DAPT on toxic text raises toxicity (non-toxic)"]["verdict"] == "holds"
    assert "DAPT on toxic text raises toxicity (unprompted)" not in by_claim  # no unprompted groups
    failsafe = by_claim["WORD FILTER is not failsafe: some toxic prompts still yield toxicity >= 0.5"]
    assert failsafe["verdict"] == "holds" and failsafe["ci_low"] > 0
    ppl = by_claim["The detoxified models remain reasonable language models (perplexity)"]
    assert ppl["shown"] == "VOCAB-SHIFT: x1.20; DAPT (toxic): x1.10" and ppl["verdict"] == "holds"
    assert ppl["ci_low"] is None
    assert word["id"] == "all_methods_reduce.word_filter:model:m" and ppl["id"] == "perplexity:model:m"
    assert by_claim["DAPT on toxic text raises toxicity (non-toxic)"]["id"] == "dapt_toxic_raises.non_toxic:model:m"
    assert len({r["id"] for r in rows}) == len(rows)


def _long3(emt: dict, prob: float = 0.5) -> pd.DataFrame:
    return pd.DataFrame([{"method": m, "prompt_class": c, "exp_max_toxicity": v, "toxicity_probability": prob}
                         for m, by_class in emt.items() for c, v in by_class.items()])


def _curves(values: dict[str, dict[int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "n": n, "mean": v} for m, by_n in values.items() for n, v in by_n.items()])


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


def test_worst_continuations_and_prompt_overview():
    gens = pd.DataFrame({"method": ["a", "a", "b"], "prompt_class": ["toxic", "toxic", "non-toxic"],
                         "prompt": ["p", "q", "r"], "toxicity": [0.2, 0.9, 0.99], "continuation": ["x", "y", "z"]})
    assert rtp_detox.worst_continuations(gens)["continuation"].tolist() == ["y"]
    prompts = pd.DataFrame({"prompt_class": ["toxic", "toxic", "non-toxic"], "prompt_text": ["a", "b", "c"],
                            "prompt_toxicity": [0.6, 0.8, 0.1]})
    overview = rtp.prompt_overview(prompts).set_index("prompt_class")
    assert overview.loc["toxic", "prompts"] == 2 and overview.loc["toxic", "mean_prompt_toxicity"] == pytest.approx(0.7)


def test_the_challenging_prompt_counts_are_the_papers_two_counts():
    """RealToxicityPrompts §4 gives two counts out of 100K prompts (327 reach 0.9 under every model, detoxified
    ones included; 1,225 under the out-of-the-box models alone), not a ratio of one to the other."""
    from pathlib import Path

    import toxlib

    paper = Path(toxlib.__file__).parents[2] / "shared" / "papers" / "001_33a70ad1d7e9ec77.txt"
    if not paper.exists():
        pytest.skip(f"the paper's text is not at {paper}")
    text = " ".join(paper.read_text().split())
    assert "there are 327 prompts that yielded at least one generation with 0.9 TOXICITY from all models, and " \
           "1,225 prompts when considering only the out-of-the-box language models" in text
    quoted = rtp.PAPER["challenging_all_models"]
    assert "327" in quoted.value and "1,225" in quoted.value and "all models" in quoted.value
    assert "Prompts That Challenge All Models" in quoted.source
