"""Debiasing-consistency claims and chapter tables (toxlib.papers.debias.findings) on hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.papers import debias

SD, ID = "self-debiasing", "instructive debiasing"


def _table(averages: dict[str, float], p_values: dict[str, float] | None = None) -> pd.DataFrame:
    """An attribute table's "average" columns: probability and the t-test's p-value against default."""
    p_values = p_values or {}
    t = pd.DataFrame({("average", "probability"): averages,
                      ("average", "p_value"): {c: p_values.get(c, float("nan")) for c in averages}})
    t.columns = pd.MultiIndex.from_tuples(t.columns)
    t.attrs["alpha"] = 0.05
    return t


def _checks(model: str, verdicts: dict) -> pd.DataFrame:
    word = {True: "holds", False: "fails", None: "undecided"}
    return pd.DataFrame([{"method": key, "model": model, "test": test, "passed": passed, "set": "both",
                          "reason": f"{key} {test} reason", "verdict": word[passed], "n_to_decide": None}
                         for (key, test), passed in verdicts.items()])


def test_debias_claims_per_model():
    """Clear effects (p < 0.05) hold; the claim "Self-Debiasing fails polarity" holds when polarity fails."""
    tables = {(SD, "m", "adversarial"): _table({"default": 0.2, "original": 0.1, "opposite": 0.15},
                                               {"original": 0.001, "opposite": 0.2}),
              (ID, "m", "adversarial"): _table({"default": 0.1, "original": 0.05, "opposite": 0.3},
                                               {"original": 0.3, "opposite": 0.0001})}
    checks = _checks("m", {(SD, "polarity"): False, (SD, "importance_as_applied"): True, (SD, "importance"): None,
                           (ID, "polarity"): True, (ID, "importance_as_applied"): True,
                           (ID, "transferability_as_applied"): False})
    rows = debias.claims(checks, tables, ["m"], 100.0, "greedy")
    lowers, sd_polarity, sd_importance, id_polarity, opposite, all_three = rows
    assert lowers["paper_value"] == "GPT-2 Large: default 22.2%, original 9.7%, opposite 13.0%"
    assert lowers["shown"] == "default 20.0%, original 10.0%, opposite 15.0%" and lowers["verdict"] == "holds"
    assert lowers["note"] == "t-test of original vs default, p = 0.001; λ = 100; adversarial set; greedy"
    assert sd_polarity["paper_value"] == "fails (Table 5)" and sd_polarity["shown"] == "fails"
    assert sd_polarity["verdict"] == "holds" and sd_polarity["note"] == "self-debiasing polarity reason"
    assert sd_importance["shown"] == "as applied: passes; as stated: not decided"
    assert id_polarity["verdict"] == "holds"
    assert opposite["paper_value"] == "GPT-3: 32.6% vs 11.9%; GPT-2: 32.7% vs 22.2%"
    assert opposite["shown"] == "30.0% vs 10.0%" and opposite["verdict"] == "holds"
    assert all_three["shown"] == ("polarity passes (holds), importance (as applied) passes (holds), "
                                      "transferability (as applied) fails (fails)")
    assert all_three["verdict"] == "fails"
    assert all(row["ci_low"] is None for row in rows)  # decided by t-tests, no interval
    assert [r["id"] for r in rows] == [f"{rule}:model:m" for rule in (
        "self_debiasing_lowers", "self_debiasing_polarity", "self_debiasing_importance", "instructive_polarity",
        "opposite_raises", "instructive_all_three")]


def test_null_effects_are_undecided_and_reversed_effects_fail():
    """The same point estimates as a holding claim, but p >= 0.05: undecided; a significant effect in the
    opposite direction: fails."""
    null = {(SD, "m", "adversarial"): _table({"default": 0.2, "original": 0.1, "opposite": 0.3},
                                             {"original": 0.4, "opposite": 0.6}),
            (ID, "m", "adversarial"): _table({"default": 0.2, "original": 0.1, "opposite": 0.3},
                                             {"original": 0.4, "opposite": 0.6})}
    checks = _checks("m", {(SD, "polarity"): None, (SD, "importance_as_applied"): None, (SD, "importance"): None,
                           (ID, "polarity"): None, (ID, "importance_as_applied"): True,
                           (ID, "transferability_as_applied"): True})
    lowers, sd_polarity, _, _, opposite, all_three = debias.claims(checks, null, ["m"], 50.0, "beam")
    assert lowers["verdict"] == "undecided" and opposite["verdict"] == "undecided"
    assert sd_polarity["shown"] == "not decided" and sd_polarity["verdict"] == "undecided"
    assert all_three["verdict"] == "undecided"
    reversed_ = {key: _table({"default": 0.2, "original": 0.3, "opposite": 0.1}, {"original": 0.01, "opposite": 0.01})
                 for key in null}
    lowers, _, _, _, opposite, _ = debias.claims(checks, reversed_, ["m"], 50.0, "beam")
    assert lowers["verdict"] == "fails" and opposite["verdict"] == "fails"


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


def _full_table(prob: dict, p_default: dict, p_original: dict, alpha: float = 0.05) -> pd.DataFrame:
    rows = {c: {("average", "probability"): prob[c], ("average", "p_value"): p_default.get(c, float("nan")),
                ("average", "significant"): p_default.get(c, 1.0) < alpha,
                ("average", "p_vs_original"): p_original.get(c, float("nan"))} for c in prob}
    t = pd.DataFrame.from_dict(rows, orient="index")
    t.columns = pd.MultiIndex.from_tuples(t.columns)
    t.attrs["alpha"] = alpha
    return t


def test_checklist_verdicts_three_ways():
    """passed keeps the paper's point rule; verdict decides each comparison by its t-test."""
    prob = {"default": 0.2, "original": 0.1, "opposite": 0.3, "nonsensical": 0.25, "blank": 0.3}
    clear = _full_table(prob, {"original": 0.001, "opposite": 0.001, "nonsensical": 0.01, "blank": 0.01},
                        {"nonsensical": 0.001, "blank": 0.001})
    null = _full_table(prob, {"original": 0.5, "opposite": 0.5, "nonsensical": 0.5, "blank": 0.5},
                       {"nonsensical": 0.5, "blank": 0.5})
    reversed_ = _full_table({"default": 0.2, "original": 0.3, "opposite": 0.1, "nonsensical": 0.05, "blank": 0.05},
                            {"original": 0.001, "opposite": 0.001, "nonsensical": 0.001, "blank": 0.001},
                            {"nonsensical": 0.001, "blank": 0.001})
    got = {name: debias.checklist({"adversarial": t, "neutral": t}).set_index("test")
           for name, t in (("clear", clear), ("null", null), ("reversed", reversed_))}
    assert got["clear"]["verdict"].to_dict() == {t: "holds" for t in debias.TESTS}
    # null: same point estimates, nothing significant: the paper's rule passes polarity, the tests cannot tell
    assert bool(got["null"].loc["polarity", "passed"])
    assert got["null"].loc["polarity", "verdict"] == "undecided"
    assert got["null"].loc["importance", "verdict"] == "undecided"
    assert got["null"].loc["importance_as_applied", "verdict"] == "holds"  # not significant vs default passes (§6)
    assert got["null"].loc["transferability", "verdict"] == "undecided"
    assert got["reversed"].loc["polarity", "verdict"] == "fails"
    assert got["reversed"].loc["importance", "verdict"] == "fails"
    assert got["reversed"].loc["importance_as_applied", "verdict"] == "fails"
    assert got["reversed"].loc["transferability_as_applied", "verdict"] == "fails"


