"""Trivial baselines of a binary classification: what a classifier that ignores its input scores on the same items.

- "baseline: always toxic" answers 1 to every item: precision = prevalence, recall = 1, F1 = 2p / (1 + p).
- "baseline: never toxic" answers 0 to every item: recall 0, F1 0, precision undefined (NaN, as ``binary_prf``).
- "baseline: random at prevalence" answers 1 with probability p (the observed prevalence) independently per item:
  its precision, recall and F1 are the means over ``RANDOM_DRAWS`` seeded draws, and ``f1_low`` / ``f1_high`` the
  2.5th and 97.5th percentiles of F1 over them (the spread a guesser shows on these items). The draws use numpy's
  PCG64 with ``RANDOM_SEED``, so every machine gets the same rows.

The constants are scored with ``binary_prf``, the code that scores the systems. The random draws use the closed forms
(TP / predicted, TP / positives, 2 TP / (positives + predicted)) over all draws at once, because ``binary_prf`` on
10,000 draws would take seconds per table; ``tests/metrics/test_baselines.py`` holds them equal to ``binary_prf`` on
single draws.

With any prevalence above 0, "always toxic" has the highest F1 of the three (2p / (1 + p) >= p, the random answer's
expected F1 to first order), so it is the floor a system's F1 must clear: ``F1_FLOOR``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.metrics.classification import binary_prf

ALWAYS, NEVER, RANDOM = "baseline: always toxic", "baseline: never toxic", "baseline: random at prevalence"
BASELINES = (ALWAYS, NEVER, RANDOM)
#: the baseline with the highest F1 at any prevalence above 0
F1_FLOOR = ALWAYS
RANDOM_DRAWS = 10_000
RANDOM_SEED = 0


def _labels(y_true) -> np.ndarray:
    y = np.asarray(y_true, dtype=float)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y_true: give one 0/1 label per item (a non-empty 1-D array), got shape {y.shape}")
    if np.isnan(y).any() or not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y_true must hold only 0 and 1 (every gold label known)")
    return y


def constant_predictions(y_true) -> dict[str, np.ndarray]:
    """{baseline name: its 0/1 predictions} for the two constant baselines, shaped like ``y_true``."""
    y = _labels(y_true)
    return {ALWAYS: np.ones_like(y), NEVER: np.zeros_like(y)}


def random_draws(y_true, draws: int = RANDOM_DRAWS, seed: int = RANDOM_SEED) -> pd.DataFrame:
    """Precision, recall and F1 of ``draws`` seeded random classifiers that answer 1 with probability p = mean of
    ``y_true`` per item. One row per draw; precision NaN for a draw that answered 0 everywhere."""
    y = _labels(y_true)
    p = float(y.mean())
    answers = np.random.default_rng(seed).random((draws, y.size)) < p
    true_pos = answers @ y
    predicted = answers.sum(axis=1).astype(float)
    positives = float(y.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(predicted > 0, true_pos / predicted, np.nan)
        recall = true_pos / positives if positives else np.full(draws, np.nan)
        denominator = positives + predicted
        f1 = np.where(denominator > 0, 2 * true_pos / denominator, np.nan)
    return pd.DataFrame({"precision": precision, "recall": recall, "f1": f1, "n_pred_pos": predicted})


def baseline_rows(y_true, draws: int = RANDOM_DRAWS, seed: int = RANDOM_SEED) -> pd.DataFrame:
    """One row per trivial baseline (``BASELINES``) on the items of ``y_true`` (0/1, shape (n,)), with the columns of
    ``prf_table`` (system, precision, recall, f1, n, n_missing, n_true_pos, n_pred_pos; the random row's scores are
    means over draws and its n_pred_pos the expected count, rounded) plus f1_low and f1_high (the random row's 95%
    range of F1 over draws; NaN for the constants, which have none)."""
    y = _labels(y_true)
    rows = [{"system": name, **binary_prf(y, predicted)} for name, predicted in constant_predictions(y).items()]
    sampled = random_draws(y, draws, seed)
    rows.append({"system": RANDOM, "precision": float(sampled["precision"].mean()),
                 "recall": float(sampled["recall"].mean()), "f1": float(sampled["f1"].mean()), "n": int(y.size),
                 "n_missing": 0, "n_true_pos": int(y.sum()), "n_pred_pos": int(round(sampled["n_pred_pos"].mean())),
                 "f1_low": float(sampled["f1"].quantile(0.025)), "f1_high": float(sampled["f1"].quantile(0.975))})
    table = pd.DataFrame(rows)
    for col in ("f1_low", "f1_high"):
        table[col] = table[col].astype(float)
    return table


def with_baselines(table: pd.DataFrame, y_true, key: str = "system") -> pd.DataFrame:
    """``table`` (one row per system, ``key`` naming it, e.g. ``prf_table`` output) with the rows of
    :func:`baseline_rows` on ``y_true`` appended; columns ``table`` lacks stay empty in its rows and f1_low/f1_high
    are empty in the systems' rows."""
    extra = baseline_rows(y_true).rename(columns={"system": key})
    return pd.concat([table, extra[[c for c in extra.columns if c in table.columns or c in ("f1_low", "f1_high")]]],
                     ignore_index=True)


def f1_floor(y_true) -> float:
    """The highest F1 a trivial baseline reaches on ``y_true``: that of "always toxic", 2p / (1 + p)."""
    y = _labels(y_true)
    return binary_prf(y, np.ones_like(y))["f1"]


def prevalence_text(y_true, what: str = "items") -> str:
    """"181 of 250 items (72.4%) are positive"-style text for captions: the prevalence the baselines rest on."""
    y = _labels(y_true)
    return f"{int(y.sum()):,} of {y.size:,} {what} ({y.mean():.1%})"


NOT_INFORMATIVE = "not informative"


def floored(verdict: str, beats_floor: bool | None) -> str:
    """A claim's verdict once its floor is checked: "not informative" when the claim holds but the system does not
    beat the best trivial baseline (``beats_floor`` False, or None when that could not be decided), else
    ``verdict`` unchanged. A claim that fails, is undecided or was not judged keeps its verdict: a constant answer
    earning those says nothing against them."""
    return NOT_INFORMATIVE if verdict == "holds" and not beats_floor else verdict


#: a classifier giving one answer to more than this share of its items reads as a constant (a degenerate model)
DEGENERATE_SHARE = 0.95
#: ... as does one whose probability of an answer varies by less than this (standard deviation over items)
DEGENERATE_SD = 0.01


def top_answer_share(n_pred_pos: int, n: int) -> float:
    """The share of its ``n`` answered items that a classifier gave its most common answer (NaN for none)."""
    return max(n_pred_pos, n - n_pred_pos) / n if n else float("nan")


def degenerate(share: float, score_sd: float | None = None) -> bool:
    """Whether a classifier's answers are those of a constant, or nearly: its most common answer covers more than
    ``DEGENERATE_SHARE`` of the items (``top_answer_share``), or the probability it gives an answer varies by less
    than ``DEGENERATE_SD`` over the items (``score_sd``, when it has one). NaN counts as not shown degenerate."""
    by_share = share == share and share > DEGENERATE_SHARE
    by_sd = score_sd is not None and score_sd == score_sd and score_sd < DEGENERATE_SD
    return bool(by_share or by_sd)
