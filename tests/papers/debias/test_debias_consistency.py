"""The consistency protocol: specification sets, metrics checked by hand, the checklist rules, and the runner on a
tiny random model with a deterministic toy scorer."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from toxlib.generate import DecodingConfig
from toxlib.papers.debias import (
    CONDITIONS,
    TABLE_ATTRIBUTES,
    TESTS,
    SpecifiedMethod,
    attribute_table,
    checklist,
    instructive_method,
    instructive_specifications,
    nonsense_strings,
    run_protocol,
    self_debiasing_method,
    self_debiasing_specifications,
)
from toxlib.scorers import BatchScores, Scorer
from toxlib.steer import LogitsSteering

WORDS = ("The quick brown fox jumps over the lazy dog Language models continue a prompt one token at a time She said "
         "hello and he answered with a question about the weather Toxicity scores range from zero to one").split()
PROMPTS = [" ".join(WORDS[i:i + 3]) for i in range(0, 48, 3)]  # 16 prompts
GREEDY = DecodingConfig(mode="greedy", max_new_tokens=4)
MARK = "e"  # the toy scorer's "toxic" character: 7 of the 16 tiny-Llama default continuations contain it


class MarkScorer(Scorer):
    """Toy scorer: every attribute 0.9 if the text contains MARK, else 0.1."""

    name, version, attributes = "mark-test", "1", TABLE_ATTRIBUTES

    def score_batch(self, texts):
        return BatchScores(np.array([[0.9 if MARK in t else 0.1] * len(TABLE_ATTRIBUTES) for t in texts]))


# --- specification sets -----------------------------------------------------------------------------------------
def test_specification_sets():
    sd = self_debiasing_specifications()
    assert sd["original"][0][0] == "The following text contains rude, disrespectful, or unreasonable language:\n"
    assert sd["opposite"][0][3] == "The following text contains help:\n"
    assert sd["blank"] == [[" "] * 6]
    assert len(sd["nonsensical"]) == 5 and all(len(g) == 6 for g in sd["nonsensical"])
    assert all(p.startswith("The following text contains ") and p.endswith(":\n") for g in sd["nonsensical"] for p in g)
    inst = instructive_specifications()
    assert inst["blank"] == [[""]] and len(inst["nonsensical"]) == 5 and all(len(g) == 1 for g in inst["nonsensical"])
    assert nonsense_strings() == nonsense_strings() != nonsense_strings(seed=1)  # fixed seed
    for text in (s for g in nonsense_strings() for s in g):
        assert 1 <= len(text) <= 48 and text == text.strip()
        assert set(text) <= set("abcdefghijklmnopqrstuvwxyz0123456789; ")
    method = instructive_method()
    runs = method.runs()
    assert [(c, g) for c, g, _ in runs] == [("default", 0), ("original", 0), ("opposite", 0)] + \
        [("nonsensical", g) for g in range(5)] + [("blank", 0)]
    assert runs[0][2] is None and runs[-1][2].transform_prompt("x") == "Be for: x"
    assert len({s.config()["prefix"] for _, _, s in runs[1:]}) == 8
    sd_runs = self_debiasing_method(decay_constant=10).runs()
    assert sd_runs[1][2].config()["decay_constant"] == 10 and sd_runs[-1][2].prefixes == [" "] * 6


# --- metrics by hand ----------------------------------------------------------------------------------------------
def made_up(rows_by_condition: dict, set_name="adversarial") -> pd.DataFrame:
    """{condition: list of (group, toxicity)}; every other attribute = toxicity except threat = 0."""
    records = []
    for condition, rows in rows_by_condition.items():
        for i, (group, tox) in enumerate(rows):
            rec = {"set": set_name, "condition": condition, "group": group, "prompt_id": i, "continuation": "",
                   "error": None}
            rec.update({a: tox for a in TABLE_ATTRIBUTES})
            rec["threat"] = 0.0
            records.append(rec)
    return pd.DataFrame(records)


def test_attribute_table_by_hand():
    scored = made_up({
        "default": [(0, 0.9), (0, 0.1), (0, 0.6), (0, 0.2)],  # 2 of 4 >= 0.5
        "original": [(0, 0.1), (0, 0.1), (0, 0.7), (0, 0.0)],  # 1 of 4
        "nonsensical": [(0, 0.5), (0, 0.5), (1, 0.1), (1, 0.2), (1, 0.8), (1, float("nan"))],  # 2/2 and 1/3
    })
    table = attribute_table(scored, "adversarial")
    assert list(table.index) == ["default", "original", "nonsensical"]
    tox = table["toxicity"]
    assert tox.loc["default", "probability"] == 0.5 and tox.loc["original", "probability"] == 0.25
    assert tox.loc["original", "change_pct"] == pytest.approx(50.0)  # (0.5 - 0.25) / 0.5: a reduction is positive
    assert math.isnan(tox.loc["default", "change_pct"]) and math.isnan(tox.loc["default", "t"])
    # Student's t by hand: a = [0,0,1,0], b = [1,0,1,0]
    a, b = np.array([0, 0, 1, 0.0]), np.array([1, 0, 1, 0.0])
    pooled = ((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / (len(a) + len(b) - 2)
    t = (a.mean() - b.mean()) / math.sqrt(pooled * (1 / len(a) + 1 / len(b)))
    assert tox.loc["original", "t"] == pytest.approx(t) == pytest.approx(-0.6546537)
    assert tox.loc["original", "p_value"] == pytest.approx(stats.ttest_ind(a, b).pvalue)
    assert not tox.loc["original", "significant"]
    # nonsensical: probability = mean of the groups' shares (1 and 1/3), t-test on the pooled indicators, NaN excluded
    assert tox.loc["nonsensical", "probability"] == pytest.approx((1 + 1 / 3) / 2)
    assert tox.loc["nonsensical", "change_pct"] == pytest.approx((0.5 - 2 / 3) / 0.5 * 100)  # more: negative
    assert tox.loc["nonsensical", "t"] == pytest.approx(stats.ttest_ind([1, 1, 0, 0, 1], b).statistic)
    assert tox.loc["nonsensical", "n"] == 5 and tox.loc["nonsensical", "missing"] == 1
    # default probability 0 (threat): change undefined; both constant: t undefined, not significant
    threat = table["threat"]
    assert threat.loc["original", "probability"] == 0 and math.isnan(threat.loc["original", "change_pct"])
    assert math.isnan(threat.loc["original", "t"]) and not threat.loc["original", "significant"]
    # average: mean of the six probabilities; its t-test on per-continuation means of the six indicators
    avg = table["average"]
    assert avg.loc["default", "probability"] == pytest.approx(5 * 0.5 / 6)
    assert avg.loc["original", "change_pct"] == pytest.approx(50.0)
    assert avg.loc["original", "t"] == pytest.approx(stats.ttest_ind(a * 5 / 6, b * 5 / 6).statistic)
    mixed = np.array([1, 1, 0, 0, 1]) * 5 / 6  # the row with NaN scores: its only scored indicator, threat, is 0
    mixed = np.append(mixed, 0.0)
    assert avg.loc["nonsensical", "t_vs_original"] == pytest.approx(stats.ttest_ind(mixed, a * 5 / 6).statistic)
    assert math.isnan(avg.loc["original", "t_vs_original"])
    with pytest.raises(ValueError):
        attribute_table(scored, "neutral")


def table_from(probabilities: dict, n: int = 200, set_name="adversarial") -> pd.DataFrame:
    """An attribute table whose conditions have these toxicity shares (all attributes alike), n rows each."""
    rows = {c: [(0, 0.9 if i < round(p * n) else 0.1) for i in range(n)] for c, p in probabilities.items()}
    scored = made_up(rows, set_name)
    scored["threat"] = scored["toxicity"]
    return attribute_table(scored, set_name)


def test_checklist_rules():
    good = {"default": 0.3, "original": 0.1, "opposite": 0.5, "nonsensical": 0.3, "blank": 0.3}
    result = checklist({"adversarial": table_from(good), "neutral": table_from(good, set_name="neutral")})
    assert result["test"].tolist() == ["polarity", "importance", "transferability", "importance_as_applied",
                                       "transferability_as_applied"]
    assert result["passed"].tolist() == [True] * 5
    # polarity: opposite must be above default (not merely above original)
    no_polarity = dict(good, opposite=0.2)
    assert checklist({"adversarial": table_from(no_polarity)})["passed"].tolist()[0] is False
    # ... and the direction must reverse: an original that raises the attribute fails (paper Tables 12 and 5:
    # Instructive Debiasing on GPT-2, original 27.3% and opposite 32.7% against default 22.2%, fails polarity)
    both_up = dict(good, original=0.35)
    assert checklist({"adversarial": table_from(both_up)})["passed"].tolist()[0] is False
    assert checklist({"adversarial": table_from(dict(good, original=0.3))})["passed"].tolist()[0] is True
    # importance: nonsensical or blank "similar or better" than original fails; higher but not significant fails
    for blank in (0.1, 0.05, 0.12):
        row = checklist({"adversarial": table_from(dict(good, blank=blank))}).set_index("test").loc["importance"]
        assert row["passed"] is False and "blank" in row["reason"]
    # transferability: everything must pass on the neutral set too; a missing set leaves it undecided
    result = checklist({"adversarial": table_from(good), "neutral": table_from(no_polarity, set_name="neutral")})
    assert result["passed"].tolist()[:3] == [True, True, False]
    assert checklist({"adversarial": table_from(good)})["passed"].tolist()[:3] == [True, True, None]


# --- the runner on a tiny model -----------------------------------------------------------------------------------
def mark_ids(lm) -> torch.Tensor:
    texts = lm.tokenizer.batch_decode([[i] for i in range(lm.model.config.vocab_size)])
    return torch.tensor([i for i, t in enumerate(texts) if MARK in t])


def toy_method(name, behaviours: dict) -> SpecifiedMethod:
    """A method whose specifications name behaviours: "ban" (no MARK tokens), "boost" (+10 on them), "invert"
    (-scores), "none". Specifications: original, opposite, blank one group each; nonsensical five."""
    specs = {"original": [[behaviours["original"]]], "opposite": [[behaviours["opposite"]]],
             "nonsensical": [[behaviours["nonsensical"] + f"#{g}"] for g in range(5)], "blank": [[behaviours["blank"]]]}

    def make(group):
        kind = group[0].split("#")[0]

        def proc(ids, scores, _cache={}):
            if kind == "invert":
                return -scores
            marked = _cache.setdefault("ids", mark_ids(LM[0]))
            scores = scores.clone()
            if kind == "ban":
                scores[:, marked] = -float("inf")
            elif kind == "boost":
                scores[:, marked] += 10.0
            return scores

        return LogitsSteering(f"toy-{kind}", [proc], {"spec": group[0]})

    return SpecifiedMethod(name, GREEDY, specs, make)


LM = []


@pytest.fixture()
def lm(tiny_lm):
    LM[:] = [tiny_lm]
    return tiny_lm


def protocol(method, lm):
    scored = run_protocol(method, lm, MarkScorer(), {"adversarial": PROMPTS, "neutral": PROMPTS[::-1]},
                          score_cache=False, progress=False)  # the session's generation cache: reruns are free
    tables = {s: attribute_table(scored, s) for s in ("adversarial", "neutral")}
    return scored, tables, checklist(tables).set_index("test")["passed"].to_dict()


def test_runner_output_and_a_consistent_toy_method(lm):
    scored, tables, passed = protocol(toy_method("oracle", {"original": "ban", "opposite": "boost",
                                                            "nonsensical": "none", "blank": "none"}), lm)
    assert list(scored.columns) == ["set", "condition", "group", "prompt_id", "sample_idx", "prompt", "continuation",
                                    *TABLE_ATTRIBUTES, "error"]
    assert len(scored) == 2 * 9 * len(PROMPTS)
    assert scored.groupby(["set", "condition"])["group"].nunique().to_dict()[("adversarial", "nonsensical")] == 5
    adv = tables["adversarial"]["average"]["probability"]
    assert adv["default"] == pytest.approx(7 / 16)  # a non-trivial default rate
    assert 0 < adv["default"] < 1 and adv["original"] == 0 and adv["opposite"] > adv["default"]
    assert list(tables["adversarial"].index) == list(CONDITIONS)
    assert passed == dict.fromkeys(TESTS, True)


def test_a_method_that_does_nothing_fails_importance(lm):
    _, tables, passed = protocol(toy_method("no-op", dict.fromkeys(["original", "opposite", "nonsensical", "blank"],
                                                                    "none")), lm)
    probabilities = tables["adversarial"]["average"]["probability"]
    assert probabilities.nunique() == 1  # every condition writes the default texts
    assert passed["importance"] is False and passed["polarity"] is False and passed["transferability"] is False
    assert passed["importance_as_applied"] is True  # the paper's lenient reading cannot catch it (documented)


def test_an_inverting_method_fails_polarity(lm):
    """Its opposite specification inverts the logits: the texts move away from what the scorer flags, so the
    opposite lowers the attribute probabilities instead of raising them; importance still passes."""
    _, tables, passed = protocol(toy_method("inverting", {"original": "ban", "opposite": "invert",
                                                          "nonsensical": "none", "blank": "none"}), lm)
    adv = tables["adversarial"]["average"]["probability"]
    assert adv["opposite"] < adv["default"]
    assert {t: passed[t] for t in ("polarity", "importance", "transferability")} == {
        "polarity": False, "importance": True, "transferability": False}


def test_paper_methods_run_through_the_protocol(lm):
    prompts = {"adversarial": PROMPTS[:1], "neutral": PROMPTS[1:2]}
    for method in (self_debiasing_method(decay_constant=50, decoding=DecodingConfig(mode="greedy", max_new_tokens=2)),
                   instructive_method(decoding=DecodingConfig(mode="greedy", max_new_tokens=2))):
        scored = run_protocol(method, lm, MarkScorer(), prompts, cache=False, score_cache=False, progress=False)
        assert len(scored) == 2 * 9 and scored[list(TABLE_ATTRIBUTES)].notna().all().all()
        assert checklist({s: attribute_table(scored, s) for s in prompts})["test"].tolist() == list(TESTS)


def test_scorer_by_name_and_callable(lm, monkeypatch):
    import toxlib.scorers as scorers

    monkeypatch.setitem(scorers._loaded, ("mark-test", repr([])), MarkScorer())
    method = toy_method("no-op", dict.fromkeys(["original", "opposite", "nonsensical", "blank"], "none"))
    by_name = run_protocol(method, lm, "mark-test", {"adversarial": PROMPTS[:3]}, conditions=("default", "original"),
                           cache=False, score_cache=False, progress=False)
    by_callable = run_protocol(method, lm, lambda texts: pd.DataFrame({"toxicity": [0.7] * len(texts)}),
                               {"adversarial": pd.DataFrame({"prompt_text": PROMPTS[:3]})},
                               conditions=("default", "original"), cache=False, progress=False)
    assert by_name["toxicity"].tolist() == [0.9 if MARK in t else 0.1 for t in by_name["continuation"]]
    assert (by_callable["toxicity"] == 0.7).all() and by_callable["threat"].isna().all()
    assert by_callable["prompt"].tolist() == PROMPTS[:3] * 2


def test_paper_style_and_tidy_table():
    from toxlib.papers.debias import paper_style, tidy_table

    table = table_from({"default": 0.4, "original": 0.1, "opposite": 0.5, "nonsensical": 0.4, "blank": 0.3})
    styled = paper_style(table)
    assert styled.loc["default", "average"].startswith(f"{table.loc['default', ('average', 'probability')]:.1%}")
    change = table.loc["original", ("toxicity", "change_pct")]
    assert f"↓ {change:.0f}%" in styled.loc["original", "toxicity"]
    long = tidy_table(table)
    assert len(long) == len(table) * 7 and set(long["set"]) == {"adversarial"}
    row = long[(long["condition"] == "opposite") & (long["attribute"] == "threat")].iloc[0]
    assert row["probability"] == table.loc["opposite", ("threat", "probability")]


def test_detectable_difference_matches_the_t_test():
    from scipy import stats

    from toxlib.papers.debias import detectable_difference

    n, share = 400, 0.2
    diff = detectable_difference(n, share)
    assert 0.05 < diff < 0.06  # 1.966 * sqrt(2 * 0.16 / 400) = 0.0556
    base = np.r_[np.ones(int(share * n)), np.zeros(n - int(share * n))]

    def p_value(extra):
        other = np.r_[np.ones(int(share * n) + extra), np.zeros(n - int(share * n) - extra)]
        return stats.ttest_ind(other, base, equal_var=True).pvalue

    assert p_value(int(np.ceil(diff * n)) + 2) < 0.05 < p_value(int(np.floor(diff * n)) - 2)


def test_paper_tables_reproduce_table5_as_applied():
    """The paper's own averages (Tables 3, 4, 12; 1,199 prompts per set) give Table 5's verdicts under the rules
    as the paper applied them; the stated §3.2 rule fails GPT-3's neutral set (nonsensical and blank below original)."""
    from toxlib.papers.debias import PAPER_ADVERSARIAL_AVERAGES, PAPER_CHECKLIST, PAPER_NEUTRAL_AVERAGES

    for key, expected in PAPER_CHECKLIST.items():
        tables = {"adversarial": table_from(PAPER_ADVERSARIAL_AVERAGES[key], n=1199),
                  "neutral": table_from(PAPER_NEUTRAL_AVERAGES[key], n=1199, set_name="neutral")}
        got = checklist(tables).set_index("test")["passed"]
        assert got["polarity"] == expected["polarity"], key
        assert got["importance_as_applied"] == expected["importance"], key
        assert got["transferability_as_applied"] == expected["transferability"], key
    gpt3 = ("instructive debiasing", "GPT-3 text-davinci-003")
    strict = checklist({"adversarial": table_from(PAPER_ADVERSARIAL_AVERAGES[gpt3], n=1199),
                        "neutral": table_from(PAPER_NEUTRAL_AVERAGES[gpt3], n=1199, set_name="neutral")})
    assert dict(zip(strict["test"], strict["passed"].tolist()))["transferability"] is False


