"""The book's notebooks are narrative, their parameters cell, one call that computes the chapter and calls that show
its parts: a chapter's orchestration lives in its compute function (``Chapter.compute``), where the report card
reuses it without a kernel. Outside the parameters cell a notebook holds at most ``MOST_CONTROL`` loops,
conditionals, function definitions and comprehensions, and no call that reshapes a frame."""

from __future__ import annotations

import ast

import nbformat
import pytest

from toxlib.book_build.book import toc_notebooks
from toxlib.chapters import chapter
from toxlib.store import paths

NOTEBOOKS = {nb.stem: nb for nb in toc_notebooks(paths.project_root())}
MOST_CONTROL = 3
CONTROL = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.IfExp, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.With)
#: pandas calls that reshape or combine frames: a chapter's computation, not its display
RESHAPING = {"concat", "groupby", "merge", "join", "agg", "aggregate", "pivot", "pivot_table", "melt", "stack",
             "unstack", "apply", "assign", "sort_values", "drop_duplicates", "query", "reset_index", "set_index",
             "crosstab", "explode", "transform"}


def orchestration(path) -> list[str]:
    """What a notebook's code cells outside its parameters cell compute rather than show: each loop,
    conditional, definition or comprehension beyond ``MOST_CONTROL``, and every reshaping call."""
    cells = [c for c in nbformat.read(str(path), as_version=4).cells
             if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])]
    tree = ast.parse("\n".join(c.source for c in cells))
    control = [n for n in ast.walk(tree) if isinstance(n, CONTROL)]
    found = [f"line {n.lineno}: {type(n).__name__}" for n in control] if len(control) > MOST_CONTROL else []
    found += [f"line {n.lineno}: .{n.func.attr}(...)" for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in RESHAPING]
    return found


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_a_notebook_shows_what_its_chapter_computes(stem):
    assert orchestration(NOTEBOOKS[stem]) == [], (
        f"{NOTEBOOKS[stem].name} computes in its cells: move it into {chapter(stem).compute} and show the result's "
        "parts (result.show(name))")


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_a_notebook_computes_its_chapter_with_one_call(stem):
    """Its first code cell after the parameters calls ``in_notebook`` with its own name, once in the notebook."""
    cells = [c.source for c in nbformat.read(str(NOTEBOOKS[stem]), as_version=4).cells if c.cell_type == "code"]
    calls = [n for n in ast.walk(ast.parse("\n".join(cells))) if isinstance(n, ast.Call)
             and getattr(n.func, "id", None) == "in_notebook"]
    assert len(calls) == 1 and calls[0].args[0].value == stem, f"{stem}: in_notebook({stem!r}, globals()) once"
    assert chapter(stem).compute, f"{stem}: its declaration names no compute function"


def test_the_orchestration_check_can_fail(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("n = 3", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("t = pd.concat([f for f in frames])\nfor x in t: pass\nif t: pass\n"
                                  "y = 1 if t else 2\ndef g(): pass")])
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    found = orchestration(path)
    assert "line 1: .concat(...)" in found and sum("ListComp" in f or "For" in f or "If" in f for f in found) >= 3
    nb.cells[1].source = "result.show('table3')\nfor name in ('a', 'b'):\n    result.show(name)"
    nbformat.write(nb, path)
    assert orchestration(path) == []  # a loop that only shows is display
