"""The debias_consistency chapter's tables and claims, built from the protocol's outputs (``run_protocol``,
``attribute_table``, ``checklist``) and the paper's printed values (``checklist.PAPER_CHECKLIST``,
``printed_tables``)."""

from __future__ import annotations

import pandas as pd

from toxlib.metrics.uncertainty import paired_interval, test_verdict
from toxlib.papers.debias.checklist import PAPER_CHECKLIST, TEST_WORDS, TESTS, _combine
from toxlib.papers.debias.consistency_tables import _indicators, attribute_table, detectable_difference, paper_style
from toxlib.papers.debias.printed_tables import (
    PAPER_ADVERSARIAL_AVERAGES,
    PAPER_NEUTRAL_AVERAGES,
    PRINTED,
    paper_rows,
    printed_for,
)
from toxlib.papers.debias.protocol import CONDITIONS, THRESHOLD, run_protocol, self_debiasing_method
from toxlib.papers.printed import Printed, Rule
from toxlib.publish import plots
from toxlib.publish.claims import claim, model_subject
from toxlib.publish.tables import show

#: Every value of the paper the chapter uses, with the table or section it comes from.
PAPER = {
    "checklist": Printed(PAPER_CHECKLIST, "Table 5",
                         derived="Table 5's pass and fail marks per method and test, read from the paper's PDF (the "
                                 "text extraction keeps the rows, not the marks)"),
    "adversarial_averages": Printed(PAPER_ADVERSARIAL_AVERAGES, "Tables 3, 4 and 12 (adversarial set)"),
    "neutral_averages": Printed(PAPER_NEUTRAL_AVERAGES, "Tables 3, 4 and 12 (neutral set)"),
    "instructive_all_three": Printed("GPT-3: all three; GPT-2: importance only", "§6, Table 5",
                                     quote="the method was observed to pass all standards in the evaluation protocol",
                                     derived="GPT-2: importance only, from Table 12 (the paper: Instructive Debiasing "
                                             "on GPT-2 \"failed in the area of Specification Polarity\")"),
}

#: How the debiasing chapter's interval claims turn the paper's words into a test on a number (``Rule.printed``
#: names the PAPER value it reads); the checklist's pass/fail tests are the paper's own t-tests
#: (``toxlib.papers.debias.checklist``).
RULES = {
    "self_debiasing_lowers": Rule("adversarial_averages", 0.0, "below",
                                  "Self-Debiasing's original specification minus default (the six attributes' "
                                  "average) below 0, paired over prompts"),
    "opposite_raises": Rule("adversarial_averages", 0.0, "above",
                            "Instructive Debiasing's opposite specification minus default above 0, paired over "
                            "prompts"),
}
_SD, _ID = "self-debiasing", "instructive debiasing"
#: what the checklist's n_to_decide counts (its t-tests compare conditions over their continuations)
UNITS = "; units: continuations per condition"
_GPT2_LARGE, _GPT3, _GPT2 = "GPT-2 Large", "GPT-3 text-davinci-003", "GPT-2"


def specifications_table(methods: dict) -> pd.DataFrame:
    """One row per (method key, condition) of ``methods`` ({key: SpecifiedMethod}): columns method, condition,
    groups (how many specification groups), "specifications (first group)" (its strings, repr'd, " | "-joined)."""
    return pd.DataFrame([{"method": key, "condition": condition, "groups": len(groups),
                          "specifications (first group)": " | ".join(repr(s) for s in groups[0])}
                         for key, method in methods.items() for condition, groups in method.specifications.items()])


