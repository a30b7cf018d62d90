"""Exercise solutions quote the committed run. Solutions whose figures are pasted by myst-nb glue (``GLUED``) hold no
typed result, and every value their roles name was glued by the committed run. The others, not yet converted: each
checked solution's figures, recomputed here from the CSVs under data/results, must appear in its text as printed.

A re-run that moves a figure makes its test fail until the solution is updated (the fix: edit the solution's
markdown cell in the chapter, then rebuild the book). Solutions that quote a run the book does not commit (a smoke
run with another scorer, a re-run with another parameter) are not checked here.
"""
from __future__ import annotations

import re

import nbformat
import pandas as pd
import pytest

from toxlib.store import paths

ROOT = paths.project_root()
RESULTS = ROOT / "data" / "results"


def solution_text(chapter: str, label: str) -> str:
    """The body of solution ``label`` in notebooks/<chapter>.ipynb (the markdown after its directive line)."""
    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    for cell in nb.cells:
        match = re.search(r"^`{3,}\{solution\} " + re.escape(label) + r"\n(.*)", cell.source, re.MULTILINE | re.DOTALL)
        if cell.cell_type == "markdown" and match:
            return " ".join(match.group(1).split())  # line breaks in the markdown are spaces in the text
    raise LookupError(f"no solution {label} in notebooks/{chapter}.ipynb")


def f2(x: float) -> str:
    return f"{x:.2f}"


def f3(x: float) -> str:
    return f"{x:.3f}"


def pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"


def count(x: float) -> str:
    return f"{int(round(x)):,}"


# ------------------------------------------------------------------ one function per solution: the figures it quotes


def minus(x: float, digits: int) -> str:
    """A signed figure as the chapters print it, with a true minus sign."""
    return f"{x:.{digits}f}".replace("-", "\u2212")


def generation_top_k() -> list[str]:
    summary = pd.read_csv(RESULTS / "generation" / "nucleus_summary.csv").set_index("model")
    over = 1 - summary["<= 256"]
    assert (summary["same_as_transformers"] == 1.0).all(), "the solution says every inspected step agrees"
    return [f"{round(100 * over['smollm2-135m'], 2):g}% of SmolLM2's steps",
            f"{round(100 * over['gemma3-270m'], 2):g}% of Gemma's",
            f"reach {count(summary.loc['smollm2-135m', 'max_size'])} and "
            f"{count(summary.loc['gemma3-270m', 'max_size'])}"]


def generation_top_p() -> list[str]:
    """The committed top-p 0.9 side of the comparison (the 0.5 side is a re-run the book does not keep)."""
    summary = pd.read_csv(RESULTS / "generation" / "nucleus_summary.csv").set_index("model").loc["smollm2-135m"]
    steps = pd.read_csv(RESULTS / "generation" / "nucleus_steps.csv")
    single = (steps.loc[steps["model"] == "smollm2-135m", "nucleus_size"] == 1).mean()
    return [f"instead of {summary['median_size']:g}", f"instead of {count(summary['max_size'])}",
            f"{int(summary['steps'])} inspected", f"against {pct(single)} at 0.9"]


def sass_threshold() -> list[str]:
    """The committed threshold-0.5 side (the 0.3 side is a re-run)."""
    table3 = pd.read_csv(RESULTS / "sass" / "table3.csv").set_index("system").loc["PERSPECTIVE"]
    table6 = pd.read_csv(RESULTS / "sass" / "table6.csv")
    fp = table6[(table6["system"] == "PERSPECTIVE") & (table6["scope"] == "False Positive category")].iloc[0]
    flagged = int(table3["n_pred_pos"])
    true_pos = round(table3["precision"] * flagged)
    return [f"instead of {flagged}", f"from {f3(table3['precision'])}", f"from {f3(table3['recall'])}",
            f"from {f3(table3['f1'])}", f"{fp['n_flagged']} of its {flagged} flags",
            f"from {true_pos} to", f"all {fp['n_both']} comments with a swear word"]


def sass_swear_lists() -> list[str]:
    table6 = pd.read_csv(RESULTS / "sass" / "table6.csv")
    by_list = [part.drop(columns="word_list").reset_index(drop=True) for _, part in table6.groupby("word_list")]
    assert len(by_list) == 2 and by_list[0].equals(by_list[1]), "the solution says every row is identical"
    row = table6[(table6["system"] == "PERSPECTIVE") & (table6["scope"] == "all 250 comments")].iloc[0]
    return [f"the same {row['n_contains']} of the {row['n']} comments",
            f"P(swear | flagged) = {f2(row['p_swear_given_toxic'])}",
            f"swear) = {f2(row['p_toxic_given_swear'])}", f"printed {f2(row['p_swear_given_toxic_paper'])} and "
            f"{f2(row['p_toxic_given_swear_paper'])}", f"({row['n_flagged'] - row['n_both']} of {row['n_flagged']})"]


