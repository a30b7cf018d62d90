"""Captions as templates (``toxlib.report.captions``) and the chapters that use them: every caption a chapter
shows comes from its captions module, names a template that exists and has a value for every field, and every
template is shown by its chapter."""

from __future__ import annotations

import ast
import importlib

import nbformat
import pytest

from toxlib.build.book import toc_notebooks
from toxlib.report.captions import Captions, fields
from toxlib.store import paths

ROOT = paths.project_root()
NOTEBOOKS = {nb.stem: nb for nb in toc_notebooks(ROOT)}
#: the calls that show a table or figure and where their caption is (positional index)
CAPTIONED_CALLS = {"publish": 3, "show": 1, "publish_claims": 2, "show_claims": 1}


# ---------------------------------------------------------------- the template type


def test_a_caption_is_its_template_filled_from_bind_and_call():
    captions = Captions("ch", {"t": "{n:,} prompts, {models}, p = {p:.2f}, {printed}"}, constants={"printed": 327})
    caption = captions.bind(models=["a", "b"], p=0.9)
    assert caption("t", n=1200) == "1,200 prompts, a, b, p = 0.90, 327"
    assert caption("t", n=3, p=0.5) == "3 prompts, a, b, p = 0.50, 327"  # a call's value wins over bind's


def test_an_unknown_caption_or_a_field_without_value_is_a_clear_error():
    caption = Captions("ch", {"t": "{n} prompts"}).bind()
    with pytest.raises(KeyError, match="no caption 'u'.*'t'"):
        caption("u")
    with pytest.raises(ValueError, match=r"caption 't' of 'ch' needs \['n'\]"):
        caption("t")
    with pytest.raises(ValueError, match="not a valid template"):
        Captions("ch", {"t": "a { brace"})


def test_fields_names_each_field_once_without_its_format():
    assert fields("{a} {b:.3f} {a!r} {c[0]}") == {"a", "b", "c"}


# ---------------------------------------------------------------- the chapters


def _code(nb) -> ast.Module:
    cells = [c.source for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "code"]
    return ast.parse("\n".join(line for line in "\n".join(cells).splitlines() if not line.startswith(("%", "!"))))


def _captions_module(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith(".captions." + node.module
                                                                                      .rsplit(".", 1)[-1]):
            if any(alias.name == "CAPTIONS" for alias in node.names):
                return importlib.import_module(node.module)
    return None


def _name(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_every_caption_of_a_chapter_comes_from_its_templates(stem):
    tree = _code(NOTEBOOKS[stem])
    module = _captions_module(tree)
    assert module is not None, (f"{stem}: import CAPTIONS from toxlib.papers.captions.{stem}, "
                                f"toxlib.studies.captions.{stem} or toxlib.report.captions.{stem}")
    captions: Captions = module.CAPTIONS
    assert captions.stem == stem
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    binds = [c for c in calls if _name(c) == "bind"]
    assert len(binds) == 1, f"{stem}: bind the captions once, after the parameters cell"
    bound = {k.arg for k in binds[0].keywords} | set(captions.constants)
    used, problems = set(), []
    for call in calls:
        if _name(call) == "caption":
            name = call.args[0].value
            if name not in captions.templates:
                problems.append(f"no template {name!r}")
                continue
            used.add(name)
            missing = fields(captions.templates[name]) - bound - {k.arg for k in call.keywords}
            if missing:
                problems.append(f"caption {name!r} has no value for {sorted(missing)}")
        position = CAPTIONED_CALLS.get(_name(call))
        if position is not None and len(call.args) > position:
            given = call.args[position]
            if not (isinstance(given, ast.Call) and _name(given) == "caption"):
                problems.append(f"line {call.lineno}: {_name(call)}'s caption is not caption(...): "
                                f"{ast.unparse(given)[:80]}")
    problems += [f"template {name!r} is never shown" for name in sorted(set(captions.templates) - used)]
    assert problems == [], f"{stem}: " + "; ".join(problems)


def test_the_chapter_check_can_fail(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from toxlib.papers.captions.rtp_prompted import CAPTIONS\ncaption = CAPTIONS.bind(k=25)\n"
        "show(t, 'typed caption')\nresults.publish(S, 'x', t, caption('table2'))\n")])
    path = tmp_path / "rtp_prompted.ipynb"
    nbformat.write(nb, path)
    NOTEBOOKS["rtp_prompted"], saved = path, NOTEBOOKS["rtp_prompted"]
    try:
        with pytest.raises(AssertionError) as failure:
            test_every_caption_of_a_chapter_comes_from_its_templates("rtp_prompted")
    finally:
        NOTEBOOKS["rtp_prompted"] = saved
    message = str(failure.value)
    assert "'typed caption'" in message and "no value for" in message and "never shown" in message
