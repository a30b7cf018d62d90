"""Captions as templates (``toxlib.publish.captions``) and the chapters that use them: every caption a chapter
shows comes from its captions module, names a template that exists and has a value for every field, and every
template is shown by its chapter. A chapter's captions are read from its compute function's module (the one its
declaration names, ``Chapter.compute``), where its tables and figures are made."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from toxlib.book_build.book import toc_notebooks
from toxlib.chapters import chapter
from toxlib.publish import escape
from toxlib.publish.captions import Captions, template_fields
from toxlib.store import paths

ROOT = paths.project_root()


def _compute_module(stem: str) -> Path:
    """The source file of the module chapter ``stem``'s declaration names as its compute function's."""
    return Path(importlib.util.find_spec(chapter(stem).compute.partition(":")[0]).origin)


NOTEBOOKS = {nb.stem: _compute_module(nb.stem) for nb in toc_notebooks(ROOT)}
#: the calls that show a table or name a figure, and where their caption or title is: (position, keyword)
CAPTIONED_CALLS = {"publish": (3, "caption"), "show": (1, "caption"), "publish_claims": (2, "caption"),
                   "add_table": (2, "caption"), "add_claims": (1, "caption"), "add_timings": (3, "caption"),
                   "show_claims": (1, "caption"), "grouped_bars": (3, "title"), "histograms": (3, "title"),
                   "box_with_points": (5, "title"), "calibration": (2, "title"), "bootstrap_curves": (2, "title"),
                   "claims_forest": (1, "title"), "conditions_figure": (1, "note")}


# ---------------------------------------------------------------- the template type


def test_a_caption_is_its_template_filled_from_bind_and_call():
    captions = Captions("ch", {"t": "{n:,} prompts, {models}, p = {p:.2f}, {printed}"}, constants={"printed": 327})
    caption = captions.bind(models=["a", "b"], p=0.9)
    assert caption("t", n=1200) == "1,200 prompts, a, b, p = 0.90, 327"
    assert caption("t", n=3, p=0.5) == "3 prompts, a, b, p = 0.50, 327"  # a call's value wins over bind's


def test_an_unknown_caption_a_field_without_value_or_a_stray_value_is_a_clear_error():
    caption = Captions("ch", {"t": "{n} prompts"}).bind()
    with pytest.raises(KeyError, match="no caption 'u'.*'t'"):
        caption("u")
    with pytest.raises(ValueError, match=r"caption 't' of 'ch' needs \['n'\]"):
        caption("t")
    with pytest.raises(ValueError, match=r"caption 't' of 'ch' has no field \['m'\]"):
        caption("t", n=3, m=4)  # a mistyped keyword would silently drop its value
    for broken in ("a { brace", "{} unnamed", "{0} positional", "{x:{width}} nested"):
        with pytest.raises(ValueError, match="not a valid template"):
            Captions("ch", {"t": broken})


def test_template_fields_names_each_field_once_without_its_format():
    assert template_fields("{a} {b:.3f} {a!r} {c.real}") == {"a", "b", "c"}


# ---------------------------------------------------------------- the chapters


def _code(path: Path) -> ast.Module:
    """A compute module's code, or a notebook's code cells (the check's own test writes one)."""
    if Path(path).suffix == ".py":
        return ast.parse(Path(path).read_text())
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    return ast.parse("\n".join(line for line in "\n".join(cells).splitlines() if not line.startswith(("%", "!"))))


def _chapter_captions(tree: ast.Module) -> Captions | None:
    """The ``Captions`` the chapter binds as ``CAPTIONS``: imported from a captions module under that name or as
    ``from toxlib.papers.rtp.captions import PROMPTED as CAPTIONS``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and "captions" in (node.module or "").split(".")[-2:]:
            for alias in node.names:
                if (alias.asname or alias.name) == "CAPTIONS":
                    return getattr(importlib.import_module(node.module), alias.name)
    return None


def _name(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_every_caption_of_a_chapter_comes_from_its_templates(stem):
    tree = _code(NOTEBOOKS[stem])
    captions = _chapter_captions(tree)
    assert captions is not None, (f"{stem}: import CAPTIONS from its paper's captions module "
                                  f"(toxlib.papers.<paper>.captions), toxlib.studies.captions.{stem} or "
                                  f"toxlib.publish.captions.{stem}")
    assert captions.stem == stem
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    binds = [c for c in calls if _name(c) == "bind" and getattr(c.func.value, "id", None) == "CAPTIONS"]
    assert len(binds) == 1, f"{stem}: bind the captions once, after the parameters cell"
    bound = {k.arg for k in binds[0].keywords if k.arg} | set(captions.constants)
    if any(k.arg is None for k in binds[0].keywords):  # bind(**chapter(STEM).current(globals())): every parameter
        bound |= {p.name for p in chapter(stem).parameters}
    used, problems = set(), []
    for call in calls:
        if _name(call) == "caption":
            if not (call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
                problems.append(f"line {call.lineno}: caption(...) needs a template's name as a string literal")
                continue
            name, given = call.args[0].value, {k.arg: k.value for k in call.keywords}
            if name not in captions.templates:
                problems.append(f"no template {name!r}")
                continue
            used.add(name)
            wanted = template_fields(captions.templates[name])
            if wanted - bound - set(given):
                problems.append(f"caption {name!r} has no value for {sorted(wanted - bound - set(given))}")
            if set(given) - wanted:
                problems.append(f"caption {name!r} has no field {sorted(set(given) - wanted)}")
            problems += [f"caption {name!r}: {key} is an f-string; make it a template" for key, value in given.items()
                         if isinstance(value, ast.JoinedStr)]
        if _name(call) in CAPTIONED_CALLS:
            position, keyword = CAPTIONED_CALLS[_name(call)]
            shown = next((k.value for k in call.keywords if k.arg == keyword), None)
            shown = call.args[position] if shown is None and len(call.args) > position else shown
            if shown is not None and not (isinstance(shown, ast.Call) and _name(shown) == "caption"):
                problems.append(f"line {call.lineno}: {_name(call)}'s {keyword} is not caption(...): "
                                f"{ast.unparse(shown)[:80]}")
            elif (_name(call) in ("publish", "add_table") and shown is not None
                  and isinstance(call.args[1 if _name(call) == "publish" else 0], ast.Constant)):
                table = call.args[1 if _name(call) == "publish" else 0].value
                named = shown.args[0].value if shown.args else None
                if table in captions.templates and named != table:
                    problems.append(f"table {table!r} is captioned with caption({named!r})")
    problems += [f"template {name!r} is never shown" for name in sorted(set(captions.templates) - used)]
    assert problems == [], f"{stem}: " + "; ".join(problems)


def test_the_chapter_check_can_fail(tmp_path, monkeypatch):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from toxlib.papers.rtp.captions import PROMPTED as CAPTIONS\ncaption = CAPTIONS.bind(k=25)\n"
        "show(t, 'typed caption')\nresults.publish(S, 'greedy', t, caption('table2', typo=1))\n"
        "plots.grouped_bars(t, 'g', {}, title=f'{k} samples')\nshow(t, caption(name))\n")])
    path = tmp_path / "rtp_prompted.ipynb"
    nbformat.write(nb, path)
    monkeypatch.setitem(NOTEBOOKS, "rtp_prompted", path)
    with pytest.raises(AssertionError) as failure:
        test_every_caption_of_a_chapter_comes_from_its_templates("rtp_prompted")
    message = str(failure.value)
    for expected in ("'typed caption'", "no value for", "never shown", "no field ['typo']", "grouped_bars's title",
                     "table 'greedy' is captioned with caption('table2')", "a template's name as a string literal"):
        assert expected in message, expected


#: a snake_case name in running text (a CSV column, a parameter), not part of a path or a file name
SNAKE_NAME = re.compile(r"(?<![\w/.`-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b(?![/.])")


def snake_names(template: str) -> list[str]:
    """The snake_case names of a caption template that a reader would see as they are: outside the backticks that
    show a name as code (``toxlib.publish.escape.caption``) and outside ``{fields}``."""
    text = re.sub(r"\{[^}]*\}", "", escape.CODE_NAME.sub("", template))
    return SNAKE_NAME.findall(text)


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_every_caption_reads_as_words_or_shows_its_names_as_code(stem):
    captions = _chapter_captions(_code(NOTEBOOKS[stem]))
    if captions is None:
        pytest.skip(f"{stem} binds no captions")
    found = {name: snake_names(text) for name, text in captions.templates.items() if snake_names(text)}
    assert not found, (f"{stem}: captions name columns as code without showing them as code {found}: say the "
                       "table's header, or put the name between backticks")


def test_the_caption_word_check_can_fail():
    assert snake_names("p_paired beside `t_paired`, a {n_total:,} count, data/results/sass_x/") == ["p_paired"]
    assert escape.caption("in `attribute_tables.csv` (`p_value`) <b>") == (
        "in <code>attribute_tables.csv</code> (<code>p_value</code>) &lt;b&gt;")
