"""The papermill runner: parameter checking and parsing, run records, and the command line."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from toxlib.build.runner import check_parameters, coerce, notebook_parameters, run_notebook
from toxlib.common.errors import ParameterError, UnknownNameError

PARAMS = '''n_prompts = 3  # how many prompts
model = "smollm2-135m"  # model name
top_p = 0.9
use_cache = True
subsets = ["a", "b"]
'''


def _notebook(tmp_path, params=PARAMS, body="import json, os\nprint(json.dumps({'n': n_prompts, 'model': model, "
              "'top_p': top_p, 'use_cache': use_cache, 'subsets': subsets, "
              "'env': os.environ.get('TOXLIB_TEST_ENV')}))"):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# tiny"), cell, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["toxlib"] = {"profiles": {"smoke": {"n_prompts": 1}}}
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
    from toxlib.models.cpu_kernels import cpu_model
    assert meta["cpu"].startswith(cpu_model()) and "AMX" in meta["cpu"] and "MKL" in meta["cpu"]
    assert meta["cpu"] in last.source  # the reader sees the CPU, its kernel features and MKL's mode
    # re-running the output replaces the record instead of stacking a second one
    run_notebook(out, {}, progress=False)
    assert sum("toxlib-run-record" in c.metadata.get("tags", []) for c in nbformat.read(out, as_version=4).cells) == 1


def test_smoke_uses_the_notebook_smoke_parameters(tmp_path):
    record = run_notebook(_notebook(tmp_path), profile="smoke", output=tmp_path / "o.ipynb", progress=False)
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
    from toxlib.common.errors import NotebookExecutionError

    path = _notebook(tmp_path, body="raise RuntimeError('boom in cell')")
    with pytest.raises(NotebookExecutionError, match="RuntimeError: boom in cell") as err:
        run_notebook(path, output=tmp_path / "failed.ipynb", progress=False)
    assert str(tmp_path / "failed.ipynb") in str(err.value) and (tmp_path / "failed.ipynb").exists()


# --- issue 17: no silent wrong results, no lost work -------------------------------------------------------------

def _write(tmp_path, name, cells, smoke=None):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("n = 3\n")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params] + [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["toxlib"] = {"profiles": {"smoke": smoke or {"n": 1}}}
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_single_chapter_smoke_run_never_writes_the_committed_results(tmp_path, monkeypatch):
    from toxlib.store import paths

    monkeypatch.delenv("TOXLIB_RESULTS_DIR", raising=False)
    monkeypatch.setattr(paths, "smoke_dir", lambda: tmp_path / "smoke")
    path = _write(tmp_path, "chapter.ipynb", ["from toxlib.store import paths\nprint('RESULTS', paths.results_dir())"])
    before = path.read_bytes()
    run_notebook(path, profile="smoke", output=tmp_path / "out.ipynb", progress=False)
    printed = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[-2].outputs[0]["text"]
    assert f"RESULTS {tmp_path / 'smoke' / 'src' / 'data' / 'results'}" in printed
    # without -o a smoke run writes a copy under the smoke folder, never over the notebook itself
    run_notebook(path, profile="smoke", progress=False)
    assert path.read_bytes() == before
    assert (tmp_path / "smoke" / "src" / "runs" / "chapter.ipynb").exists()


def test_killed_in_place_run_leaves_the_notebook_untouched(tmp_path):
    import os
    import signal
    import time

    started = tmp_path / "started"
    path = _write(tmp_path, "long.ipynb", [f"open({str(started)!r}, 'w').close()", "import time; time.sleep(120)"])
    nb = nbformat.read(path, as_version=4)  # committed outputs of an earlier run
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="committed output\n")]
    nbformat.write(nb, path)
    before = path.read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "toxlib", "run", str(path)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert started.exists(), "the notebook never started"
        time.sleep(2.0)  # papermill saves its progress after each cell
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and its kernel, as a killed terminal would
        proc.wait()
    assert path.read_bytes() == before


def test_failed_in_place_run_keeps_the_notebook_and_the_failed_copy(tmp_path):
    from toxlib.common.errors import NotebookExecutionError

    path = _write(tmp_path, "fails.ipynb", ["raise ValueError('broken')"])
    before = path.read_bytes()
    with pytest.raises(NotebookExecutionError, match="fails.failed.ipynb"):
        run_notebook(path, progress=False)
    assert path.read_bytes() == before
    failed = nbformat.read(tmp_path / "fails.failed.ipynb", as_version=4)
    assert any(o.get("ename") == "ValueError" for c in failed.cells for o in c.get("outputs", []))
    assert not list(tmp_path.glob(".*running*"))  # no temporary file left behind


def _git(repo, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()


def test_run_record_describes_the_toxlib_the_kernel_imported(tmp_path):
    other = tmp_path / "other"
    (other / "toxlib").mkdir(parents=True)
    (other / "toxlib" / "__init__.py").write_text('__version__ = "9.9.9-other"\n')
    _git(other, "init", "-q")
    _git(other, "add", "toxlib")
    _git(other, "commit", "-q", "-m", "other toxlib")
    commit = _git(other, "rev-parse", "--short=12", "HEAD")
    (other / "toxlib" / "__init__.py").write_text('__version__ = "9.9.9-other"  # edited\n')
    path = _write(tmp_path, "rec.ipynb", ["import toxlib\nprint(toxlib.__file__)"])
    record = run_notebook(path, output=tmp_path / "rec.out.ipynb", env={"PYTHONPATH": str(other)}, progress=False)
    out = nbformat.read(tmp_path / "rec.out.ipynb", as_version=4)
    assert str(other / "toxlib") in out.cells[-2].outputs[0]["text"]  # the kernel did import the other toxlib
    assert record["toxlib_version"] == "9.9.9-other" and record["commit"] == commit + "+dirty"
    assert set(record) == {"notebook", "parameters", "profile", "smoke", "toxlib_version", "commit", "machine",
                           "cpu", "libraries", "samples", "finished", "wall_s"}
    assert "torch " in record["libraries"] and record["libraries"] in out.cells[-1].source  # the kernel's releases
    assert not any("toxlib-run-facts" in c.metadata.get("tags", []) for c in out.cells)  # the probe cell is gone
    assert "9.9.9-other" in out.cells[-1].source


def test_papermill_paths_are_stored_relative_to_the_repository(tmp_path, monkeypatch):
    from toxlib.store import paths

    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    path = _write(tmp_path / "notebooks", "rel.ipynb", ["print(n)"])
    run_notebook(path, output=tmp_path / "build" / "rel.ipynb", progress=False)
    meta = nbformat.read(tmp_path / "build" / "rel.ipynb", as_version=4).metadata["papermill"]
    assert meta["input_path"] == "notebooks/rel.ipynb" and meta["output_path"] == "build/rel.ipynb"


@pytest.mark.parametrize("kind", ["missing", "text", "directory"])
def test_cli_run_bad_notebook_is_a_one_line_error(tmp_path, kind):
    target = tmp_path / "nb.ipynb"
    if kind == "text":
        target.write_text("print('not a notebook')\n")
    elif kind == "directory":
        target.mkdir()
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(target)], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1 and str(target) in done.stderr


# --- issue 14: profiles (default, smoke, paper) declared in one place ---------------------------------------------

def _profiled(tmp_path, meta, name="prof.ipynb"):
    """A tiny notebook printing its parameters, with metadata toxlib = ``meta``."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("n = 3  # units\nlam = [10.0]  # sweep\nbeams = 1\n")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print('PARAMS', n, lam, beams)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["toxlib"] = meta
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _printed(path):
    return nbformat.read(path, as_version=4).cells[-2].outputs[0]["text"].strip()


