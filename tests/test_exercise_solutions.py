"""Exercise solutions quote the run they are shown with. Their figures are pasted by myst-nb glue (``GLUED``: every
checked solution): they hold no typed result, and every value their roles name was glued by the committed run, so
a re-run on another CPU or with other parameters shows its own figures instead of contradicting them. Solutions
quoting a run a chapter does not compute would not be checked here; there are none.
"""
from __future__ import annotations

import re

import nbformat
import pytest

from toxlib.chapters import chapters
from toxlib.store import paths

ROOT = paths.project_root()


def solution_text(chapter: str, label: str) -> str:
    """The body of solution ``label`` in notebooks/<chapter>.ipynb (the markdown after its directive line)."""
    nb = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    for cell in nb.cells:
        match = re.search(r"^`{3,}\{solution\} " + re.escape(label) + r"\n(.*)", cell.source, re.MULTILINE | re.DOTALL)
        if cell.cell_type == "markdown" and match:
            return " ".join(match.group(1).split())  # line breaks in the markdown are spaces in the text
    raise LookupError(f"no solution {label} in notebooks/{chapter}.ipynb")


SOLUTION = re.compile(r"^`{3,}\{solution\} (\S+)", re.MULTILINE)


def solutions() -> list[tuple[str, str]]:
    """(chapter, label) of every solution in the chapters' notebooks (``toxlib.chapters``' pages under notebooks/):
    each is checked, so a new chapter's solutions are too."""
    found = []
    for declared in chapters():
        if declared.page.startswith("notebooks/"):
            nb = nbformat.read(ROOT / declared.page, as_version=4)
            found += [(declared.stem, label) for cell in nb.cells if cell.cell_type == "markdown"
                      for label in SOLUTION.findall(cell.source)]
    return found


#: solutions whose numbers are pasted from the computation ({glue:text} roles), so they cannot drift from the run
GLUED = set(solutions())
#: numbers a glued solution may still spell out: definitions (thresholds, α) and the papers' design (n, k), not
#: results of the run
DEFINITIONS = {"0", "0.5", "0.9", "0.05", "0.75", "22%", "2", "4", "1,000", "1,199", "10,000", "100", "1", "5", "25",
               "256", "2,048", "16,384", "95%"}  # the last: the sampler's top-k ladder, an interval's level
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


def test_every_chapter_with_exercises_has_its_solutions_checked():
    assert len(GLUED) >= 20 and {stem for stem, _ in GLUED} == {
        c.stem for c in chapters() if c.page.startswith("notebooks/") and "{solution}" in (ROOT / c.page).read_text()}


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
