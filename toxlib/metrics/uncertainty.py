"""Uncertainty of a claim: 95% intervals from resampling the unit that was sampled, a three-way verdict, and the
sample size that would decide an undecided claim.

Intervals come from ``scipy.stats.bootstrap`` (no bootstrap of our own) or are exact:

- ``unit_interval``: a statistic over units (prompts, comments, sentences). Give one value per unit (a prompt's
  maximum toxicity over its k continuations, a comment's 0/1 correctness), or a 2-D array with one row per unit
  and a statistic of the rows: the units are resampled, so a prompt's k continuations stay together.
- ``paired_interval``: the difference ``mean(a) - mean(b)`` or the relative change ``mean(a) / mean(b) - 1`` of two
  systems measured on the same units (``paired=True``: a resample takes a unit's two values together).
- ``difference_interval``: ``mean(a) - mean(b)`` for two independent samples of units (toxic vs non-toxic prompts,
  harmful vs benign sentences): each sample is resampled on its own; ``two_sample_interval`` for any statistic of
  two such samples (a safety score's U / (n m)).
- ``correlation_interval`` (Fisher z) and ``auc_interval`` (Hanley-McNeil): analytic intervals for a recorded
  Pearson r or ROC AUC when only the statistic and its counts are at hand.
- ``proportion_interval``: Clopper-Pearson for k of n (``scipy.stats.binomtest(...).proportion_ci``).
- ``proportion_difference_interval``: Newcombe's hybrid score interval for p1 - p2 of two independent samples
  (Newcombe 1998, method 10), from the two Wilson intervals ``binomtest`` gives.

Bootstrap settings (module constants): BCa intervals (bias-corrected and accelerated, second-order accurate; the
percentile method is used instead when BCa cannot be computed, which scipy signals with NaN), 9,999 resamples, a
fixed seed (``BOOTSTRAP_SEED``) so the same data always give the same interval, resamples processed in batches of about
``BATCH_VALUES`` numbers so 10,000 units do not need gigabytes. A sample whose units all have the same value has a
zero-width interval at that value (scipy would warn and return NaN).

``verdict`` turns an interval into ``holds`` / ``fails`` / ``undecided`` against the value separating the two;
``n_to_decide`` is the normal-approximation sample size that would resolve an observed effect. ``VERDICTS`` lists
every verdict a claim can carry, including two no interval gives: ``not informative`` (a trivial baseline, such as a
constant answer, would earn the claim too) and ``not judged``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

from toxlib.common.memo import kept
from toxlib.metrics.interval_key import interval_key

CONFIDENCE = 0.95
N_RESAMPLES = 9999
METHOD = "BCa"
BOOTSTRAP_SEED = 0
BATCH_VALUES = 2_000_000  # numbers held at once per resampling batch (16 MB of float64)

#: every verdict a claim can carry, in the order counts and tables list them. holds / fails / undecided: the interval
#: against the claim's threshold (``verdict``). not informative: the claim would hold, but a trivial baseline (a
#: classifier answering "toxic" to every item, "not toxic" to every item, or at random at the observed prevalence,
#: scored by the same code on the same items) earns it too and the system does not beat that baseline, so the
#: comparison says nothing about the system (set by the claim's own rules, e.g. ``toxlib.metrics.baselines``; never
#: by ``verdict``). not judged: no interval, value or threshold to judge by.
VERDICTS = ("holds", "fails", "undecided", "not informative", "not judged")
DIRECTIONS = ("above", "below", "within")


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval. n: units resampled (or trials); method: how it was made."""

    value: float
    low: float
    high: float
    n: int
    method: str

    def verdict(self, threshold, direction: str = "above") -> str:
        """``verdict(self.low, self.high, threshold, direction)``."""
        return verdict(self.low, self.high, threshold, direction)


def _finite_units(values: np.ndarray, what: str) -> None:
    if len(values) == 0:
        raise ValueError(f"{what}: no units to resample; give at least one value per unit")
    if not np.isfinite(values).all():
        bad = int((~np.isfinite(values)).reshape(len(values), -1).any(axis=1).sum())
        raise ValueError(f"{what}: {bad} of {len(values)} units hold NaN or inf (a failed score is NaN); "
                         "drop those units first and report how many were dropped")


