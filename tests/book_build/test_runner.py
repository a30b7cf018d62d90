"""The papermill runner: parameter checking and parsing, run records, and the command line."""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest

from toxlib.book_build.runner import notebook_parameters, run_notebook, run_values
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
        run_values(_notebook(tmp_path), given={"n_promtps": "5"})
    assert "n_promtps" in str(err.value)
    for name in ("n_prompts", "model", "top_p", "use_cache", "subsets"):
        assert name in str(err.value)


@pytest.mark.parametrize("name,value,expected", [
    ("n_prompts", "5", 5), ("top_p", "5", 5.0), ("top_p", "0.5", 0.5), ("use_cache", "false", False),
    ("use_cache", "yes", True), ("model", "gpt2-large", "gpt2-large"), ("subsets", '["x"]', ["x"]),
])
def test_values_of_a_notebook_outside_the_book_are_parsed_to_the_default_type(tmp_path, name, value, expected):
    parsed = run_values(_notebook(tmp_path), given={name: value})[name]
    assert parsed == expected and type(parsed) is type(expected)


@pytest.mark.parametrize("name,value", [("n_prompts", "five"), ("use_cache", "maybe"), ("subsets", "[1"),
                                        ("n_prompts", "0.5"), ("n_prompts", 2.5), ("n_prompts", True),
                                        ("top_p", "x"), ("use_cache", 1), ("model", ["a"]), ("subsets", 3)])
def test_a_value_of_another_type_names_the_parameter(tmp_path, name, value):
    with pytest.raises(ParameterError, match=f"parameter '{name}'"):
        run_values(_notebook(tmp_path), given={name: value})


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


def test_smoke_runs_a_notebook_outside_the_book_with_its_defaults(tmp_path):
    record = run_notebook(_notebook(tmp_path), profile="smoke", output=tmp_path / "o.ipynb", progress=False)
    assert record["parameters"] == {} and record["profile"] == "smoke"


def test_cli_rejects_unknown_parameter(tmp_path):
    path = _notebook(tmp_path)
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(path), "-p", "temperature", "0.7"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "unknown parameter(s) temperature" in done.stderr and "n_prompts" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_failing_notebook_names_the_cell_and_keeps_the_output(tmp_path):
    from toxlib.common.errors import NotebookExecutionError

    path = _notebook(tmp_path, body="raise RuntimeError('boom in cell')")
    with pytest.raises(NotebookExecutionError, match="RuntimeError: boom in cell") as err:
        run_notebook(path, output=tmp_path / "failed.ipynb", progress=False)
    assert str(tmp_path / "failed.ipynb") in str(err.value) and (tmp_path / "failed.ipynb").exists()


# --- issue 17: no silent wrong results, no lost work -------------------------------------------------------------