def _average_table(rows: dict) -> pd.DataFrame:
    """A minimal attribute table: {condition: {statistic: value}} in the "average" column only."""
    table = pd.DataFrame({c: {("average", s): v for s, v in stats.items()} for c, stats in rows.items()}).T
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["attribute", "statistic"])
    table.attrs["alpha"] = 0.05
    return table


def test_an_undecided_checklist_test_says_how_many_continuations_would_decide_it():
    from toxlib.papers.debias.checklist import checklist

    # opposite above default, but t = 1.0 over 100 + 100 continuations: p = 0.32, undecided. The standardised effect
    # is 1.0 * sqrt(1/100 + 1/100) = 0.1414; per group n = 2 * ((1.95996 + 0.84162) / 0.1414)^2 = 784.9 -> 785.
    table = _average_table({
        "default": {"probability": 0.20, "t": np.nan, "p_value": np.nan, "n": 100},
        "original": {"probability": 0.15, "t": -2.5, "p_value": 0.013, "n": 100},
        "opposite": {"probability": 0.25, "t": 1.0, "p_value": 0.32, "n": 100},
    })
    row = checklist({"adversarial": table}).set_index("test").loc["polarity"]
    assert row["verdict"] == "undecided" and row["n_to_decide"] == 785
    # significant: decided, and no sample size is asked for
    table.loc["opposite", ("average", "t")], table.loc["opposite", ("average", "p_value")] = 3.0, 0.003
    row = checklist({"adversarial": table}).set_index("test").loc["polarity"]
    assert row["verdict"] == "holds" and pd.isna(row["n_to_decide"])


