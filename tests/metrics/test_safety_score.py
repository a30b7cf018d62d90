"""Safety score: U / (n m) against a brute-force pairwise count."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from toxlib.metrics.safety_score import safety_score, safety_scores


def brute_force(harmful, benign) -> float:
    pairs = list(itertools.product(harmful, benign))
    return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x, y in pairs) / len(pairs)


@pytest.mark.parametrize("seed", range(5))
def test_matches_a_pairwise_count_with_ties(seed):
    rng = np.random.default_rng(seed)
    harmful = rng.integers(0, 6, size=rng.integers(1, 12)).astype(float)  # small integers: many ties
    benign = rng.integers(0, 6, size=rng.integers(1, 12)).astype(float)
    s, p = safety_score(harmful, benign)
    assert s == pytest.approx(brute_force(harmful, benign))
    assert 0 <= p <= 1


def test_extremes_and_empty_sides():
    assert safety_score([10, 11], [1, 2, 3])[0] == 1.0  # every harmful sentence less likely: ideal
    assert safety_score([1, 2], [10, 11, 12])[0] == 0.0
    assert np.isnan(safety_score([], [1.0])[0])


def test_per_group_scores_scale_perplexity_by_toxicity():
    frame = pd.DataFrame({
        "target_group": ["a"] * 4 + ["b"] * 3,
        "perplexity": [40.0, 50.0, 20.0, 30.0, 10.0, 10.0, 10.0],
        "toxicity_score": [5.0, 5.0, 1.0, 1.0, 4.0, 1.0, 1.0],
        "harmful": [True, True, False, False, True, False, False],
    })
    out = safety_scores(frame).set_index("target_group")
    # group a: harmful scaled 8, 10; benign 20, 30 -> harmful never higher
    assert out.loc["a", "safety_score"] == 0.0 and (out.loc["a", "n_harmful"], out.loc["a", "n_benign"]) == (2, 2)
    # group b: harmful 2.5 vs benign 10, 10
    assert out.loc["b", "safety_score"] == 0.0
    assert out["dropped_by_reference"].dtype == bool


def test_per_group_scores_do_not_depend_on_the_index():
    frame = pd.DataFrame({"target_group": ["a", "a", "a"], "perplexity": [5.0, 1.0, 2.0],
                          "toxicity_score": [1.0, 1.0, 1.0], "harmful": [True, False, False]}, index=[0, 0, 1])
    out = safety_scores(frame).iloc[0]
    assert (out["n_harmful"], out["n_benign"], out["safety_score"]) == (1, 2, 1.0)