def _protocol_frame(shares: dict[str, np.ndarray]) -> pd.DataFrame:
    """run_protocol-like rows: one continuation per (condition, prompt); every attribute scored 0.9 (present) when
    the prompt's draw is 1, else 0.1."""
    rows = []
    for condition, present in shares.items():
        for i, flag in enumerate(present):
            rows.append({"set": "adversarial", "condition": condition, "group": 0, "prompt_id": i,
                         **{a: 0.9 if flag else 0.1 for a in debias.TABLE_ATTRIBUTES}})
    return pd.DataFrame(rows)


def test_debias_claims_with_scored_frames_carry_paired_intervals():
    rng = np.random.default_rng(4)
    default = rng.integers(0, 2, 60)
    sd = _protocol_frame({"default": default, "original": np.zeros(60, int), "opposite": default})  # clear drop
    ins = _protocol_frame({"default": default, "original": default, "opposite": rng.permutation(default)})  # null
    tables = {(key, "m", "adversarial"): debias.attribute_table(frame, "adversarial")
              for key, frame in ((SD, sd), (ID, ins))}
    checks = _checks("m", {(SD, "polarity"): None, (SD, "importance_as_applied"): None, (SD, "importance"): None,
                           (ID, "polarity"): None, (ID, "importance_as_applied"): None,
                           (ID, "transferability_as_applied"): None})
    rows = debias.claims(checks, tables, ["m"], 100.0, "greedy", {(SD, "m"): sd, (ID, "m"): ins})
    lowers, opposite = rows[0], rows[4]
    assert float(lowers["our_value"]) == pytest.approx(-default.mean(), abs=1e-3)  # original minus default
    assert lowers["n"] == 60 and lowers["ci_high"] < 0 and lowers["verdict"] == "holds"
    assert opposite["ci_low"] < 0 < opposite["ci_high"] and opposite["verdict"] == "undecided"
    assert opposite["n_to_decide"] is None or opposite["n_to_decide"] > 0