def _write(tmp_path, name, cells):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("n = 3\n")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params] + [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
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


def _other_checkout(tmp_path):
    """A second checkout of toxlib (a copy of this one's library and registry in a git repository of its own), as
    a second clone sharing this one's virtual environment would be."""
    import shutil

    from toxlib.store import paths

    other = tmp_path / "clone-b"
    shutil.copytree(paths.PACKAGE_DIR, other / "toxlib", ignore=shutil.ignore_patterns("__pycache__"))
    (other / "data").mkdir(parents=True)
    shutil.copy2(paths.registry_file(), other / "data" / "sources.yaml")
    _git(other, "init", "-q")
    _git(other, "add", "toxlib", "data")
    _git(other, "commit", "-q", "-m", "clone b")
    return other


def test_a_run_executes_the_toxlib_of_the_checkout_it_was_called_from(tmp_path):
    """Two clones sharing one environment: a run called from clone B imports clone B's toxlib in its kernel and
    writes B's results, and its run record names where toxlib came from (the kernel imported clone A's, the
    environment's editable install, and wrote into A's data/results)."""
    other = _other_checkout(tmp_path)
    (other / "notebooks").mkdir()
    probe = _write(other / "notebooks", "probe.ipynb", [
        "import toxlib\nfrom toxlib.store import paths\nprint(toxlib.__file__)\nprint(paths.results_dir())"])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TOXLIB_RESULTS_DIR")}
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", "notebooks/probe.ipynb"], cwd=other, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = nbformat.read(probe, as_version=4)
    printed = out.cells[-2].outputs[0]["text"]
    assert str(other / "toxlib") in printed and str(other / "data" / "results") in printed
    record = out.metadata["toxlib"]["last_run"]
    assert record["toxlib_path"] == "toxlib" and "imported from `toxlib`" in out.cells[-1].source
    assert record["commit"] == _git(other, "rev-parse", "--short=12", "HEAD") and record["uncommitted"] == []


def test_a_kernel_that_imports_another_toxlib_is_refused_with_the_fix(tmp_path, monkeypatch):
    """When the kernel would import another toxlib than the one running the notebook (here: the runner believes it
    is a checkout with no toxlib, so the kernel falls back to the environment's), the run stops in its first cell
    with the fix, and no output is written."""
    from toxlib.common.errors import ToxlibError
    from toxlib.store import paths

    monkeypatch.setattr(paths, "PACKAGE_DIR", tmp_path / "elsewhere" / "toxlib")
    path = _write(tmp_path, "rec.ipynb", ["import toxlib\nprint(toxlib.__file__)"])
    with pytest.raises(ToxlibError, match="imports toxlib from .* not from .*elsewhere.*pip install -e"):
        run_notebook(path, output=tmp_path / "rec.out.ipynb", progress=False)
    assert not (tmp_path / "rec.out.ipynb").exists() and not list(tmp_path.glob(".*running*"))


def test_the_run_record_names_uncommitted_changes_to_the_record_as_dirty(tmp_path):
    """An edited record file with its SHA256SUMS line recomputed passes the record's checks; the run record still
    says "+dirty" and names both files, since what decides the numbers differs from the commit."""
    from toxlib.book_build.runner import _chapter_run_cell
    from toxlib.common.provenance import git_commit, uncommitted_files

    repo = tmp_path / "repo"
    (repo / "toxlib").mkdir(parents=True)
    (repo / "toxlib" / "__init__.py").write_text("")
    (repo / "data" / "record" / "scores").mkdir(parents=True)
    (repo / "data" / "record" / "scores" / "a.csv.gz").write_bytes(b"rows")
    (repo / "data" / "record" / "SHA256SUMS").write_text("sum  scores/a.csv.gz\n")
    (repo / "data" / "record" / "audits.csv").write_text("date\n")
    (repo / "notebooks").mkdir()
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "record")
    commit = _git(repo, "rev-parse", "--short=12", "HEAD")
    (repo / "notebooks" / "x.ipynb").write_text("{}")  # a rewritten notebook decides nothing
    (repo / "data" / "record" / "audits.csv").write_text("date\n2026-01-01\n")  # nor does the audit history
    assert git_commit(repo) == commit and uncommitted_files(repo) == []
    (repo / "data" / "record" / "scores" / "a.csv.gz").write_bytes(b"edited rows")
    (repo / "data" / "record" / "SHA256SUMS").write_text("other  scores/a.csv.gz\n")
    assert git_commit(repo) == commit + "+dirty"
    changed = uncommitted_files(repo)
    assert changed == ["data/record/SHA256SUMS", "data/record/scores/a.csv.gz"]
    cell = _chapter_run_cell({"parameters": {}, "toxlib_version": "0", "commit": commit + "+dirty",
                             "machine": "m", "finished": "now", "wall_s": 1.0, "uncommitted": changed})
    assert "Uncommitted changes" in cell.source and "data/record/scores/a.csv.gz" in cell.source


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

DECLARATION = '''
from toxlib.chapters.spec import COUNT, POSITIVE_LIST, Chapter, Parameter

PARAMETERS = (Parameter("n", 3, COUNT, "units"), Parameter("lam", [10.0], POSITIVE_LIST, "sweep"),
              Parameter("beams", 1, COUNT, "beams"))
PROF = Chapter("prof", "Profiled", "Parameters.", PARAMETERS,
               {"smoke": {"n": 1}, "paper": {"n": 1199, "lam": [10.0, 50.0, 100.0], "beams": 3}})
OLD = Chapter("old", "No paper profile", "Parameters.", PARAMETERS, {"smoke": {"n": 2}})
CARD = Chapter("card", "Aggregate", "Parameters.", PARAMETERS, {"smoke": {}}, aggregate=True)
'''


@pytest.fixture()
def declared(tmp_path, monkeypatch):
    """A module of chapter declarations importable here (and by a subprocess given the returned PYTHONPATH)."""
    folder = tmp_path / "decl"
    folder.mkdir()
    (folder / "test_declared_chapters.py").write_text(DECLARATION)
    monkeypatch.syspath_prepend(str(folder))
    return str(folder)