def _two_samples(a, b, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as 1-D float arrays of finite values, one per unit; ValueError naming ``what`` otherwise."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"{what}: a and b must be 1-D (one value per unit), got shapes {a.shape} and {b.shape}")
    _finite_units(a, f"{what} (a)")
    _finite_units(b, f"{what} (b)")
    return a, b


def _batch(n_units: int) -> int:
    return max(1, BATCH_VALUES // max(1, n_units))


def _bootstrap(data: tuple, statistic, paired: bool, vectorized: bool) -> tuple[float, float, str]:
    """scipy.stats.bootstrap with the module's settings; BCa, or percentile where BCa gives NaN. The bounds are kept
    between runs under a key of data, statistic and settings (``interval_key``, ``toxlib.common.memo``); a statistic
    without a key is bootstrapped each time."""
    settings = {"paired": paired, "vectorized": vectorized, "n_resamples": N_RESAMPLES, "confidence": CONFIDENCE,
                "method": METHOD, "seed": BOOTSTRAP_SEED, "batch": _batch(len(data[0]))}
    key = interval_key(data, statistic, settings)
    if key is None:
        return _scipy_bootstrap(data, statistic, paired, vectorized)
    low, high, method = kept(f"intervals/{key}.json", lambda: list(_scipy_bootstrap(data, statistic, paired,
                                                                                    vectorized)))
    return float(low), float(high), str(method)


def _scipy_bootstrap(data: tuple, statistic, paired: bool, vectorized: bool) -> tuple[float, float, str]:
    for method in (METHOD, "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            # BCa's acceleration divides by the jackknife spread; 0 there gives NaN bounds, handled below
            warnings.simplefilter("ignore", RuntimeWarning)
            res = stats.bootstrap(data, statistic, paired=paired, vectorized=vectorized, n_resamples=N_RESAMPLES,
                                  confidence_level=CONFIDENCE, method=method, batch=_batch(len(data[0])),
                                  rng=np.random.default_rng(BOOTSTRAP_SEED))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high, method
    return float("nan"), float("nan"), "percentile"


def unit_interval(data, statistic: Callable | None = None, batched: bool = False) -> Interval:
    """95% interval of a statistic over units, by resampling units (``scipy.stats.bootstrap``, BCa).

    data: 1-D, one value per unit (statistic default: the mean); or 2-D (n_units, k), one row per unit (a prompt's
    k continuations), with ``statistic(rows) -> float`` receiving an (m, k) array of resampled rows (rows are
    resampled whole, through their indices). With ``batched``, ``statistic`` takes a stack of resamples instead, an
    array (..., m) (or (..., m, k)), and returns one value per resample (shape (...)): one call per batch of
    resamples instead of one per resample, for a statistic numpy can evaluate over a stack (the point value is
    ``statistic(data)``). Returns Interval(value, low, high, n_units, method); all units equal gives a zero-width
    interval; a single unit gives NaN bounds (nothing to resample). NaN values raise ValueError.
    """
    values = np.asarray(data, dtype=float)
    if values.ndim not in (1, 2):
        raise ValueError(f"unit_interval: data must be 1-D (one value per unit) or 2-D (one row per unit), "
                         f"got shape {values.shape}")
    _finite_units(values, "unit_interval")
    n = len(values)
    if values.ndim == 1 and statistic is None:
        value = float(values.mean())
        stat, sample, vectorized = (lambda x, axis=-1: np.mean(x, axis=axis)), values, True
    else:
        fn = statistic if statistic is not None else (lambda rows: float(np.mean(rows)))
        value = float(fn(values))

        def stat(idx, axis=-1):  # idx: (..., m) unit indices; one statistic per resample
            idx = np.asarray(idx).astype(np.intp)
            if batched:
                return np.asarray(fn(values[idx]), dtype=float)
            flat = idx.reshape(-1, idx.shape[-1])
            return np.array([fn(values[row]) for row in flat]).reshape(idx.shape[:-1])

        sample, vectorized = np.arange(n), True
    if n < 2:
        return Interval(value, float("nan"), float("nan"), n, "none (one unit)")
    if (values == values[0]).all():
        return Interval(value, value, value, n, "degenerate (all units equal)")
    low, high, method = _bootstrap((sample,), stat, paired=False, vectorized=vectorized)
    return Interval(value, low, high, n, f"bootstrap {method} over {n} units")


def paired_interval(a, b, relative: bool = False) -> Interval:
    """95% interval of ``mean(a) - mean(b)`` (or with ``relative`` of ``mean(a) / mean(b) - 1``) for two systems
    measured on the same units: a[i] and b[i] are unit i's values (e.g. a prompt's maximum toxicity under a method
    and under the base model). Paired bootstrap (``scipy.stats.bootstrap(paired=True)``, BCa). Returns
    Interval(value, low, high, n_units, method); both systems constant gives a zero-width interval."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"paired_interval: a and b must be 1-D and aligned unit by unit, got shapes {a.shape} and "
                         f"{b.shape}")
    _finite_units(np.column_stack([a, b]) if len(a) else a, "paired_interval")
    if relative and b.mean() == 0:
        raise ValueError("paired_interval: the relative change is undefined when mean(b) is 0; use the difference")

    def stat(x, y, axis=-1):
        mx, my = np.mean(x, axis=axis), np.mean(y, axis=axis)
        return mx / my - 1.0 if relative else mx - my

    value = float(stat(a, b))
    n = len(a)
    if n < 2:
        return Interval(value, float("nan"), float("nan"), n, "none (one unit)")
    if (a == a[0]).all() and (b == b[0]).all():
        return Interval(value, value, value, n, "degenerate (all units equal)")
    low, high, method = _bootstrap((a, b), stat, paired=True, vectorized=True)
    return Interval(value, low, high, n, f"paired bootstrap {method} over {n} units")


def difference_interval(a, b) -> Interval:
    """95% interval of ``mean(a) - mean(b)`` for two independent samples of units (a[i] and b[j] are different
    units, e.g. toxic and non-toxic prompts): ``scipy.stats.bootstrap`` with two samples, each resampled on its own
    (BCa). Returns Interval(value, low, high, len(a) + len(b), method); both samples constant gives a zero-width
    interval, fewer than two units in either sample NaN bounds."""
    a, b = _two_samples(a, b, "difference_interval")
    return two_sample_interval(a, b, lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis))


def two_sample_interval(a, b, statistic: Callable) -> Interval:
    """95% interval of ``statistic(a, b)`` for two independent samples of units, each resampled on its own
    (``scipy.stats.bootstrap``, BCa). statistic(x, y, axis=-1) -> float must be vectorized along ``axis`` (x and
    y may carry leading batch dimensions), e.g. a difference of means or a Mann-Whitney U / (n m). Returns
    Interval(value, low, high, len(a) + len(b), method); NaN bounds with fewer than two units in a sample."""
    a, b = _two_samples(a, b, "two_sample_interval")
    value, n = float(statistic(a, b)), len(a) + len(b)
    if len(a) < 2 or len(b) < 2:
        return Interval(value, float("nan"), float("nan"), n, "none (one unit in a sample)")
    if (a == a[0]).all() and (b == b[0]).all():
        return Interval(value, value, value, n, "degenerate (all units equal)")
    low, high, method = _bootstrap((a, b), statistic, paired=False, vectorized=True)
    return Interval(value, low, high, n, f"two-sample bootstrap {method} over {len(a)} + {len(b)} units")


def proportion_interval(k: int, n: int) -> Interval:
    """Exact (Clopper-Pearson) 95% interval of a proportion k/n: ``scipy.stats.binomtest(k, n).proportion_ci``."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"proportion_interval: need 0 <= k <= n and n > 0, got k={k}, n={n}")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return Interval(k / n, float(ci.low), float(ci.high), int(n), "exact (Clopper-Pearson)")


def proportion_difference_interval(k1: int, n1: int, k2: int, n2: int) -> Interval:
    """95% interval of p1 - p2 = k1/n1 - k2/n2 for two independent samples: Newcombe's hybrid score interval
    (Newcombe 1998, Statistics in Medicine 17:873-890, method 10), built from each proportion's Wilson interval
    (``binomtest(...).proportion_ci(method="wilson")``). Worked example in the paper: 56/70 - 48/80 = 0.2,
    interval [0.0524, 0.3339]. n is n1 + n2. For two systems on the same units use ``paired_interval`` on 0/1s."""
    for k, n in ((k1, n1), (k2, n2)):
        if n <= 0 or not 0 <= k <= n:
            raise ValueError(f"proportion_difference_interval: need 0 <= k <= n and n > 0, got k={k}, n={n}")
    p1, p2 = k1 / n1, k2 / n2
    w1 = stats.binomtest(int(k1), int(n1)).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    w2 = stats.binomtest(int(k2), int(n2)).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    low = p1 - p2 - math.sqrt((p1 - w1.low) ** 2 + (w2.high - p2) ** 2)
    high = p1 - p2 + math.sqrt((w1.high - p1) ** 2 + (p2 - w2.low) ** 2)
    return Interval(p1 - p2, low, high, int(n1 + n2), "Newcombe hybrid score (Wilson)")


def correlation_interval(r: float, n: int) -> Interval:
    """95% interval of a Pearson correlation r over n pairs from Fisher's z transform,
    tanh(atanh(r) -+ z_{0.975} / sqrt(n - 3)) (the interval ``scipy.stats.pearsonr(...).confidence_interval()``
    gives). For when only r and n were recorded; NaN bounds for n <= 3."""
    if n <= 3 or not -1 <= r <= 1:
        return Interval(float(r), float("nan"), float("nan"), int(n), "none (n <= 3)")
    half = stats.norm.ppf(0.5 + CONFIDENCE / 2) / math.sqrt(n - 3)
    z = math.atanh(min(max(r, -1 + 1e-15), 1 - 1e-15))
    return Interval(float(r), math.tanh(z - half), math.tanh(z + half), int(n), "Fisher z")


def auc_interval(auc: float, n_positive: int, n_negative: int) -> Interval:
    """95% interval of a ROC AUC from its standard error (Hanley & McNeil 1982, Radiology 143:29-36, eq. 2):
    q1 = A / (2 - A), q2 = 2 A^2 / (1 + A), se^2 = (A(1 - A) + (n_p - 1)(q1 - A^2) + (n_n - 1)(q2 - A^2)) /
    (n_p n_n); normal interval clipped to [0, 1]. For when only the AUC and the class counts were recorded."""
    if n_positive < 1 or n_negative < 1:
        raise ValueError(f"auc_interval: need positives and negatives, got {n_positive} and {n_negative}")
    a = float(auc)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = math.sqrt((a * (1 - a) + (n_positive - 1) * (q1 - a * a) + (n_negative - 1) * (q2 - a * a))
                   / (n_positive * n_negative))
    half = stats.norm.ppf(0.5 + CONFIDENCE / 2) * se
    return Interval(a, max(0.0, a - half), min(1.0, a + half), int(n_positive + n_negative), "Hanley-McNeil")


def _band(threshold, direction: str) -> tuple[float, float]:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    if direction == "within":
        try:
            lo, hi = (float(t) for t in threshold)
        except (TypeError, ValueError):
            raise ValueError(f"direction 'within' needs threshold=(low, high), got {threshold!r}") from None
        if lo > hi:
            raise ValueError(f"threshold band ({lo}, {hi}) has low > high")
        return lo, hi
    if isinstance(threshold, (tuple, list)):
        raise ValueError(f"direction {direction!r} needs one threshold value, got {threshold!r}")
    return float(threshold), float(threshold)


def verdict(low, high, threshold, direction: str = "above") -> str:
    """``holds``, ``fails`` or ``undecided`` for a claim whose interval is [low, high]; ``not judged`` when there is
    no interval or no threshold (None or NaN).

    direction "above": the claim is "the value exceeds threshold" (holds when low > threshold, fails when
    high < threshold). "below": the claim is "the value is under threshold" (mirror image). "within": threshold is
    (lo, hi) and the claim is "the value lies in that band" (holds when the interval lies inside it, fails when it
    lies wholly outside it). An interval that contains (or touches) the threshold is undecided. For an exact fact
    pass low == high == the value.
    """
    lo_t, hi_t = _band(threshold, direction) if threshold is not None else (math.nan, math.nan)
    bounds = [low, high, lo_t, hi_t]
    if any(b is None or (isinstance(b, float) and math.isnan(b)) for b in bounds):
        return "not judged"
    low, high = float(low), float(high)
    if low > high:
        raise ValueError(f"interval [{low}, {high}] has low > high")
    if direction == "above":
        return "holds" if low > lo_t else "fails" if high < lo_t else "undecided"
    if direction == "below":
        return "holds" if high < lo_t else "fails" if low > lo_t else "undecided"
    if lo_t <= low and high <= hi_t and lo_t < hi_t:
        return "holds"
    return "fails" if high < lo_t or low > hi_t else "undecided"


def test_verdict(effect: float, pvalue: float, direction: str = "above", alpha: float = 0.05) -> str:
    """Verdict of a claim decided by a significance test (e.g. a paired t-test of two conditions): ``undecided``
    when pvalue >= alpha; else ``holds`` when the effect's sign matches the claim (direction "above": effect > 0,
    "below": effect < 0) and ``fails`` when it is the opposite; ``not judged`` when either number is missing."""
    if direction not in ("above", "below"):
        raise ValueError(f"direction must be 'above' or 'below' for a test, got {direction!r}")
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (effect, pvalue)):
        return "not judged"
    if pvalue >= alpha:
        return "undecided"
    return "holds" if (effect > 0) == (direction == "above") and effect != 0 else "fails"


test_verdict.__test__ = False  # a library function, not a pytest test


def n_to_decide(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8, two_sample: bool = False
                ) -> int | None:
    """Units needed to resolve ``effect`` (a mean, or a mean paired difference, minus the threshold) whose per-unit
    standard deviation is ``sd``, in a two-sided test at ``alpha`` with ``power``; per group with ``two_sample``.

    Normal approximation: n = ((z_{1-alpha/2} + z_{power}) * sd / effect)^2, doubled per group for two independent
    samples, rounded up. Worked example (e.g. Rosner, Fundamentals of Biostatistics, sample size for a one-sample
    or paired test; Cohen 1988 for d): an effect of 0.5 sd at alpha 0.05 and power 0.8 gives
    (1.95996 + 0.84162)^2 / 0.25 = 31.4, so 32 units (paired); two samples need 62.8, so 63 per group (the t-based
    tables give 64). Returns None when the effect is 0 or NaN (no sample size resolves it).
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie in (0, 1), got alpha={alpha}, power={power}")
    if sd < 0 or math.isnan(sd):
        raise ValueError(f"sd must be a non-negative number, got {sd}")
    if effect is None or math.isnan(effect) or effect == 0:
        return None
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    n = (z * sd / abs(effect)) ** 2 * (2 if two_sample else 1)
    return max(1, math.ceil(n - 1e-9))


def n_to_decide_from_interval(value: float, low: float, high: float, n: int, threshold: float,
                              alpha: float = 0.05, power: float = 0.8) -> int | None:
    """``n_to_decide`` for a statistic known only through its interval over n units: the per-unit sd is taken as
    sqrt(n) times the standard error (high - low) / (2 z_{0.975}); the effect is value - threshold. None when the
    interval or the effect is missing or zero."""
    if any(v is None or math.isnan(float(v)) for v in (value, low, high, threshold)) or not n:
        return None
    se = (float(high) - float(low)) / (2 * stats.norm.ppf(0.5 + CONFIDENCE / 2))
    return n_to_decide(float(value) - float(threshold), se * math.sqrt(n), alpha, power)


def n_to_decide_proportion(p: float, threshold: float, direction: str = "above", limit: int = 10_000_000
                           ) -> int | None:
    """The smallest n at which the observed share ``p`` (k = round(p n) of n) gives a Clopper-Pearson interval
    wholly on one side of ``threshold`` ("above": low > threshold if p > threshold; "below": high < threshold if p
    < threshold; either way the side p lies on). Exact where the normal approximation is poor (p near 0 or 1):
    13 of 13 against 0.8 needs 17. None when p equals the threshold or ``limit`` does not suffice."""
    if p is None or math.isnan(p) or p == threshold:
        return None
    above = p > threshold

    def decided(n: int) -> bool:
        ci = proportion_interval(int(round(p * n)), n)
        return ci.low > threshold if above else ci.high < threshold

    high = 1
    while not decided(high):
        high *= 2
        if high > limit:
            return None
    low = high // 2
    while high - low > 1:  # decided() is monotone in n up to rounding of k; bisection finds the first n
        mid = (low + high) // 2
        low, high = (low, mid) if decided(mid) else (mid, high)
    return high