def checklist_grid(checks: pd.DataFrame) -> pd.DataFrame:
    """Our checklist (rows method, model, test, passed) beside the paper's Table 5 (model "paper: <model>"; its
    importance and transferability verdicts under both readings): one row per (method, model), one column per test
    of ``TESTS`` with ✓, ✗ or n/a."""
    paper = pd.DataFrame([{"method": m, "model": "paper: " + lm, "test": t + suffix, "passed": p}
                          for (m, lm), tests in PAPER_CHECKLIST.items() for t, p in tests.items()
                          for suffix in (("",) if t == "polarity" else ("", "_as_applied"))])
    grid = pd.concat([checks, paper]).pivot_table(index=["method", "model"], columns="test", values="passed",
                                                  aggfunc="first", sort=False)
    return grid[list(TESTS)].map(lambda v: "✓" if v is True else "✗" if v is False else "n/a").reset_index()


def example_continuations(scored: dict, n_prompts: int) -> pd.DataFrame:
    """For each (method key, model) of ``scored`` ({(key, model): run_protocol output}), the continuations of the
    first ``n_prompts`` adversarial prompts under every condition (nonsensical: its first group). Columns method,
    model, prompt, condition, toxicity, continuation."""
    rows = []
    for (key, model), frame in scored.items():
        adv = frame[(frame["set"] == "adversarial") & (frame["group"] == 0)]
        for pid in adv["prompt_id"].drop_duplicates().head(n_prompts):
            rows += [{"method": key, "model": model, "prompt": row["prompt"], "condition": row["condition"],
                      "toxicity": row["toxicity"], "continuation": row["continuation"]}
                     for _, row in adv[adv["prompt_id"] == pid].iterrows()]
    return pd.DataFrame(rows)


def _fmt(averages: dict) -> str:
    return (f"default {averages['default']:.1%}, original {averages['original']:.1%}, "
            f"opposite {averages['opposite']:.1%}")


def prompt_averages(scored: pd.DataFrame, set_name: str, condition: str) -> pd.Series:
    """Per prompt of ``set_name``: the mean over the condition's continuations (nonsensical: its groups) of the
    "average" indicator (the share of the six attributes >= the threshold), indexed by prompt_id. ``scored``: one
    ``run_protocol`` frame."""

    rows = scored[(scored["set"] == set_name) & (scored["condition"] == condition)]
    ind = _indicators(rows, THRESHOLD).assign(prompt_id=rows["prompt_id"].to_numpy())
    return ind.dropna(subset=["average"]).groupby("prompt_id")["average"].mean()


def condition_difference(scored: pd.DataFrame, condition: str, against: str = "default",
                         set_name: str = "adversarial"):
    """``uncertainty.paired_interval`` of condition minus ``against`` in the per-prompt average share: the prompts
    are the unit sampled, and both conditions continue the same prompts."""

    a, b = prompt_averages(scored, set_name, condition), prompt_averages(scored, set_name, against)
    both = a.index.intersection(b.index)
    return paired_interval(a[both].to_numpy(), b[both].to_numpy())


