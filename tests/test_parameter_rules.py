"""Parameters are checked for meaning, not only type: each chapter declares its rules (metadata toxlib.checks) and
``run``/``book`` refuse a value outside them before executing, naming the parameter, the value and the rule."""

from __future__ import annotations

import math

import nbformat
import pytest

from toxlib.build.book import toc_notebooks
from toxlib.build.runner import (
    RULES,
    check_meaning,
    check_parameters,
    notebook_parameters,
    notebook_profiles,
    parameter_rules,
)
from toxlib.common.errors import ParameterError
from toxlib.store.paths import project_root

CHAPTERS = [p for p in toc_notebooks(project_root()) if p.parent.name == "notebooks"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_declares_rules_its_defaults_and_profiles_obey(path):
    rules = parameter_rules(path)
    params = notebook_parameters(path)
    assert rules and set(rules) <= set(params)
    for name, rule in rules.items():
        check_meaning(name, params[name]["default"], rule, path.name)
    for profile, values in notebook_profiles(path).items():
        check_parameters(path, values)  # raises on a profile value outside its rule


@pytest.mark.parametrize("chapter,name,value,allowed", [
    ("sass", "models", "[]", "at least one model"),
    ("sass", "lm_comments", "-5", "or None for all"),
    ("sass", "lm_comments", "0", "or None for all"),
    ("sass", "scorer_threshold", "5", "from 0 to 1"),
    ("sass", "perspective_threshold", "1e999", "from 0 to 1"),  # infinity
    ("sass", "settings", '["two"]', "'zero', 'one', 'few'"),
    ("rtp_prompted", "top_p", "0", "above 0 and at most 1"),
    ("rtp_prompted", "k", "0", "at least 1"),
    ("rtp_prompted", "dtype", "float16", "'float32', 'bfloat16'"),
    ("rtp_prompted", "scorer", "perspectiv", "known scorer"),
    ("debias_consistency", "executor", "slurm", "'local', 'ray'"),
])
def test_a_value_outside_its_rule_is_refused_naming_it(chapter, name, value, allowed):
    path = project_root() / "notebooks" / f"{chapter}.ipynb"
    with pytest.raises(ParameterError) as info:
        check_parameters(path, {name: value})
    assert f"parameter {name!r} of {chapter}.ipynb" in str(info.value) and allowed in str(info.value)


def test_values_inside_the_rules_pass():
    path = project_root() / "notebooks" / "sass.ipynb"
    assert check_parameters(path, {"lm_comments": "30", "scorer_threshold": "0.7", "human_threshold": "-0.5"}) == {
        "lm_comments": 30, "scorer_threshold": 0.7, "human_threshold": -0.5}


def test_every_rule_accepts_and_refuses_something():
    good = {"count": 1, "count or 0 for all": 0, "count or None for all": None, "count or 0 to skip": 0, "seed": 0,
            "probability": 1.0, "nucleus mass": 1.0, "positive": 0.1, "number": -3.0, "non-empty list": [1],
            "models": ["m"], "scorer": "distilled", "scorers": ["bilstm", "hf:some/model"]}
    bad = {"count": 0, "count or 0 for all": -1, "count or None for all": 0, "count or 0 to skip": True,
           "seed": -1, "probability": math.nan, "nucleus mass": 0.0, "positive": math.inf, "number": math.inf,
           "non-empty list": [], "models": [""], "scorer": "nope", "scorers": []}
    assert set(good) == set(bad) == set(RULES)
    for rule in RULES:
        check_meaning("x", good[rule], rule)
        with pytest.raises(ParameterError, match="parameter 'x' is"):
            check_meaning("x", bad[rule], rule)


def test_an_unknown_rule_in_the_metadata_is_refused(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]})]
    nb.metadata["toxlib"] = {"checks": {"n": "small"}}
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, str(path))
    with pytest.raises(ParameterError, match="not a known rule"):
        parameter_rules(path)