SOLUTIONS = {
    ("generation", "generation-ex-top-k"): generation_top_k,
    ("generation", "generation-ex-top-p"): generation_top_p,
    ("sass", "sass-ex-threshold"): sass_threshold,
    ("sass", "sass-ex-swear-lists"): sass_swear_lists,
}


@pytest.mark.parametrize("chapter,label", sorted(SOLUTIONS), ids=lambda x: x)
def test_solution_quotes_the_committed_run(chapter, label):
    text = solution_text(chapter, label)
    figures = SOLUTIONS[chapter, label]()
    missing = [figure for figure in figures if figure not in text]
    assert not missing, f"{label} no longer quotes the committed results; recomputed figures not in its text: {missing}"



#: solutions whose numbers are pasted from the computation ({glue:text} roles), so they cannot drift from the run
GLUED = {("rtp_unprompted", "rtp-unprompted-ex-exact"), ("rtp_unprompted", "rtp-unprompted-ex-tail"),
         ("rtp_prompted", "rtp-prompted-ex-k"), ("rtp_prompted", "rtp-prompted-ex-challenging"),
         ("rtp_detox", "rtp-detox-ex-by-hand"), ("rtp_detox", "rtp-detox-ex-dapt"),
         ("debias_consistency", "debias-ex-polarity"), ("debias_consistency", "debias-ex-power"),
         ("safety_score", "safety-score-ex-by-hand"), ("safety_score", "safety-score-ex-scaling"),
         ("safety_score", "safety-score-ex-pvalues"), ("scorers", "scorers-ex-false-positive"),
         ("scorers", "scorers-ex-calibration"), ("datasets", "datasets-ex-threshold"),
         ("datasets", "datasets-ex-correlation")}
#: numbers a glued solution may still spell out: definitions (thresholds, α) and the papers' design (n, k), not
#: results of the run
DEFINITIONS = {"0", "0.5", "0.9", "0.05", "0.75", "22%", "2", "4", "1,000", "1,199", "10,000", "100", "1", "5", "25"}
GLUE_ROLE = re.compile(r"\{glue:text\}`([^`:]+)(?::[^`]*)?`")


def glued_values(chapter: str) -> dict[str, str]:
    """{key: text} of every value the committed notebook glued (myst-nb's scrapbook outputs)."""
    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    return {out["metadata"]["scrapbook"]["name"]: next(iter(out["data"].values()))
            for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
            if "scrapbook" in out.get("metadata", {})}


def typed_numbers(text: str) -> list[str]:
    """The numbers a text spells out itself: outside glue roles, not a figure or table number."""
    text = re.sub(r"\b(?:Figure|Table|§) ?\d+", "", GLUE_ROLE.sub("", text))
    return re.findall(r"(?<![\w^-])\d+(?:,\d{3})*(?:\.\d+)?%?", text)  # not in names: GPT-2, SmolLM2-135M


GLUE_DIRECTIVE = re.compile(r"^`{3,}\{glue:md\} (\S+)", re.MULTILINE)
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_glued_value_the_prose_names_was_glued_by_the_committed_run(chapter):
    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    named = {key for cell in nb.cells if cell.cell_type == "markdown"
             for key in GLUE_ROLE.findall(cell.source) + GLUE_DIRECTIVE.findall(cell.source)}
    missing = named - set(glued_values(chapter))
    assert not missing, f"notebooks/{chapter}.ipynb names glue keys its committed run did not glue: {sorted(missing)}"


@pytest.mark.parametrize("chapter,label", sorted(GLUED), ids=lambda x: x)
def test_a_glued_solution_types_no_result(chapter, label):
    text = solution_text(chapter, label)
    assert GLUE_ROLE.search(text), f"{label} pastes nothing"
    typed = [n for n in typed_numbers(text) if n not in DEFINITIONS]
    assert not typed, f"{label} types numbers that should come from the computation: {typed}"


def test_the_typed_number_check_can_fail():
    text = "At n = 1 (Figure 2) the value is {glue:text}`x` and 0.1355 for the other model (14 of 1,000)."
    found = typed_numbers(text)
    assert [n for n in found if n not in DEFINITIONS] == ["0.1355", "14"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_opens_with_its_findings_box(chapter):
    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    assert nb.cells[0].source.startswith("# ")
    assert GLUE_DIRECTIVE.findall(nb.cells[1].source) == [f"{chapter}-findings"], \
        f"{chapter}: the cell after the title should be the findings box pasting {chapter}-findings"