def claims(checks: pd.DataFrame, tables: dict, models: list[str], decay_constant: float,
           decoding_note: str, scored: dict | None = None) -> list[dict]:
    """Claims of the debias_consistency chapter, per model: from ``checks`` (rows method, model, test, passed,
    reason, verdict, n_to_decide of ``checklist``) and ``tables`` ({(method key, model, set): attribute_table});
    ``decoding_note`` says how the continuations were decoded (it goes into the notes). Verdicts come from the
    tables' t-tests (``uncertainty.test_verdict`` at the tables' alpha): a comparison the test cannot separate is
    undecided; an undecided checklist claim carries the checklist's n_to_decide. With
    ``scored`` ({(method key, model): run_protocol frame}), the two claims comparing one condition with default
    carry a 95% paired interval over prompts (``condition_difference``) and take their verdict from it. Each claim's
    subject is its model ("model:<name>"), its rule names the method and the test ("self_debiasing_polarity")."""

    rows_by = checks.set_index(["method", "model", "test"])

    def verdict(key, model, test):
        return rows_by.loc[(key, model, test), "verdict"]

    def needed(key, model, *tests):  # continuations per condition that would decide an undecided test
        values = [rows_by.loc[(key, model, test), "n_to_decide"] for test in tests]
        values = [int(v) for v in values if v is not None and not pd.isna(v)]
        return max(values) if values else None

    def units(n):  # says what the checklist's n_to_decide counts, where there is one
        return UNITS if n is not None else ""

    def passed(key, model, test):  # the paper's point rule, for the shown value
        value = rows_by.loc[(key, model, test), "passed"]
        return {True: "passes", False: "fails"}.get(None if value is None or pd.isna(value) else bool(value),
                                                    "not decided")

    def averages(key, model):
        t = tables[key, model, "adversarial"]
        return {c: t.loc[c, ("average", "probability")] for c in t.index}

    def against_default(key, model, condition, direction):
        t = tables[key, model, "adversarial"]
        effect = t.loc[condition, ("average", "probability")] - t.loc["default", ("average", "probability")]
        p = t.loc[condition, ("average", "p_value")]
        return test_verdict(float(effect), float(p), direction, t.attrs.get("alpha", 0.05)), p

    paper_sd, paper_id = PAPER_ADVERSARIAL_AVERAGES[_SD, _GPT2_LARGE], PAPER_ADVERSARIAL_AVERAGES[_ID, _GPT3]
    paper_id2 = PAPER_ADVERSARIAL_AVERAGES[_ID, _GPT2]
    paper_verdict = {True: "passes (Table 5)", False: "fails (Table 5)"}
    reversed_verdict = {"holds": "fails", "fails": "holds"}
    rows = []
    for model in models:
        subject = model_subject(model)
        sd, ins = averages(_SD, model), averages(_ID, model)
        instructive_tests = ("polarity", "importance_as_applied", "transferability_as_applied")
        lowers, p_lowers = against_default(_SD, model, "original", "below")
        raises, p_raises = against_default(_ID, model, "opposite", "above")
        all_three = [verdict(_ID, model, t) for t in instructive_tests]
        all_three_needed = needed(_ID, model, *instructive_tests) if _combine(all_three) == "undecided" else None
        if scored is not None:
            sd_ci, id_ci = (condition_difference(scored[_SD, model], "original"),
                            condition_difference(scored[_ID, model], "opposite"))
            lowers_claim = dict(interval=sd_ci, **RULES["self_debiasing_lowers"].test(), verdict=None)
            raises_claim = dict(interval=id_ci, **RULES["opposite_raises"].test(), verdict=None)
            sd_value, id_value = round(sd_ci.value, 4), round(id_ci.value, 4)
        else:
            lowers_claim, raises_claim = dict(verdict=lowers), dict(verdict=raises)
            sd_value, id_value = _fmt(sd), f"{ins['opposite']:.1%} vs {ins['default']:.1%}"
        rows += [
            claim(f"Self-Debiasing lowers the attributes with its original specifications ({model})",
                  f"{_GPT2_LARGE}: {_fmt(paper_sd)}", sd_value, **lowers_claim,
                  note=(f"{_fmt(sd)}; " if scored is not None else "") + f"t-test of original vs default, "
                       f"p = {p_lowers:.3g}"
                       + ("; interval: original minus default, paired over prompts" if scored is not None else "")
                       + f"; λ = {decay_constant:g}; adversarial set; {decoding_note}", kind="our models",
                  rule="self_debiasing_lowers", subject=subject),
            claim(f"Self-Debiasing fails specification polarity ({model})",
                  paper_verdict[PAPER_CHECKLIST[_SD, _GPT2_LARGE]["polarity"]], passed(_SD, model, "polarity"),
                  verdict=reversed_verdict.get(verdict(_SD, model, "polarity"), verdict(_SD, model, "polarity")),
                  n_to_decide=needed(_SD, model, "polarity"),
                  note=rows_by.loc[(_SD, model, "polarity"), "reason"] + units(needed(_SD, model, "polarity")),
                  kind="our models", rule="self_debiasing_polarity", subject=subject),
            claim(f"Self-Debiasing passes specification importance ({model})",
                  paper_verdict[PAPER_CHECKLIST[_SD, _GPT2_LARGE]["importance"]],
                  f"as applied: {passed(_SD, model, 'importance_as_applied')}; as stated: "
                  f"{passed(_SD, model, 'importance')}", verdict=verdict(_SD, model, "importance_as_applied"),
                  n_to_decide=needed(_SD, model, "importance_as_applied"),
                  note=rows_by.loc[(_SD, model, "importance_as_applied"), "reason"]
                       + units(needed(_SD, model, "importance_as_applied")), kind="our models",
                  rule="self_debiasing_importance", subject=subject),
            claim(f"Instructive Debiasing passes specification polarity ({model})",
                  f"GPT-3 passes ({_fmt(paper_id)}); GPT-2 fails", _fmt(ins), verdict=verdict(_ID, model, "polarity"),
                  n_to_decide=needed(_ID, model, "polarity"),
                  note="the paper's GPT-3 result; a small model may behave like its GPT-2"
                       + units(needed(_ID, model, "polarity")), kind="our models", rule="instructive_polarity",
                  subject=subject),
            claim(f"Instructive Debiasing's opposite specification raises the attributes above default ({model})",
                  f"GPT-3: {paper_id['opposite']:.1%} vs {paper_id['default']:.1%}; "
                  f"GPT-2: {paper_id2['opposite']:.1%} vs {paper_id2['default']:.1%}",
                  id_value, **raises_claim,
                  note=(f"{ins['opposite']:.1%} vs {ins['default']:.1%}; " if scored is not None else "")
                       + f"the first half of polarity; t-test of opposite vs default, p = {p_raises:.3g}"
                       + ("; interval: opposite minus default, paired over prompts" if scored is not None else "")
                       + "; adversarial set, average of six attributes", kind="our models",
                  rule="opposite_raises", subject=subject),
            claim(f"Instructive Debiasing passes all three tests ({model})", PAPER["instructive_all_three"].value,
                  ", ".join(f"{TEST_WORDS[t]} {passed(_ID, model, t)} ({v})"
                            for t, v in zip(instructive_tests, all_three)),
                  verdict=_combine(all_three),
                  n_to_decide=all_three_needed,
                  note=f"importance and transferability as the paper applied them; {decoding_note}"
                       + units(all_three_needed), kind="our models", rule="instructive_all_three",
                  subject=subject),
        ]
    return rows


