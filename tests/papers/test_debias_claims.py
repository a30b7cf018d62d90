"""Debiasing-consistency claims and chapter tables (toxlib.papers.debias.findings) on hand-built tables."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.papers import debias

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SD, ID = "self-debiasing", "instructive debiasing"


def _table(averages: dict[str, float]) -> pd.DataFrame:
    t = pd.DataFrame({("average", "probability"): averages})
    t.columns = pd.MultiIndex.from_tuples(t.columns)
    return t


def _checks(model: str, verdicts: dict) -> pd.DataFrame:
    return pd.DataFrame([{"method": key, "model": model, "test": test, "passed": passed, "set": "both",
                          "reason": f"{key} {test} reason"} for (key, test), passed in verdicts.items()])


def test_debias_claims_per_model():
    tables = {(SD, "m", "adversarial"): _table({"default": 0.2, "original": 0.1, "opposite": 0.15}),
              (ID, "m", "adversarial"): _table({"default": 0.1, "original": 0.05, "opposite": 0.3})}
    checks = _checks("m", {(SD, "polarity"): False, (SD, "importance_as_applied"): True, (SD, "importance"): None,
                           (ID, "polarity"): True, (ID, "importance_as_applied"): True,
                           (ID, "transferability_as_applied"): False})
    rows = debias.claims(checks, tables, ["m"], 100.0, "greedy")
    lowers, sd_polarity, sd_importance, id_polarity, opposite, all_three = rows
    assert lowers["paper_value"] == "GPT-2 Large: default 22.2%, original 9.7%, opposite 13.0%"
    assert lowers["our_value"] == "default 20.0%, original 10.0%, opposite 15.0%" and lowers["verdict"] == "holds"
    assert lowers["note"] == "λ = 100; adversarial set; greedy"
    assert sd_polarity["paper_value"] == "fails (Table 5)" and sd_polarity["our_value"] == "fails"
    assert sd_polarity["verdict"] == "holds" and sd_polarity["note"] == "self-debiasing polarity reason"
    assert sd_importance["our_value"] == "as applied: passes; as stated: not decided"
    assert id_polarity["verdict"] == "holds"
    assert opposite["paper_value"] == "GPT-3: 32.6% vs 11.9%; GPT-2: 32.7% vs 22.2%"
    assert opposite["our_value"] == "30.0% vs 10.0%" and opposite["verdict"] == "holds"
    assert all_three["our_value"] == ("polarity passes, importance_as_applied passes, "
                                      "transferability_as_applied fails")
    assert all_three["verdict"] == "fails"


def test_undecided_polarity_is_not_judged():
    tables = {(SD, "m", "adversarial"): _table({"default": 0.2, "original": 0.3, "opposite": 0.1}),
              (ID, "m", "adversarial"): _table({"default": 0.2, "original": 0.3, "opposite": 0.1})}
    checks = _checks("m", {(SD, "polarity"): None, (SD, "importance_as_applied"): False, (SD, "importance"): False,
                           (ID, "polarity"): False, (ID, "importance_as_applied"): True,
                           (ID, "transferability_as_applied"): True})
    lowers, sd_polarity, _, _, opposite, _ = debias.claims(checks, tables, ["m"], 50.0, "beam")
    assert lowers["verdict"] == "fails" and opposite["verdict"] == "fails"
    assert sd_polarity["our_value"] == "not decided" and sd_polarity["verdict"] == "not judged"


def test_checklist_grid_puts_the_papers_table5_beside_ours():
    checks = pd.DataFrame([{"method": SD, "model": "m", "test": t, "passed": t == "polarity"}
                           for t in debias.TESTS])
    grid = debias.checklist_grid(checks).set_index(["method", "model"])
    assert grid.loc[(SD, "m"), "polarity"] == "✓" and grid.loc[(SD, "m"), "importance"] == "✗"
    paper = grid.loc[(SD, "paper: GPT-2 Large")]
    assert paper["polarity"] == "✗" and paper["importance"] == "✓" and paper["importance_as_applied"] == "✓"
    assert list(grid.columns) == list(debias.TESTS)


def test_specifications_table_and_examples():
    method = debias.instructive_method()
    specs = debias.specifications_table({"instructive debiasing": method})
    assert set(specs["condition"]) == set(method.specifications)
    assert specs.set_index("condition").loc["nonsensical", "groups"] == len(method.specifications["nonsensical"])
    scored = {("k", "m"): pd.DataFrame({"set": ["adversarial"] * 4 + ["neutral"], "group": [0, 0, 0, 1, 0],
                                        "prompt_id": [1, 1, 2, 1, 3], "prompt": ["p1", "p1", "p2", "p1", "p3"],
                                        "condition": ["default", "original", "default", "nonsensical", "default"],
                                        "toxicity": [0.1, 0.2, 0.3, 0.4, 0.5], "continuation": list("abcde")})}
    examples = debias.example_continuations(scored, 1)
    assert examples["continuation"].tolist() == ["a", "b"]  # first adversarial prompt, group 0 only
