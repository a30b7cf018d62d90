"""Intervals, verdicts and sample sizes (toxlib.metrics.uncertainty) against hand-built cases and textbook values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from toxlib.metrics import uncertainty as u


def _paired(shift: float, n: int = 300, seed: int = 1):
    """Per-prompt values of a base system and a method that moves each prompt by ``shift`` plus noise."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.9, n)
    return base + shift + rng.normal(0, 0.1, n), base


@pytest.mark.parametrize("shift,expected", [(-0.1, "holds"), (0.0, "undecided"), (0.1, "fails")])
def test_claim_that_a_method_lowers_toxicity(shift, expected):
    method, base = _paired(shift)
    diff = u.paired_interval(method, base)
    assert diff.verdict(0.0, "below") == expected
    rel = u.paired_interval(method, base, relative=True)
    assert rel.verdict(0.0, "below") == expected
    assert math.isclose(rel.value, method.mean() / base.mean() - 1)


def test_null_effect_interval_contains_zero_and_says_what_would_decide():
    method, base = _paired(0.0)
    diff = u.paired_interval(method, base)
    assert diff.low < 0 < diff.high
    sd = float(np.std(method - base, ddof=1))
    assert u.n_to_decide(diff.value, sd) > len(base)  # the observed effect is too small for 300 prompts


def test_bootstrap_interval_of_a_mean_agrees_with_the_t_interval():
    x = np.random.default_rng(3).normal(1.0, 2.0, 400)
    boot = u.unit_interval(x)
    t_low, t_high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert boot.value == pytest.approx(x.mean())
    assert boot.low == pytest.approx(t_low, abs=0.05) and boot.high == pytest.approx(t_high, abs=0.05)
    assert boot.n == 400 and "BCa" in boot.method


def test_units_are_resampled_whole_and_deterministically():
    rng = np.random.default_rng(0)
    rows = rng.uniform(size=(120, 5))  # 120 prompts x 5 continuations
    by_rows = u.unit_interval(rows, lambda r: float(r.max(axis=1).mean()))
    by_unit_values = u.unit_interval(rows.max(axis=1))
    assert (by_rows.low, by_rows.high) == (by_unit_values.low, by_unit_values.high)
    assert by_rows == u.unit_interval(rows, lambda r: float(r.max(axis=1).mean()))  # same seed, same interval
    # resampling continuations instead of prompts would ignore that a prompt's continuations move together
    clustered = np.repeat(rng.uniform(size=(60, 1)), 10, axis=1)  # each prompt's continuations identical
    per_prompt = u.unit_interval(clustered, lambda r: float(r.mean()))
    per_text = u.unit_interval(clustered.ravel())
    assert (per_prompt.high - per_prompt.low) > 2 * (per_text.high - per_text.low)


def test_degenerate_samples_give_zero_width_intervals():
    assert u.unit_interval([0.5, 0.5, 0.5]) == u.Interval(0.5, 0.5, 0.5, 3, "degenerate (all units equal)")
    same = u.paired_interval([1.0, 1.0], [0.0, 0.0])
    assert (same.low, same.high, same.value) == (1.0, 1.0, 1.0)
    one = u.unit_interval([0.7])
    assert math.isnan(one.low) and one.verdict(0.5) == "not judged"


def test_failed_scores_are_refused_not_resampled():
    with pytest.raises(ValueError, match="1 of 3 units hold NaN"):
        u.unit_interval([0.1, float("nan"), 0.3])
    with pytest.raises(ValueError, match="aligned"):
        u.paired_interval([1.0, 2.0], [1.0])


def test_clopper_pearson_matches_textbook_values():
    # 5 of 10: [0.187, 0.813]; 0 of 10: upper bound 1 - 0.025 ** (1/10) = 0.3085 (the "rule of three" case)
    half = u.proportion_interval(5, 10)
    assert (round(half.low, 3), round(half.high, 3)) == (0.187, 0.813)
    zero = u.proportion_interval(0, 10)
    assert zero.low == 0 and zero.high == pytest.approx(1 - 0.025 ** 0.1, abs=1e-9)
    # and against the beta quantiles that define it
    k, n = 17, 60
    ci = u.proportion_interval(k, n)
    assert ci.low == pytest.approx(stats.beta.ppf(0.025, k, n - k + 1))
    assert ci.high == pytest.approx(stats.beta.ppf(0.975, k + 1, n - k))


def test_difference_of_proportions_matches_newcombe_worked_example():
    ci = u.proportion_difference_interval(56, 70, 48, 80)  # Newcombe 1998, Table II, example (a), method 10
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.0524, 0.3339) and ci.value == pytest.approx(0.2)
    assert ci.verdict(0.0, "above") == "holds"


def test_power_calculation_matches_the_textbook_example():
    # effect 0.5 sd, alpha 0.05 two-sided, power 0.8: (1.96 + 0.8416)^2 / 0.25 = 31.4 -> 32; two samples 62.8 -> 63
    assert u.n_to_decide(0.5, 1.0) == 32 and u.n_to_decide(-0.5, 1.0) == 32
    assert u.n_to_decide(0.5, 1.0, two_sample=True) == 63
    assert u.n_to_decide(1.0, 4.0) == 126  # scale-free: 4 sd per unit over an effect of 1 is d = 0.25 -> 125.6
    assert u.n_to_decide(0.0, 1.0) is None
    # from an interval: a mean with sd 1 over 100 units has se 0.1; an effect of 0.05 needs about 3,140 units
    assert u.n_to_decide_from_interval(0.55, 0.55 - 0.196, 0.55 + 0.196, 100, 0.5) == pytest.approx(3140, rel=0.01)


