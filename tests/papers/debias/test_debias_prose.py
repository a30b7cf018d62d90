"""The debias_consistency exercises' glued figures, checked against scipy by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import ttest_ind

from toxlib.papers.debias import exercise_prose


def test_the_power_figures_are_the_t_tests_by_hand_and_the_polarity_rows_read_the_checklist():
    n = 20
    long = pd.DataFrame([{"method": "self-debiasing", "set": "adversarial", "attribute": "toxicity", "model": "m",
                          "condition": c, "probability": p, "n": n, "p_value": pv}
                         for c, p, pv in (("default", 0.2, None), ("opposite", 0.1, 0.39))]
                        + [{"method": "self-debiasing", "set": "adversarial", "attribute": "average", "model": "m",
                            "condition": c, "probability": p, "n": n, "p_value": None}
                           for c, p in (("default", 0.2), ("opposite", 0.1), ("original", 0.05))])
    checks = pd.DataFrame([{"method": "self-debiasing", "model": "m", "test": "polarity", "set": "adversarial",
                            "passed": False, "reason": "opposite 10% <= default 20% >= original 5%",
                            "verdict": "undecided"}])
    prose = exercise_prose(checks, long, 0.05)
    default = np.r_[np.ones(4), np.zeros(16)]
    needed = next(k for k in range(5, n + 1) if ttest_ind(np.r_[np.ones(k), np.zeros(n - k)], default).pvalue < 0.05)
    assert prose["debias-needed"].startswith(f"needs {needed} of {n} toxic continuations")
    assert prose["debias-default-toxic"] == "4" and prose["debias-opposite-toxic"] == "2"
    assert prose["debias-polarity-pass"] == "0 of 1" and "verdict: undecided" in prose["debias-polarity-rows"]
    assert prose["debias-polarity-agree"] == "the checklist agrees for every pair"
    assert prose["debias-power-reading"].startswith("With so few prompts")  # p = 0.39 is not below 0.05
    checks.loc[0, "passed"] = True  # a checklist that says otherwise is named
    named = exercise_prose(checks, long, 0.05)["debias-polarity-agree"]
    assert named == "the checklist differs for self-debiasing on m"