PAPER = {"n": 1199, "lam": [10.0, 50.0, 100.0], "beams": 3}


def test_profiles_are_read_from_metadata(tmp_path):
    from toxlib.build.runner import notebook_profiles, profile_parameters

    path = _profiled(tmp_path, {"profiles": {"smoke": {"n": 1}, "paper": PAPER}})
    assert notebook_profiles(path) == {"default": {}, "smoke": {"n": 1}, "paper": PAPER}
    old = _profiled(tmp_path, {"profiles": {"smoke": {"n": 2}}}, "old.ipynb")
    assert notebook_profiles(old) == {"default": {}, "smoke": {"n": 2}}
    assert notebook_profiles(_profiled(tmp_path, {"smoke_parameters": {"n": 2}}, "older.ipynb"))["smoke"] == {}
    with pytest.raises(ParameterError, match="declares no 'paper' profile.*toxlib.profiles.paper"):
        profile_parameters(old, "paper")
    with pytest.raises(UnknownNameError, match="unknown profile 'huge'"):
        profile_parameters(path, "huge")
    with pytest.raises(UnknownNameError, match="unknown profile\\(s\\) papr"):
        notebook_profiles(_profiled(tmp_path, {"profiles": {"papr": {}}}, "typo.ipynb"))


def test_run_with_each_profile_and_p_overrides(tmp_path, monkeypatch):
    from toxlib.store import paths

    monkeypatch.setattr(paths, "smoke_dir", lambda: tmp_path / "smoke")
    path = _profiled(tmp_path, {"profiles": {"smoke": {"n": 1}, "paper": PAPER}})
    record = run_notebook(path, output=tmp_path / "paper.ipynb", profile="paper", progress=False)
    assert record["profile"] == "paper" and record["smoke"] is False and record["parameters"] == PAPER
    assert _printed(tmp_path / "paper.ipynb") == "PARAMS 1199 [10.0, 50.0, 100.0] 3"
    assert "with the paper profile" in nbformat.read(tmp_path / "paper.ipynb", as_version=4).cells[-1].source
    record = run_notebook(path, {"beams": "1"}, output=tmp_path / "p1.ipynb", profile="paper", progress=False)
    assert _printed(tmp_path / "p1.ipynb") == "PARAMS 1199 [10.0, 50.0, 100.0] 1"  # -p wins over the profile
    run_notebook(path, output=tmp_path / "d.ipynb", profile="default", progress=False)
    assert _printed(tmp_path / "d.ipynb") == "PARAMS 3 [10.0] 1"
    record = run_notebook(path, output=tmp_path / "s.ipynb", profile="smoke", progress=False)
    assert record["profile"] == "smoke" and _printed(tmp_path / "s.ipynb") == "PARAMS 1 [10.0] 1"
    with pytest.raises(TypeError):
        run_notebook(path, smoke=True, progress=False)  # the removed alias of profile="smoke"


