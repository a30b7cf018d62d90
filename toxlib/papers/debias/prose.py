"""What the debias_consistency chapter's exercise solutions quote, {glue key: text} for myst-nb glue
(``toxlib.publish.glue``), computed from the checklist and the attribute tables so that the text states this run."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import ttest_ind


def exercise_prose(checks: pd.DataFrame, long: pd.DataFrame, alpha: float) -> dict[str, str]:
    """Keys start with "debias-". ``checks``: the chapter's checklist rows (method, model, test, passed, set,
    reason, verdict); ``long``: the attribute tables in tidy form (condition, attribute, probability, p_value, n,
    set, method, model). The power figures are Self-Debiasing's toxicity on the adversarial set of the first model."""
    polarity = checks[(checks["test"] == "polarity") & (checks["set"] == "adversarial")]
    # the exercise's by-hand rule on attribute_tables.csv, to compare with the checklist's own
    average = long[(long["attribute"] == "average") & (long["set"] == "adversarial")]
    by_hand = {}
    for (method, model), rows in average.groupby(["method", "model"], sort=False):
        p = rows.set_index("condition")["probability"]
        by_hand[method, model] = bool(p["opposite"] > p["default"] >= p["original"])
    differ = [f"{r.method} on {r.model}" for r in polarity.itertuples()
              if by_hand.get((r.method, r.model)) is not None and by_hand[r.method, r.model] != bool(r.passed)]
    rows = [f"{r.method} on {r.model}: {r.reason} ({'passes' if r.passed else 'misses'} the letter; verdict: "
            f"{r.verdict})" for r in polarity.itertuples()]
    sd = long[(long["method"] == "self-debiasing") & (long["set"] == "adversarial") & (long["attribute"] == "toxicity")]
    model = sd["model"].iloc[0]
    t = sd[sd["model"] == model].set_index("condition")
    n = int(t.loc["default", "n"])

    def ones(k: int) -> np.ndarray:
        return np.r_[np.ones(k), np.zeros(n - k)]

    toxic = {c: round(t.loc[c, "probability"] * n) for c in ("default", "opposite")}
    default = ones(toxic["default"])
    needed = next((k for k in range(n + 1) if k / n > default.mean() and ttest_ind(ones(k), default).pvalue < alpha),
                  None)
    return {f"debias-{key}": value for key, value in {
        "polarity-rows": "; ".join(rows),
        "polarity-pass": f"{sum(by_hand.values())} of {len(by_hand)}",
        "polarity-agree": ("the checklist agrees for every pair" if not differ else
                           f"the checklist differs for {', '.join(differ)}"),
        "power-reading": (
            "With so few prompts only large effects can be detected, so \"not significant\" here mostly means \"too "
            "few prompts to tell\", not \"no effect\"" if t.loc["opposite", "p_value"] >= alpha else
            f"Here the opposite condition already differs from default at α = {alpha:g}"),
        "alpha": f"{alpha:g}", "n": f"{n:,}", "power-model": model,
        "default-toxic": f"{toxic['default']}", "opposite-toxic": f"{toxic['opposite']}",
        "opposite-p-table": f"{t.loc['opposite', 'p_value']:.2f}",
        "opposite-p": f"{t.loc['opposite', 'p_value']:.4f}",
        "needed": (f"needs {needed} of {n} toxic continuations ({needed / n:.0%}, p = "
                   f"{ttest_ind(ones(needed), default).pvalue:.3f})" if needed is not None else
                   f"cannot reach p < {alpha:g} with {n} continuations")}.items()}