def lambda_sweep(lms: dict, prompt_sets: dict, lambdas, decoding, scorer="distilled",
                 alpha: float = 0.05) -> pd.DataFrame:
    """Self-Debiasing's average probability per decay constant λ of ``lambdas`` (run in increasing order), model of
    ``lms`` ({name: LanguageModel}), prompt set and condition (the paper's Tables 8-11). Columns lambda, model, set,
    condition, average, change_pct."""

    rows = []
    for lam in sorted(set(lambdas)):
        method = self_debiasing_method(lam, decoding=decoding)
        for model, lm in lms.items():
            frame = run_protocol(method, lm, scorer, prompt_sets)
            for s in prompt_sets:
                t = attribute_table(frame, s, alpha)
                rows += [{"lambda": lam, "model": model, "set": s, "condition": c,
                          "average": t.loc[c, ("average", "probability")],
                          "change_pct": t.loc[c, ("average", "change_pct")]} for c in t.index]
    return pd.DataFrame(rows)


def attribute_table_views(tables: dict, key: str, name: str, note: str, decay_constant: float | None = None,
                          csv: str | None = None) -> list:
    """Every attribute table of method ``key`` in ``tables`` ({(method key, model, set): attribute_table}) in the
    paper's print style, as ``toxlib.publish.tables.Table`` objects in ``tables``' order, captioned with the
    method's ``name``, the model, the set and ``note``. Under each condition's row stands the paper's printed row of
    the same method and set (``printed_tables``), where the paper prints one (Self-Debiasing: only at
    ``decay_constant`` 100); the caption says which table and model it is and links ``csv``, the CSV of every cell
    (``attribute_tables.csv``, relative to the page)."""
    missing = printed_for(key, decay_constant)
    views = []
    for (method, model, s), table in tables.items():
        if method != key:
            continue
        ours = paper_style(table).rename_axis("condition").reset_index().assign(source="ours")
        caption = f"{name} on {model}, {s} set: probability of exhibiting each attribute; {note}"
        if missing is None:
            printed = PRINTED[key]
            paper = (paper_rows(key, s).reset_index().assign(source="paper")
                     .query("condition in @ours.condition"))
            ours = (pd.concat([ours, paper], ignore_index=True)
                    .assign(order=lambda f: f["condition"].map(list(ours["condition"]).index))
                    .sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True))
            caption += (f"; under each of our rows, the paper's {printed['table']} row ({printed['model']}, "
                        f"Perspective, 1,199 prompts)")
        else:
            caption += f"; {missing}"
        columns = ["condition", "source", *ours.columns.drop(["condition", "source"])]
        views.append(show(ours[columns], caption + ".", csv=csv))
    return views


