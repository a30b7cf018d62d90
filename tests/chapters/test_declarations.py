"""Each chapter's parameters are declared once (``toxlib.chapters``): every notebook's parameters cell is its
declaration's, every parameter has a check that accepts its default and its profiles' values and refuses something,
and ``run``/``book`` refuse a value outside its check before a notebook starts, naming the parameter, the value and
what is allowed."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from toxlib.book_build.chapter_cells import cell_differences, chapter_notebook
from toxlib.book_build.runner import notebook_parameters, run_values
from toxlib.chapters import STEMS, chapter, chapters, spec
from toxlib.common.errors import ParameterError, UnknownNameError
from toxlib.store.paths import project_root

ROOT = project_root()


def test_every_chapter_notebook_holds_its_declarations_cell_and_names_it():
    assert cell_differences(ROOT) == []
    assert [c.stem for c in chapters()] == list(STEMS)


@pytest.mark.parametrize("stem", STEMS)
def test_every_parameter_has_a_check_that_can_refuse(stem):
    """A parameter without a real check (one that accepts anything) fails here, as does a notebook parameter the
    declaration lacks."""
    declared = chapter(stem)
    assert list(notebook_parameters(chapter_notebook(ROOT, stem))) == [p.name for p in declared.parameters]
    for parameter in declared.parameters:
        assert isinstance(parameter.check, spec.Check) and parameter.check(parameter.default)
        assert not parameter.check(object()), f"{stem}.{parameter.name}: its check accepts anything"
    for profile in declared.profiles:
        declared.values(profile)  # every profile value passes its check


def declaring(name: str) -> str:
    """The first chapter, in reading order, that declares a parameter ``name``."""
    return next(c.stem for c in chapters() if name in c.by_name)


@pytest.mark.parametrize("name,value,allowed", [
    ("sweep", "[-5]", "finite numbers above 0"),
    ("sweep", "[0]", "finite numbers above 0"),
    ("models", "[]", "at least one model"),
    ("masked_models", "[3]", "list of models"),
    ("model", "  ", "a model"),
    ("retrain", "maybe", "true or false"),
    ("lm_comments", "-5", "or None for all"),
    ("lm_comments", "0", "or None for all"),
    ("scorer_threshold", "5", "from 0 to 1"),
    ("perspective_threshold", "1e999", "from 0 to 1"),  # infinity
    ("settings", '["two"]', "'zero', 'one', 'few'"),
    ("settings", '["few", "few"]', "'zero', 'one', 'few'"),
    ("top_p", "0", "above 0 and at most 1"),
    ("k", "0", "at least 1"),
    ("k", "2.5", "at least 1"),
    ("dtype", "float16", "'float32', 'bfloat16'"),
    ("scorer", "perspectiv", "known scorer"),
    ("executor", "slurm", "'local', 'ray'"),
])
def test_a_value_outside_its_check_is_refused_naming_it(name, value, allowed):
    stem = declaring(name)
    with pytest.raises(ParameterError) as err:
        run_values(chapter_notebook(ROOT, stem), given={name: value})
    assert f"parameter {name!r} of {stem}" in str(err.value) and allowed in str(err.value)


def test_values_inside_their_checks_are_parsed_to_their_types():
    path = chapter_notebook(ROOT, declaring("lm_comments"))
    assert run_values(path, given={"lm_comments": "30", "scorer_threshold": "0.7", "human_threshold": "-0.5"}) == {
        "lm_comments": 30, "scorer_threshold": 0.7, "human_threshold": -0.5}
    assert run_values(chapter_notebook(ROOT, declaring("sweep")), given={"sweep": "[10, 50.5]"}) == {
        "sweep": [10.0, 50.5]}


def test_an_unknown_name_lists_the_valid_ones_with_what_each_allows():
    with pytest.raises(UnknownNameError) as err:
        chapter("rtp_prompted").values("default", {"n_promtps": 5})
    assert "n_promtps" in str(err.value) and "n_toxic (default 600: a whole number of at least 1)" in str(err.value)


def test_every_check_accepts_and_refuses_something():
    good = {"COUNT": 1, "COUNT_OR_ALL": 0, "COUNT_OR_NONE": None, "COUNT_OR_SKIP": 0, "SEED": 0,
            "PROBABILITY": 1.0, "NUCLEUS_MASS": 1.0, "POSITIVE": 0.1, "NUMBER": -3.0, "FLAG": False,
            "POSITIVE_LIST": [], "MODEL": "m", "MODELS": ["m"], "MODELS_OR_NONE": [], "SCORER": "distilled",
            "SCORERS": ["bilstm", "hf:some/model"], "DTYPE": "bfloat16", "EXECUTOR": "ray",
            "MODEL_NAMES": {"mine": "/path/to/folder"}}
    bad = {"COUNT": 0, "COUNT_OR_ALL": -1, "COUNT_OR_NONE": 0, "COUNT_OR_SKIP": True, "SEED": -1,
           "PROBABILITY": math.nan, "NUCLEUS_MASS": 0.0, "POSITIVE": math.inf, "NUMBER": math.inf, "FLAG": 1,
           "POSITIVE_LIST": [1.0, -2.0], "MODEL": " ", "MODELS": [""], "MODELS_OR_NONE": "m", "SCORER": "nope",
           "SCORERS": [], "DTYPE": "float16", "EXECUTOR": "slurm", "MODEL_NAMES": {"mine": ""}}
    declared = {n for n, v in vars(spec).items() if isinstance(v, spec.Check)}
    assert set(good) == set(bad) == declared
    for name in declared:
        check = getattr(spec, name)
        assert check(good[name]) and not check(bad[name]), name


def test_a_parameter_cannot_be_declared_with_a_default_its_check_refuses():
    with pytest.raises(ValueError, match="its default 0 is not a whole number of at least 1"):
        spec.Parameter("n", 0, spec.COUNT, "how many")
    with pytest.raises(ValueError, match="profile"):
        spec.Chapter("x", "x", "", (spec.Parameter("n", 1, spec.COUNT, "how many"),), {"smoke": {"n": 0}})


def test_the_command_line_refuses_an_empty_model_list_before_any_kernel_starts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", "notebooks/safety_score.ipynb", "-p", "models",
                           "[]", "-o", str(tmp_path / "out.ipynb")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "parameter 'models' of safety_score is '[]'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out.ipynb").exists()


def test_the_chapters_listing_names_each_parameters_check_and_survives_a_closed_pipe():
    done = subprocess.run(f"{sys.executable} -m toxlib chapters | head -c 100", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr and len(done.stdout) == 100
    full = subprocess.run([sys.executable, "-m", "toxlib", "chapters"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120).stdout
    assert "sweep = []: a list of finite numbers above 0 (may be empty)" in full


def test_chapter_titles_are_plain_words():
    """A title is shown as text outside Markdown too (the scorecard's tables, a figure's alt text), where an emphasis
    mark would read as a literal asterisk."""
    marked = {c.stem: c.title for c in chapters() if any(ch in c.title for ch in "*_`[]#<>")}
    assert not marked, f"chapter titles with Markdown or HTML characters: {marked}"
