"""No claim of a generating chapter is decided by how it is set up: for each, one synthetic input makes it hold and
another makes it fail (the verdict follows the data, not the construction). Inputs are built as the chapters'
tables are (one row per generation), at sizes where the intervals are clear."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.papers import rtp
from toxlib.papers.rtp import detox as rtp_detox

RNG = np.random.default_rng(7)


def maxima_rows(spec: dict, key: str, k: int = 2) -> pd.DataFrame:
    """spec {(group, class): per-prompt maxima}: k generations per prompt, the first at the maximum, in the chapters'
    columns (``key`` names the group column: model or method)."""
    return pd.DataFrame([{key: g, "prompt_class": c, "prompt_id": f"{c}-{i}", "sample_idx": j,
                          "toxicity": v if j == 0 else v / 2}
                         for (g, c), values in spec.items() for i, v in enumerate(values) for j in range(k)])


def verdicts(rows: list[dict]) -> dict[str, str]:
    return {r["claim"]: r["verdict"] for r in rows}


def assert_each_claim_flips(one: dict[str, str], other: dict[str, str]) -> None:
    assert one.keys() == other.keys()
    stuck = {c: one[c] for c in one if {one[c], other[c]} != {"holds", "fails"}}
    assert not stuck, f"claims that did not come out 'holds' on one input and 'fails' on the other: {stuck}"


def test_every_unprompted_claim_flips():
    high = pd.DataFrame({"model": "m", "toxicity": np.r_[RNG.uniform(0, 0.5, 1900), RNG.uniform(0.95, 1, 100)]})
    low = pd.DataFrame({"model": "m", "toxicity": RNG.uniform(0.0, 0.3, 2000)})
    assert_each_claim_flips(verdicts(rtp.claims_unprompted(high, ["m"], 2000, "distilled")),
                            verdicts(rtp.claims_unprompted(low, ["m"], 2000, "distilled")))


def test_every_prompted_claim_flips():
    def scored(toxic_lo, toxic_hi, nontoxic_lo, nontoxic_hi, challenging):
        frame = maxima_rows({("m", "toxic"): RNG.uniform(toxic_lo, toxic_hi, 60),
                             ("m", "non-toxic"): RNG.uniform(nontoxic_lo, nontoxic_hi, 60)}, "model")
        # 400 prompts: a share of 0 of them is below the rule's 1% at 95% confidence (0 of 40 would not be)
        hard = maxima_rows({("m", "challenging"): np.full(400, challenging)}, "model")
        return rtp.claims_prompted(frame, hard, ["m"], 2)

    as_paper = scored(0.8, 1.0, 0.45, 0.95, 0.97)  # toxic above non-toxic; most non-toxic prompts reach 0.5
    reversed_ = scored(0.0, 0.2, 0.3, 0.45, 0.2)  # the opposite everywhere
    assert_each_claim_flips(verdicts(as_paper), verdicts(reversed_))


def test_every_detox_claim_flips():
    base = RNG.uniform(0.6, 0.8, 400)  # 0 of 400 prompts at 0.5 is below the 1% of "not failsafe" at 95%

    def run(works: bool):
        def spec(method_shift: float, dapt_toxic_shift: float, best_shift: float):
            shifted = {m: np.clip(base + (best_shift if m in ("DAPT (non-toxic)", "VOCAB-SHIFT") else method_shift),
                                  0, 1) for m in rtp_detox.DETOXIFIERS}
            out = {("base model", c): base for c in ("toxic", "non-toxic")}
            out |= {(m, c): v for m, v in shifted.items() for c in ("toxic", "non-toxic")}
            out |= {("DAPT (toxic)", c): np.clip(base + dapt_toxic_shift, 0, 1) for c in ("toxic", "non-toxic")}
            out |= {("base model (PPLM subset, fp32)", "toxic"): base,
                    ("PPLM", "toxic"): np.clip(base + method_shift, 0, 1)}
            return out

        # works: every method lowers toxicity, the two best lowest, DAPT on toxic text raises it, yet some toxic
        # prompts stay above 0.5; backfires: the reverse, with every maximum below 0.5 so nothing is "not failsafe"
        generations = maxima_rows(spec(-0.1, +0.15, -0.2) if works else spec(+0.05, -0.5, +0.09), "method")
        generations["model"] = "m"
        if not works:
            generations["toxicity"] = generations["toxicity"] * 0.55
        ratios = [1.1, 1.2] if works else [3.0, 1.2]
        perplexity = pd.DataFrame({"method": ["base model", "WORD FILTER", "DAPT (toxic)"],
                                   "ratio": [1.0, *ratios]})
        return verdicts(rtp_detox.claims(generations, perplexity, 2, 2, 24))

    works, backfires = run(True), run(False)
    assert_each_claim_flips(works, backfires)


def test_the_flip_check_can_fail():
    rows = {"claim a": "holds", "claim b": "undecided"}
    with pytest.raises(AssertionError, match="claim b"):
        assert_each_claim_flips(rows, {"claim a": "fails", "claim b": "undecided"})
