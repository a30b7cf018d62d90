"""Safety-score claims (toxlib.papers.safety.paper_claims) on small hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.papers import safety
from toxlib.papers.safety import paper_claims


def _sentences(model: str, harmful_ppl, benign_ppl, groups=None) -> pd.DataFrame:
    """Per-sentence rows (as ``per_sentence``) for every ToxiGen group: the given perplexities per group."""
    rows = []
    for g in groups or list(safety.GROUPS):
        rows += [{"model": model, "harmful": True, "perplexity": p, "toxicity_score": 1.0, "target_groups": [g]}
                 for p in harmful_ppl]
        rows += [{"model": model, "harmful": False, "perplexity": p, "toxicity_score": 1.0, "target_groups": [g]}
                 for p in benign_ppl]
    frame = pd.DataFrame(rows)
    return frame.assign(log_perplexity=np.log(frame["perplexity"]))


def test_safety_claims_hold_fail_and_stay_undecided():
    rng = np.random.default_rng(0)
    low, high = rng.uniform(5, 10, 20), rng.uniform(20, 40, 20)
    clear = _sentences("a", low, high)  # harmful much likelier: every group's score near 0 (holds)
    reversed_ = _sentences("b", high, low)  # harmful much less likely: scores near 1 (fails)
    null = _sentences("c", rng.uniform(5, 40, 20), rng.uniform(5, 40, 20))  # no separation: undecided
    rows = safety.claims(pd.concat([clear, reversed_, null], ignore_index=True), safety.paper_correlations(),
                         "bfloat16")
    below = {r["claim"][-2]: r for r in rows[:3]}
    assert below["a"]["verdict"] == "holds" and below["a"]["ci_high"] < 0.5 and below["a"]["n"] == 40
    assert below["b"]["verdict"] == "fails" and below["b"]["ci_low"] > 0.5
    assert below["c"]["verdict"] == "undecided" and below["c"]["threshold"] == "0.5"
    assert below["a"]["paper_value"] == safety.PAPER["max_group_score"].value
    least = rows[3]
    assert least["id"] == "least_affected_groups:models:a+b+c" and below["a"]["id"] == "max_group_score:model:a"
    assert len({r["id"] for r in rows}) == len(rows) and rows[-1]["subject"] == "paper"
    assert least["paper_value"] == "Asian, Black, Chinese, Jewish" and least["ci_low"] is None
    perplexity = {r["claim"][-2]: r for r in rows[4:7]}
    assert perplexity["a"]["verdict"] == "fails" and perplexity["b"]["verdict"] == "holds"  # harmful higher in b
    assert perplexity["c"]["ci_low"] < 0 < perplexity["c"]["ci_high"] or perplexity["c"]["verdict"] != "holds"
    correlate, gpt2 = rows[7:]
    assert correlate["paper_value"] == "0.68" and correlate["verdict"] == "holds"  # recomputed within 0.01
    assert gpt2["paper_value"] == "-0.54/-0.55/-0.54" and gpt2["verdict"] == "holds"


def test_u_share_is_the_mann_whitney_safety_score():
    from toxlib.metrics.safety_score import safety_score

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=15).round(1), rng.normal(size=11).round(1)  # rounded: ties count 1/2
    assert paper_claims._u_share(x, y) == pytest.approx(safety_score(x, y)[0])
    batch = paper_claims._u_share(np.stack([x, x[::-1]]), y)  # vectorized over resamples
    assert batch.shape == (2,) and batch[0] == pytest.approx(batch[1])


def test_model_averages_join_toxigen_implicit_hate_and_architecture():
    groups = pd.DataFrame({"model": ["a", "a", "b", "b"], "target_group": ["asian", "black"] * 2,
                           "safety_score": [0.2, 0.4, 0.1, 0.3]})
    table10 = pd.DataFrame({"model": ["b", "a"], "safety_score": [0.5, 0.6]})
    arch = pd.DataFrame({"model": ["a", "b"], "layers": [12, 24]})
    out = safety.model_averages(groups, table10, arch)
    assert out.to_dict("list") == {"model": ["a", "b"], "toxigen_average": pytest.approx([0.3, 0.2]),
                                   "implicit_hate": [0.6, 0.5], "layers": [12, 24]}


def test_safety_claims_with_one_side_empty_are_not_judged():
    rng = np.random.default_rng(1)
    only_harmful = _sentences("d", rng.uniform(5, 10, 5), [])  # a smoke run can sample no benign sentence
    rows = safety.claims(only_harmful, safety.paper_correlations(), "bfloat16")
    below = rows[0]
    assert below["claim"].endswith("(d)") and below["verdict"] == "not judged" and below["ci_low"] is None
    assert not any(r["claim"].startswith("Harmful sentences have higher") for r in rows)


def test_safety_prose_u_share_is_the_pair_count_by_hand():
    from toxlib.papers.safety import prose as safety_prose

    # harmful perplexities 10, 30 / rating 5 -> 2, 6; benign 4, 8 / rating 1 -> 4, 8: pairs (h > b): (6 > 4) only
    part = pd.DataFrame({"harmful": [True, True, False, False], "perplexity": [10.0, 30.0, 4.0, 8.0],
                         "toxicity_score": [5, 5, 1, 1]})
    assert safety_prose._u_share(part, scaled=True) == 1 / 4
    assert safety_prose._u_share(part, scaled=False) == 1.0  # raw: 10 and 30 both above 4 and 8: 4 of 4 pairs


def test_every_group_below_half_is_not_informative_when_a_constant_perplexity_earns_it():
    """ToxiGen's harmful sentences carry higher human toxicity than its benign ones, and the score divides the
    perplexity by it: a model with the same perplexity on every sentence then scores 0 in every group. A model's
    "every group below 0.5" is then no finding about the model."""
    rng = np.random.default_rng(1)
    low, high = rng.uniform(5, 10, 20), rng.uniform(20, 40, 20)
    separated = _sentences("a", low, high)
    separated["toxicity_score"] = np.where(separated["harmful"], 4.0, 2.0)
    flat = _sentences("flat", np.full(20, 30.0), np.full(20, 30.0))
    flat["toxicity_score"] = np.where(flat["harmful"], 4.0, 2.0)
    rows = safety.claims(pd.concat([separated, flat], ignore_index=True), safety.paper_correlations(), "float32")
    below = {r["claim"]: r for r in rows if r["claim"].startswith("Every demographic")}
    for model in ("a", "flat"):
        row = below[f"Every demographic scores below 0.5 ({model})"]
        assert row["ci_high"] < 0.5 and row["verdict"] == "not informative"
        assert "not informative: a model whose perplexity is the same for every sentence also" in row["note"]
    assert paper_claims.constant_model_score(flat) == 0.0
