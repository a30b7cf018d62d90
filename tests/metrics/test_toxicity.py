"""RealToxicityPrompts' metrics against hand computations and an exact order-statistics formula."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from toxlib.metrics.toxicity import (
    bootstrap_expected_max,
    expected_max_interval,
    expected_max_of_pool,
    expected_max_toxicity,
    scored_maxima,
    toxicity_probability,
)
from toxlib.metrics.uncertainty import unit_interval

FRAME = pd.DataFrame({"prompt_id": [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
                      "toxicity": [0.1, 0.7, 0.2, 0.3, 0.4, np.nan, 0.5, 0.05, 0.1, np.nan, np.nan, np.nan]})


def test_expected_max_and_probability_by_hand():
    # k = 3, so a prompt needs all 3 scores (ceil(0.8 x 3)): maxima 0.7 and 0.5; prompt 1 (2 of 3 scored) and
    # prompt 3 (none) are left out and counted, as are the 4 failed scores
    out = expected_max_toxicity(FRAME)
    assert out["mean"] == pytest.approx((0.7 + 0.5) / 2)
    assert out["std"] == pytest.approx(np.std([0.7, 0.5], ddof=1))
    assert (out["n_prompts"], out["n_unscored_prompts"], out["k"], out["n_unscored"]) == (2, 2, 3, 4)
    assert (out["k_scored_min"], out["k_scored_mean"]) == (3, 3.0)
    prob = toxicity_probability(FRAME)
    assert prob == {"probability": pytest.approx(2 / 2), "n_prompts": 2, "n_toxic_prompts": 2}  # 0.5 counts


def test_a_partly_scored_prompt_counts_only_above_the_floor():
    """k = 25: 20 scored continuations (the floor, 0.8 x 25) keep a prompt, 19 do not; the realised k is
    reported, not the k asked for."""
    rows = []
    for prompt, scored in ((0, 25), (1, 20), (2, 19)):
        for i in range(25):
            rows.append({"prompt_id": prompt, "toxicity": 0.9 if i == 24 else (0.1 if i < scored else np.nan)})
    frame = pd.DataFrame(rows)
    frame.loc[(frame["prompt_id"] > 0) & (frame.index % 25 == 24), "toxicity"] = np.nan  # their 0.9 failed
    maxima, realised = scored_maxima(frame)
    assert maxima.to_dict() == {0: 0.9, 1: 0.1}
    assert realised == {"k": 25, "k_scored_min": 20, "k_scored_mean": 22.5, "n_unscored": 5 + 6,
                        "n_below_floor": 1}
    assert expected_max_toxicity(frame)["mean"] == pytest.approx(0.5)


def test_exact_expected_max_matches_enumeration_and_the_bootstrap_converges_to_it():
    pool = [0.1, 0.9, 0.3, 0.6]
    for n in (1, 2, 3):
        enumerated = np.mean([max(c) for c in itertools.product(pool, repeat=n)])  # all 4^n equally likely draws
        curve = bootstrap_expected_max(pool, [n], resamples=20000, seed=1)
        assert curve["exact"][0] == pytest.approx(enumerated)
        assert curve["mean"][0] == pytest.approx(enumerated, abs=0.01)
    one = bootstrap_expected_max(pool, [1], resamples=20000, seed=1).iloc[0]
    assert one["exact"] == pytest.approx(np.mean(pool)) and one["lower"] == 0.1 and one["upper"] == 0.9


def test_bootstrap_curve_rises_with_n_is_seeded_and_ignores_nan():
    rng = np.random.default_rng(0)
    pool = np.append(rng.beta(1, 8, 500), np.nan)
    a = bootstrap_expected_max(pool, [1, 10, 100], resamples=300, seed=3)
    b = bootstrap_expected_max(pool, [1, 10, 100], resamples=300, seed=3)
    assert a.equals(b) and a["mean"].is_monotonic_increasing and a["exact"].is_monotonic_increasing
    assert (a["lower"] <= a["mean"]).all() and (a["mean"] <= a["upper"]).all()


@pytest.mark.parametrize("n", [1, 5, 100])
def test_the_expected_max_interval_from_counts_is_the_per_resample_interval(n):
    """The same resamples of the same units as bootstrapping expected_max_of_pool one resample at a time (unsorted
    pools, one no larger than n). Scores as a scorer gives them, with no two equal: where resamples' values tie
    (a pool of rounded scores), a float rounding apart can move a bound to a neighbouring resample's value."""
    rng = np.random.default_rng(n)
    for scores in (rng.beta(1, 4, 300), rng.random(200), rng.random(60)):
        fast = expected_max_interval(scores, n)
        slow = unit_interval(scores, lambda x: expected_max_of_pool(x, n))
        assert fast.value == slow.value and fast.method == slow.method and fast.n == slow.n
        assert fast.low == pytest.approx(slow.low, abs=1e-12) and fast.high == pytest.approx(slow.high, abs=1e-12)
    with pytest.raises(ValueError, match="NaN"):
        expected_max_interval([0.1, float("nan")], n)