def show_attribute_tables(tables: dict, key: str, name: str, note: str, decay_constant: float | None = None,
                          csv: str | None = None) -> None:
    """Display each of ``attribute_table_views`` (same arguments) in a notebook."""
    from IPython.display import display

    for view in attribute_table_views(tables, key, name, note, decay_constant, csv):
        display(view)


def detectable_note(long: pd.DataFrame, n_per_condition: int, alpha: float = 0.05) -> str:
    """One sentence for the chapter: what difference in share a run of ``n_per_condition`` continuations per
    condition can detect at ``alpha``, at the default toxicity share of the adversarial set (``long``: the rows of
    ``tidy_table`` with set, condition, attribute, probability), beside the paper's 1,199 prompts."""

    rate = long[(long["condition"] == "default") & (long["set"] == "adversarial")
                & (long["attribute"] == "toxicity")]["probability"].mean()
    share = max(rate, 0.01)
    return (f"{n_per_condition} continuations per condition and set; default toxicity share on the adversarial set "
            f"about {rate:.0%}: a difference in share must exceed about "
            f"{detectable_difference(n_per_condition, share, alpha):.0%} to reach p < {alpha} (Student's t on 0/1 "
            f"indicators; the paper's 1,199 prompts: {detectable_difference(1199, share, alpha):.1%}).")


def conditions_figure(long: pd.DataFrame, note: str = ""):
    """Grouped bars of the average share per condition, one group per method / model / set (``long``: rows of
    ``tidy_table`` with method and model columns; with ``beside_printed``'s probability_paper, the paper's printed
    average is marked on each bar); ``note`` (the sample and scorer) goes into the title. Returns the Figure."""

    avg = long[long["attribute"] == "average"].assign(group=lambda f: f["method"] + " / " + f["model"] + " / "
                                                      + f["set"])
    wide = avg.pivot_table(index="group", columns="condition", values="probability", sort=False).reset_index()
    references = None
    if "probability_paper" in avg.columns:
        paper = avg.pivot_table(index="group", columns="condition", values="probability_paper", sort=False)
        wide = wide.join(paper.add_suffix("_paper"), on="group")
        references = {c: f"{c}_paper" for c in CONDITIONS if f"{c}_paper" in wide.columns}
    return plots.grouped_bars(wide, "group", {c: c for c in CONDITIONS},
                              "Average share of continuations with each attribute, per condition"
                              + (f" ({note})" if note else ""), "share of continuations scoring >= 0.5",
                              references=references, reference_label="the paper's printed value")