@pytest.mark.parametrize("low,high,threshold,direction,expected", [
    (0.6, 0.7, 0.5, "above", "holds"), (0.4, 0.6, 0.5, "above", "undecided"), (0.3, 0.4, 0.5, "above", "fails"),
    (0.5, 0.7, 0.5, "above", "undecided"),  # touching the threshold does not separate it
    (-0.2, -0.1, 0.0, "below", "holds"), (-0.1, 0.1, 0.0, "below", "undecided"), (0.1, 0.2, 0.0, "below", "fails"),
    (0.49, 0.51, (0.48, 0.52), "within", "holds"), (0.47, 0.51, (0.48, 0.52), "within", "undecided"),
    (0.60, 0.70, (0.48, 0.52), "within", "fails"),
    (0.8, 0.8, 0.5, "above", "holds"),  # an exact fact: a zero-width interval
    (None, None, 0.5, "above", "not judged"), (float("nan"), 0.3, 0.5, "above", "not judged"),
    (0.1, 0.2, None, "above", "not judged"),
])
def test_verdict_cases(low, high, threshold, direction, expected):
    assert u.verdict(low, high, threshold, direction) == expected


def test_verdict_refuses_bad_arguments():
    with pytest.raises(ValueError, match="direction must be one of"):
        u.verdict(0.1, 0.2, 0.5, "greater")
    with pytest.raises(ValueError, match="needs threshold=\\(low, high\\)"):
        u.verdict(0.1, 0.2, 0.5, "within")
    with pytest.raises(ValueError, match="low > high"):
        u.verdict(0.3, 0.2, 0.5)


def test_verdict_from_a_paired_t_test():
    method, base = _paired(-0.1, n=50)
    test = stats.ttest_rel(method, base)
    assert u.test_verdict(float(np.mean(method - base)), test.pvalue, "below") == "holds"
    assert u.test_verdict(float(np.mean(method - base)), test.pvalue, "above") == "fails"
    null, base = _paired(0.0, n=50)
    assert u.test_verdict(0.003, stats.ttest_rel(null, base).pvalue, "below") == "undecided"
    assert u.test_verdict(float("nan"), 0.01) == "not judged"


def test_difference_interval_two_independent_samples():
    rng = np.random.default_rng(5)
    clear = u.difference_interval(rng.normal(1, 1, 60), rng.normal(0, 1, 80))
    assert clear.n == 140 and clear.low > 0 and clear.verdict(0.0) == "holds"
    null = u.difference_interval(rng.normal(0, 1, 60), rng.normal(0, 1, 80))
    assert null.low < 0 < null.high and null.verdict(0.0) == "undecided"
    reversed_ = u.difference_interval(rng.normal(-1, 1, 60), rng.normal(0, 1, 80))
    assert reversed_.verdict(0.0) == "fails"
    # the standard error of a difference of means: sqrt(s1^2/n1 + s2^2/n2), the interval about 2 x 1.96 of it
    a, b = rng.normal(0, 1, 400), rng.normal(0, 2, 400)
    ci = u.difference_interval(a, b)
    se = np.sqrt(a.var(ddof=1) / 400 + b.var(ddof=1) / 400)
    assert ci.high - ci.low == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_correlation_and_auc_intervals_against_their_formulas():
    r = u.correlation_interval(0.9, 2000)  # tanh(atanh(0.9) -+ 1.96 / sqrt(1997))
    assert (r.low, r.high) == pytest.approx((0.89133, 0.90801), abs=1e-4)
    x = np.random.default_rng(0).normal(size=50)
    y = x + np.random.default_rng(1).normal(size=50)
    ref = stats.pearsonr(x, y).confidence_interval(0.95)
    got = u.correlation_interval(stats.pearsonr(x, y).statistic, 50)
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high), abs=1e-9)
    # Hanley & McNeil eq. 2 by hand, A = 0.9, 50 and 50 cases: q1 = 0.9 / 1.1 = 0.81818, q2 = 1.62 / 1.9 = 0.85263,
    # se^2 = (0.09 + 49 x 0.00818 + 49 x 0.04263) / 2500 = 0.0010319, se = 0.03212
    auc = u.auc_interval(0.9, 50, 50)
    assert (auc.high - auc.low) / (2 * 1.959964) == pytest.approx(0.03212, abs=5e-5)
    assert u.auc_interval(0.99, 50, 50).high == 1.0  # clipped to [0, 1]


def test_n_to_decide_proportion_is_exact_near_the_boundary():
    # all successes: the Clopper-Pearson lower bound is 0.025 ** (1 / n); it passes 0.8 first at n = 17
    assert u.n_to_decide_proportion(1.0, 0.8) == 17
    assert u.proportion_interval(17, 17).low > 0.8 > u.proportion_interval(16, 16).low
    assert u.n_to_decide_proportion(0.5, 0.5) is None
    n = u.n_to_decide_proportion(0.3, 0.4, "below")
    assert u.proportion_interval(round(0.3 * n), n).high < 0.4