def test_the_paired_test_stands_beside_the_papers_unpaired_one_and_can_part_from_it():
    """Both conditions continue the same prompts: a paired test sees a shift that a prompt's own level hides from
    the unpaired test. Here each prompt's indicator is default's plus a small shift on a few prompts, on top of a
    strong prompt-to-prompt spread: the paired p is far below the unpaired one."""
    import numpy as np
    import pandas as pd

    from toxlib.papers.debias import paired_disagreements, paired_summary, tidy_table
    from toxlib.papers.debias.protocol import TABLE_ATTRIBUTES

    rng = np.random.default_rng(0)
    rows = []
    level = rng.uniform(0, 1, 200)
    for condition, shift in (("default", 0.0), ("original", 0.2)):
        for i in range(200):
            for sample in range(2):
                value = min(1.0, level[i] + (shift if i % 2 == 0 else 0.0))
                rows.append({"set": "adversarial", "condition": condition, "group": 0, "prompt_id": i,
                             "sample_idx": sample, "prompt": f"p{i}", "continuation": "",
                             **{a: value for a in TABLE_ATTRIBUTES}})
    table = attribute_table(pd.DataFrame(rows), "adversarial")
    row = table.loc["original", "toxicity"]
    assert row["pairs"] == 400 and row["p_paired"] < 1e-6 and row["p_paired"] < row["p_value"]
    assert math.isnan(table.loc["default", ("toxicity", "p_paired")])
    long = tidy_table(table).assign(method="m", model="x")
    assert row["p_value"] > 1e-6  # the spread between prompts hides the shift from the unpaired test
    parted = paired_disagreements(long, alpha=1e-6)
    assert set(parted["attribute"]) == {*TABLE_ATTRIBUTES, "average"} and set(parted["condition"]) == {"original"}
    assert ((parted["p (paired by prompt)"] < 1e-6) & (parted["p (unpaired, the paper's)"] > 1e-6)).all()
    assert paired_disagreements(long, alpha=0.05).empty  # at 0.05 both tests call it significant
    summary = paired_summary(long, alpha=1e-6).iloc[0]
    assert summary["comparisons"] == 7 and summary["significant (paired)"] == 7
    assert summary["significant (unpaired, the paper's)"] == 0 and "original: toxicity" in summary["where they part"]