def _profiled(tmp_path, declaration, name="prof.ipynb", cell=None):
    """A tiny notebook printing its parameters, whose metadata names ``declaration`` (an attribute of the module
    the ``declared`` fixture writes) and whose parameters cell is that declaration's (or ``cell``)."""
    import importlib

    chapter = getattr(importlib.import_module("test_declared_chapters"), declaration)
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(cell if cell is not None else chapter.cell_source())
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print('PARAMS', n, lam, beams)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["toxlib"] = {"chapter": f"test_declared_chapters:{declaration}"}
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _printed(path):
    return nbformat.read(path, as_version=4).cells[-2].outputs[0]["text"].strip()


PAPER = {"n": 1199, "lam": [10.0, 50.0, 100.0], "beams": 3}


def test_profiles_come_from_the_declaration(tmp_path, declared):
    path = _profiled(tmp_path, "PROF")
    assert run_values(path, "paper") == PAPER and run_values(path, "smoke") == {"n": 1}
    assert run_values(path, "paper", {"beams": "1"}) == {**PAPER, "beams": 1}
    old = _profiled(tmp_path, "OLD", "old.ipynb")
    with pytest.raises(ParameterError, match="declares no 'paper' profile"):
        run_values(old, "paper")
    with pytest.raises(UnknownNameError, match="unknown profile 'huge'"):
        run_values(path, "huge")
    with pytest.raises(ValueError, match="not declarable"):
        from toxlib.chapters.spec import Chapter
        Chapter("x", "x", "", (), {"papr": {}})


def test_a_notebook_whose_cell_is_not_its_declaration_is_refused(tmp_path, declared):
    path = _profiled(tmp_path, "PROF", cell="n = 5  # units\nlam = [10.0]  # sweep\nbeams = 1  # beams\n")
    with pytest.raises(ParameterError, match="differs from its declaration.*in n"):
        run_notebook(path, output=tmp_path / "x.ipynb", progress=False)
    assert not (tmp_path / "x.ipynb").exists()


def test_run_with_each_profile_and_p_overrides(tmp_path, monkeypatch, declared):
    from toxlib.store import paths

    monkeypatch.setattr(paths, "smoke_dir", lambda: tmp_path / "smoke")
    path = _profiled(tmp_path, "PROF")
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
    with pytest.raises(ParameterError, match="parameter 'lam' of prof is"):
        run_notebook(path, {"lam": "[-5]"}, output=tmp_path / "neg.ipynb", progress=False)
    with pytest.raises(TypeError):
        run_notebook(path, smoke=True, progress=False)  # the removed alias of profile="smoke"


def test_cli_profile_and_smoke_alias(tmp_path, declared):
    path = _profiled(tmp_path, "PROF")
    out = tmp_path / "cli.ipynb"
    env = {**os.environ, "PYTHONPATH": declared}
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(path), "--profile", "paper", "-p", "n", "7",
                           "-o", str(out)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "(paper profile)" in done.stdout and _printed(out) == "PARAMS 7 [10.0, 50.0, 100.0] 3"
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(path), "--smoke", "--profile", "paper"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "cannot be combined" in done.stderr and "Traceback" not in done.stderr


def test_book_profile_is_checked_for_every_chapter_before_any_runs(tmp_path, monkeypatch, declared):
    from toxlib.book_build import book
    from toxlib.store import paths

    root = tmp_path / "proj"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: notebooks/a\n"
                                   "- file: notebooks/b\n- file: notebooks/card\n")
    _profiled(root / "notebooks", "PROF", "a.ipynb")
    _profiled(root / "notebooks", "OLD", "b.ipynb")  # no paper profile
    _profiled(root / "notebooks", "CARD", "card.ipynb")
    monkeypatch.setattr(paths, "project_root", lambda: root)
    monkeypatch.setenv("TOXLIB_PRESTART_KERNELS", "0")  # the stand-in run_notebook below would never stop them
    ran = []
    monkeypatch.setattr(book, "run_notebook", lambda nb, **kw: ran.append((nb.stem, kw["profile"])) or {})
    monkeypatch.setattr(book, "build_html", lambda source, work, results=None: work / "html")
    monkeypatch.setattr(book, "stage_sources", lambda root, staging: root)
    with pytest.raises(ParameterError, match="old declares no 'paper' profile"):
        book.build_book(profile="paper")
    assert ran == []  # nothing ran before the missing profile was found
    book.build_book(profile="paper", only=["a"])
    assert ran == [("a", "paper"), ("card", "default")]  # the scorecard has no paper profile: its defaults
    ran.clear()
    book.build_book(profile="default")
    assert ran == [("a", "default"), ("b", "default"), ("card", "default")]
    with pytest.raises(UnknownNameError, match="unknown profile"):
        book.build_book(profile="huge")
