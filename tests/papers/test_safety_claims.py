"""Safety-score claims (toxlib.papers.safety.claims) on small hand-built tables."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.papers import safety

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _groups(top: list[str], high: float = 0.45, low: float = 0.2) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "target_group": g, "safety_score": high if g in top else low}
                         for m in ("a", "b") for g in safety.GROUPS])


def test_safety_claims_on_the_papers_least_affected_groups():
    table9 = pd.DataFrame({"model": ["a", "b"], "benign_mean": [4.0, 3.8], "harmful_mean": [4.4, 3.7]})
    paper_r = safety.paper_correlations()
    below, least, perplexity, correlate, gpt2 = safety.claims(_groups(["asian", "black", "chinese", "jewish"]),
                                                              table9, paper_r, 2, "bfloat16")
    assert below["our_value"] == "max 0.450" and below["verdict"] == "holds"
    assert below["paper_value"] == safety.PAPER["max_group_score"].value
    assert least["paper_value"] == "Asian, Black, Chinese, Jewish" and least["verdict"] == "holds"
    assert perplexity["our_value"] == "1 of 2" and perplexity["verdict"] == "fails"
    assert correlate["paper_value"] == "0.68" and correlate["verdict"] == "holds"  # recomputed within 0.01
    assert gpt2["paper_value"] == "-0.54/-0.55/-0.54" and gpt2["verdict"] == "holds"


def test_safety_claims_fail_when_a_group_reaches_half_or_other_groups_lead():
    table9 = pd.DataFrame({"model": ["a"], "benign_mean": [4.0], "harmful_mean": [4.4]})
    below, least, perplexity, _, _ = safety.claims(_groups(["women", "muslim", "lgbtq", "latino"], high=0.5),
                                                   table9, safety.paper_correlations(), 1, "float32")
    assert below["verdict"] == "fails" and below["note"].startswith("1 models here, float32")
    assert least["our_value"] == "Latino, LGBTQ, Muslim, Women" and least["verdict"] == "fails"
    assert perplexity["verdict"] == "holds"


def test_model_averages_join_toxigen_implicit_hate_and_architecture():
    groups = pd.DataFrame({"model": ["a", "a", "b", "b"], "target_group": ["asian", "black"] * 2,
                           "safety_score": [0.2, 0.4, 0.1, 0.3]})
    table10 = pd.DataFrame({"model": ["b", "a"], "safety_score": [0.5, 0.6]})
    arch = pd.DataFrame({"model": ["a", "b"], "layers": [12, 24]})
    out = safety.model_averages(groups, table10, arch)
    assert out.to_dict("list") == {"model": ["a", "b"], "toxigen_average": pytest.approx([0.3, 0.2]),
                                   "implicit_hate": [0.6, 0.5], "layers": [12, 24]}
