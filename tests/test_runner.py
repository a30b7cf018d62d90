"""The papermill runner: parameter checking and parsing, run records, and the command line."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from toxlib.errors import ParameterError, UnknownNameError
from toxlib.runner import check_parameters, coerce, notebook_parameters, run_notebook

PARAMS = '''n_prompts = 3  # how many prompts
model = "smollm2-135m"  # model name
top_p = 0.9
use_cache = True
subsets = ["a", "b"]
'''


def _notebook(tmp_path, params=PARAMS, body="import json, os\nprint(json.dumps({'n': n_prompts, 'model': model, "
              "'top_p': top_p, 'use_cache': use_cache, 'subsets': subsets, 'env': os.environ.get('TOXLIB_TEST_ENV')}))"):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# tiny"), cell, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["toxlib"] = {"smoke_parameters": {"n_prompts": 1}}
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    return path


def test_parameters_are_read_with_types(tmp_path):
    params = notebook_parameters(_notebook(tmp_path))
    assert {k: v["type"] for k, v in params.items()} == {
        "n_prompts": "int", "model": "str", "top_p": "float", "use_cache": "bool", "subsets": "list"}
    assert params["n_prompts"]["help"] == "how many prompts"


def test_unknown_parameter_is_refused_with_the_valid_list(tmp_path):
    with pytest.raises(UnknownNameError) as err:
        check_parameters(_notebook(tmp_path), {"n_promtps": "5"})
    assert "n_promtps" in str(err.value)
    for name in ("n_prompts", "model", "top_p", "use_cache", "subsets"):
        assert name in str(err.value)


@pytest.mark.parametrize("value,default,expected", [
    ("5", 3, 5), ("5", 0.9, 5.0), ("0.5", 0.9, 0.5), ("false", True, False), ("yes", False, True),
    ("gpt2-large", "smollm2-135m", "gpt2-large"), ('["x"]', ["a"], ["x"]), ("None", None, None),
])
def test_values_are_parsed_to_the_default_type(value, default, expected):
    parsed = coerce("p", value, default)
    assert parsed == expected and type(parsed) is type(expected)


@pytest.mark.parametrize("value,default", [("five", 3), ("maybe", True), ("[1", ["a"]), ("0.5", 3)])
def test_unparseable_values_name_the_parameter(value, default):
    with pytest.raises(ParameterError, match="parameter 'p'"):
        coerce("p", value, default)


def test_a_parameter_papermill_cannot_read_is_an_error(tmp_path):
    path = _notebook(tmp_path, params="threshold = 0.5  # toxic when score >= threshold\nk = 25\n", body="pass")
    with pytest.raises(ParameterError, match="cannot parse parameter.*threshold"):
        notebook_parameters(path)


def test_run_injects_parameters_and_records_the_run(tmp_path):
    path = _notebook(tmp_path)
    out = tmp_path / "out.ipynb"
    record = run_notebook(path, {"n_prompts": "7", "subsets": '["z"]'}, output=out, env={"TOXLIB_TEST_ENV": "seen"},
                          progress=False)
    assert record["parameters"] == {"n_prompts": 7, "subsets": ["z"]}
    nb = nbformat.read(out, as_version=4)
    printed = nb.cells[-2].outputs[0]["text"]
    assert '"n": 7' in printed and '"subsets": ["z"]' in printed and '"env": "seen"' in printed
    last = nb.cells[-1]
    assert "toxlib-run-record" in last.metadata["tags"] and "n_prompts=7" in last.source
    meta = nb.metadata["toxlib"]["last_run"]
    assert meta["parameters"] == {"n_prompts": 7, "subsets": ["z"]} and meta["wall_s"] > 0
    assert meta["machine"] and meta["commit"] and meta["toxlib_version"]
    # re-running the output replaces the record instead of stacking a second one
    run_notebook(out, {}, progress=False)
    assert sum("toxlib-run-record" in c.metadata.get("tags", []) for c in nbformat.read(out, as_version=4).cells) == 1


def test_smoke_uses_the_notebook_smoke_parameters(tmp_path):
    record = run_notebook(_notebook(tmp_path), smoke=True, output=tmp_path / "o.ipynb", progress=False)
    assert record["parameters"] == {"n_prompts": 1}


def test_cli_rejects_unknown_parameter(tmp_path):
    path = _notebook(tmp_path)
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(path), "-p", "temperature", "0.7"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "unknown parameter(s) temperature" in done.stderr and "n_prompts" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("value,default", [(2.5, 3), (True, 3), ("x", 0.5), (1, True), (["a"], "s"), (3, ["a"])])
def test_python_values_are_type_checked_too(value, default):
    with pytest.raises(ParameterError, match="parameter 'p' expects"):
        coerce("p", value, default)


def test_a_failing_notebook_names_the_cell_and_keeps_the_output(tmp_path):
    from toxlib.errors import NotebookExecutionError

    path = _notebook(tmp_path, body="raise RuntimeError('boom in cell')")
    with pytest.raises(NotebookExecutionError, match="RuntimeError: boom in cell") as err:
        run_notebook(path, output=tmp_path / "failed.ipynb", progress=False)
    assert str(tmp_path / "failed.ipynb") in str(err.value) and (tmp_path / "failed.ipynb").exists()