def test_profile_with_an_unknown_parameter_is_refused(tmp_path):
    path = _profiled(tmp_path, {"profiles": {"paper": {"n_promtps": 1199}}})
    with pytest.raises(UnknownNameError, match="n_promtps"):
        run_notebook(path, output=tmp_path / "x.ipynb", profile="paper", progress=False)


def test_cli_profile_and_smoke_alias(tmp_path):
    path = _profiled(tmp_path, {"profiles": {"smoke": {"n": 1}, "paper": PAPER}})
    out = tmp_path / "cli.ipynb"
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(path), "--profile", "paper", "-p", "n", "7",
                           "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "(paper profile)" in done.stdout and _printed(out) == "PARAMS 7 [10.0, 50.0, 100.0] 3"
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(path), "--smoke", "--profile", "paper"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "cannot be combined" in done.stderr and "Traceback" not in done.stderr


def test_book_profile_is_checked_for_every_chapter_before_any_runs(tmp_path, monkeypatch):
    from toxlib.build import book
    from toxlib.store import paths

    root = tmp_path / "proj"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: notebooks/a\n"
                                   "- file: notebooks/b\n- file: notebooks/card\n")
    _profiled(root / "notebooks", {"profiles": {"paper": PAPER}}, "a.ipynb")
    _profiled(root / "notebooks", {"profiles": {"smoke": {"n": 1}}}, "b.ipynb")  # no paper profile
    _profiled(root / "notebooks", {"aggregate": True}, "card.ipynb")
    monkeypatch.setattr(paths, "project_root", lambda: root)
    ran = []
    monkeypatch.setattr(book, "run_notebook", lambda nb, **kw: ran.append((nb.stem, kw["profile"])) or {})
    monkeypatch.setattr(book, "build_html", lambda source, work, results=None: work / "html")
    monkeypatch.setattr(book, "stage_sources", lambda root, staging: root)
    with pytest.raises(ParameterError, match="b.ipynb declares no 'paper' profile"):
        book.build_book(profile="paper")
    assert ran == []  # nothing ran before the missing profile was found
    book.build_book(profile="paper", only=["a"])
    assert ran == [("a", "paper"), ("card", "default")]  # the scorecard has no paper profile: its defaults
    ran.clear()
    book.build_book(profile="default")
    assert ran == [("a", "default"), ("b", "default"), ("card", "default")]
    with pytest.raises(UnknownNameError, match="unknown profile"):
        book.build_book(profile="huge")
