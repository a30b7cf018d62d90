"""Execute one notebook with papermill: parameters checked against its chapter's declaration, its chapter run appended.

A chapter of the book names its declaration in its metadata (``toxlib.chapter``): its parameters, their checks and
its profiles live in ``toxlib.chapters.<stem>`` (``default``: the parameters' defaults; ``smoke``: tiny CI
parameters; ``quick``: a stated fraction; ``paper``: the paper's sizes wherever the data exist here), and its
parameters cell must be the declaration's. Another notebook is run with its cell's parameters, checked for type.
Explicit parameters override a profile's. A smoke run writes a copy
under _build/smoke (notebook and results); a paper run is a real run: like a default run it executes in place and
writes the committed data/results/ unless given an output (``-o``) and TOXLIB_RESULTS_DIR. Execution writes to a
temporary file beside the output and replaces the output only when the run has finished, so an interrupted or killed
run leaves the previous notebook as it was. The chapter run's toxlib version and commit are read inside the kernel
(the toxlib the notebook imported), by a cell appended for the run and removed from the output.
"""

from __future__ import annotations

import ast
import datetime as dt
import inspect
import json
import os
import tempfile
import time
from pathlib import Path

import nbformat
import papermill

import toxlib
from toxlib.book_build.chapter_runs import CHAPTER_RUN_TAG
from toxlib.book_build.kernels import shutdown, start_kernel
from toxlib.book_build.machine import (
    DECIDING_PATHS,
    git_commit,
    kernel_facts,
    library_versions,
    machine_description,
    uncommitted_files,
)
from toxlib.book_build.partial_runs import new_partial
from toxlib.chapters import STEMS, chapter
from toxlib.chapters.spec import FLAG, PROFILES, Chapter, Check, Parameter  # noqa: F401 (PROFILES: re-exported)
from toxlib.common import settings
from toxlib.common.errors import InputFileError, NotebookExecutionError, ParameterError, ToxlibError, UnknownNameError
from toxlib.store import paths
from toxlib.store.record_usage import note_build


def read_notebook(path: str | Path) -> nbformat.NotebookNode:
    """The notebook at ``path``; InputFileError (one line: what is wrong, what to give instead) when it is missing,
    not a file, not UTF-8 or not a Jupyter notebook."""
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"notebook {path} does not exist; give the path of an .ipynb file, "
                             "e.g. notebooks/sass.ipynb")
    if not path.is_file():
        raise InputFileError(f"{path} is not a file; give the path of an .ipynb file")
    try:
        return nbformat.read(str(path), as_version=4)
    except UnicodeDecodeError:
        raise InputFileError(f"{path} is not a Jupyter notebook (not UTF-8 text); give an .ipynb file") from None
    except Exception as exc:  # nbformat raises JSON, validation and reader errors of several kinds
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputFileError(f"{path} is not a Jupyter notebook ({first[:160]}); give an .ipynb file") from None


def _assigned_names(path: Path) -> list[str]:
    """Names assigned at top level of the notebook's cell tagged `parameters` ([] when there is none)."""
    nb = read_notebook(path)
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            tree = ast.parse(cell.source)
            return [t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Name)]
    return []


def notebook_parameters(path: str | Path) -> dict[str, dict]:
    """The notebook's parameters: {name: {"default": python value, "type": type name, "help": comment}}.

    Raises ParameterError when papermill cannot read a parameter the cell assigns (it gives up on any line with
    two "=", such as a comment holding ">=").
    """
    unread = _assigned_names(Path(path))  # reads (and checks) the notebook first
    found = papermill.inspect_notebook(str(path))
    unread = [n for n in unread if n not in found]
    if unread:
        raise ParameterError(
            f"{Path(path).name}: papermill cannot parse parameter(s) {', '.join(unread)} in the parameters cell; "
            "keep each on one line with a single '=' (no '=' inside its comment)"
        )
    out = {}
    for name, info in found.items():
        try:
            default = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError):
            default = info["default"]
        out[name] = {"default": default, "type": type(default).__name__, "help": info.get("help", "")}
    return out


def _type_check(default) -> Check:
    """The check of a parameter of a notebook that is no chapter of the book: the type of its default (an int is
    accepted where a float is expected; a None default accepts anything)."""
    if default is None:
        return Check("any Python literal", lambda v: True)
    if isinstance(default, bool):
        return FLAG
    if isinstance(default, float):
        return Check(f"a number like {default!r}", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
    kind = type(default)
    return Check(f"a {kind.__name__} like {default!r}", lambda v: isinstance(v, kind) and not isinstance(v, bool))


def governing_chapter(path: str | Path) -> Chapter:
    """What governs the notebook's parameters. A chapter of the book (metadata ``toxlib.chapter`` names its
    declaration in ``toxlib.chapters``): that declaration, after checking that the notebook's parameters cell has
    its names and defaults (ParameterError naming the differences and the fix otherwise). Another notebook: a
    declaration made from its parameters cell, each parameter checked for the type of its default, with no
    profile but the default (and smoke, which then runs the defaults)."""
    path = Path(path)
    cell = notebook_parameters(path)
    named = read_notebook(path).metadata.get("toxlib", {}).get("chapter")
    if named is None:
        return Chapter(path.stem, path.stem, "", tuple(Parameter(n, info["default"], _type_check(info["default"]),
                                                                 info["help"].replace("=", "-") or n)
                                                       for n, info in cell.items()), {"smoke": {}})
    try:
        declared = chapter(named)
    except (ImportError, AttributeError, TypeError) as exc:
        raise UnknownNameError(f"{path.name} names chapter {named!r} in its metadata toxlib.chapter, which cannot "
                               f"be read ({type(exc).__name__}: {exc})") from None
    if declared is None:
        raise UnknownNameError(f"{path.name} names chapter {named!r} in its metadata toxlib.chapter, which "
                               f"toxlib.chapters does not declare; chapters: {', '.join(STEMS)}")
    found = {n: info["default"] for n, info in cell.items()}
    if found != declared.defaults() or list(found) != list(declared.defaults()):
        wrong = sorted(set(found) ^ set(declared.defaults())) + sorted(
            n for n in set(found) & set(declared.defaults()) if found[n] != declared.defaults()[n])
        raise ParameterError(
            f"the parameters cell of {path.name} differs from its declaration {_where(named)} "
            f"(in {', '.join(wrong) or 'the order of its parameters'}): change the declaration, then write the "
            "cell from it with " + ("python -m toxlib chapters --write-cells" if ":" not in named
                                    else "its cell_source()"))
    return declared


def _where(named: str) -> str:
    """Where a declaration lives, for a message: the book's chapter module, or the "module:ATTRIBUTE" named."""
    return f"toxlib/chapters/{named}.py" if ":" not in named else named


def run_values(path: str | Path, profile: str = "default", given: dict | None = None) -> dict:
    """The values a run of the notebook passes to papermill: those ``profile`` sets with ``given`` over them
    (texts parsed to each parameter's type), each checked (``governing_chapter``); UnknownNameError for a name
    that is not a parameter, ParameterError for a value its check refuses or a profile the chapter lacks."""
    return governing_chapter(path).chosen(profile, given)


FACTS_MARKER = "toxlib-run-facts:"
FACTS_TAG = "toxlib-run-facts"


def _facts_cell() -> nbformat.NotebookNode:
    """A code cell printing kernel_facts() as JSON; self-contained, so it reports even a toxlib without runner."""
    code = "\n".join(["import os, platform, subprocess", "from pathlib import Path", "",
                      f"DECIDING_PATHS = {DECIDING_PATHS!r}", inspect.getsource(uncommitted_files),
                      inspect.getsource(git_commit), inspect.getsource(machine_description),
                      inspect.getsource(library_versions), inspect.getsource(kernel_facts)])
    source = (f"import json as _json\n_ns = {{}}\nexec({code!r}, _ns)\n"
              f"print({FACTS_MARKER!r} + _json.dumps(_ns['kernel_facts']()))\ndel _ns, _json")
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = [FACTS_TAG]
    return cell


#: the first words of the error the first cell raises when the kernel imports another toxlib than the runner's
OTHER_CHECKOUT = "toxlib-other-checkout:"


def checkout_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` with PYTHONPATH starting with the checkout that holds the toxlib this process imported, so a kernel
    started with it imports that toxlib, not whichever one its Python has installed (two clones sharing one
    virtual environment each run their own code); unchanged for a toxlib installed from a wheel."""
    env = dict(env or {})
    if not paths.in_checkout():  # installed from a wheel: the kernel's Python imports it already
        return env
    rest = env.get("PYTHONPATH", settings.text("PYTHONPATH", ""))
    root = str(paths.PACKAGE_DIR.parent)
    env["PYTHONPATH"] = os.pathsep.join([root, *[p for p in rest.split(os.pathsep) if p and p != root]])
    return env


def _quiet_cell(chapter: str = "") -> nbformat.NotebookNode:
    """A first code cell that refuses to go on when the kernel imports another toxlib than the one running the
    notebook (``OTHER_CHECKOUT``), keeps the libraries' bars and warnings out of the pages
    (``toxlib.common.progress.quiet_libraries``) and names the chapter for the record's usage log
    (``TOXLIB_RECORD_CHAPTER``); it prints nothing and is removed with the facts cell."""
    expected = str(paths.PACKAGE_DIR)
    check = ("import pathlib as _pathlib, toxlib as _toxlib\n"
             f"if _pathlib.Path(_toxlib.__file__).resolve().parent != _pathlib.Path({expected!r}):\n"
             f"    raise ImportError({OTHER_CHECKOUT!r} + f' the kernel imports toxlib from "
             "{_pathlib.Path(_toxlib.__file__).resolve().parent}, not from ' + "
             f"{expected!r})\n"
             "del _pathlib, _toxlib\n")
    named = f"import os as _os\n_os.environ['TOXLIB_RECORD_CHAPTER'] = {chapter!r}\ndel _os\n" if chapter else ""
    source = check + named + "from toxlib.common.progress import quiet_libraries as _quiet\n_quiet()\ndel _quiet"
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = [FACTS_TAG]
    return cell


def _drop_progress(nb: nbformat.NotebookNode) -> int:
    """Remove the progress lines of toxlib's bars (outputs marked with ``progress.PROGRESS_METADATA``) from every
    cell of ``nb``: the book shows what a chapter computed, not how long each step took. Returns how many."""
    dropped = 0
    for cell in nb.cells:
        kept = [o for o in cell.get("outputs", []) if not o.get("metadata", {}).get("toxlib", {}).get("progress")]
        dropped += len(cell.get("outputs", [])) - len(kept)
        if "outputs" in cell:
            cell.outputs = kept
    return dropped


def _pop_kernel_facts(nb: nbformat.NotebookNode) -> dict | None:
    """Remove the facts cell from ``nb`` and return what it printed (None when it did not run)."""
    facts = None
    for cell in nb.cells:
        if FACTS_TAG in cell.metadata.get("tags", []):
            for out in cell.get("outputs", []):
                text = out.get("text", "") if out.get("output_type") == "stream" else ""
                for line in text.splitlines():
                    if line.startswith(FACTS_MARKER):
                        facts = json.loads(line[len(FACTS_MARKER):])
    nb.cells = [c for c in nb.cells if FACTS_TAG not in c.metadata.get("tags", [])]
    return facts


def _repo_relative(path: Path) -> str:
    """``path`` relative to the repository root (POSIX), or its bare name when it lies outside the checkout."""
    try:
        return path.resolve().relative_to(paths.project_root()).as_posix()
    except (ValueError, ToxlibError):
        return path.name


environment = settings.overridden  # set variables the papermill kernel inherits, restored afterwards


def _chapter_run_cell(run: dict) -> nbformat.NotebookNode:
    params = run["parameters"]
    shown = ", ".join(f"`{k}={v!r}`" for k, v in params.items()) if params else "the defaults in the parameters cell"
    profile = run.get("profile", "default")
    which = "" if profile == "default" else f" with the {profile} profile,"
    libraries = f" with {run['libraries']}" if run.get("libraries") else ""
    cpu = f" ({run['cpu']})" if run.get("cpu") else ""
    samples = f" Rows: {run['samples']}." if run.get("samples") else ""
    changed = run.get("uncommitted") or []
    dirty = (f" Uncommitted changes to what decides the numbers: {', '.join(f'`{f}`' for f in changed[:8])}"
             + (f" and {len(changed) - 8} more" if len(changed) > 8 else "") + "." if changed else "")
    text = (
        "```{admonition} Run record\n:class: note\n"
        f"Executed{which} with {shown} by toxlib {run['toxlib_version']} (commit `{run['commit']}`, "
        f"imported from `{run.get('toxlib_path', 'toxlib')}`) on {run['machine']}{cpu}{libraries}, "
        f"finished {run['finished']} in {run['wall_s']:.1f} s.{dirty}{samples}\n```"
    )
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = [CHAPTER_RUN_TAG]
    return cell


def default_output(path: Path, smoke: bool) -> Path:
    """Where ``run_notebook`` writes when no output is given: in place, or for a smoke run a copy under
    ``paths.smoke_dir()`` (so tiny runs never overwrite a committed notebook)."""
    if not smoke or path.is_relative_to(paths.smoke_dir()):
        return path
    try:
        relative = path.relative_to(paths.project_root())
    except ValueError:
        relative = Path("runs") / path.name
    return paths.smoke_dir() / "src" / relative


def run_notebook(
    path: str | Path,
    parameters: dict | None = None,
    output: str | Path | None = None,
    env: dict[str, str] | None = None,
    progress: bool = True,
    profile: str | None = None,
    kernel=None,
) -> dict:
    """Execute ``path`` with papermill and write the executed notebook to ``output``.

    parameters: {name: value}; strings are parsed to the parameter's type. profile: "default" (the parameters
    cell), "smoke" or "paper" (see the module docstring); explicit parameters win over the profile's. A smoke run's
    results go to ``paths.smoke_results_dir()`` unless
    TOXLIB_RESULTS_DIR is set (in ``env`` or the environment), and the default output is a copy under
    ``paths.smoke_dir()``. output: default in place (not smoke). env: extra environment variables for the kernel.
    kernel: a kernel manager already started for this notebook (``toxlib.book_build.kernels.start_kernel`` with the same
    ``env`` and the notebook's folder as cwd); it is used and shut down here. None: one is started here the same way
    (nothing preloaded).
    The output is replaced only when the run has finished (an interrupted run leaves it untouched); a notebook that
    fails is written to ``output`` when one was given, else beside it as <stem>.failed.ipynb.
    Returns the chapter run (also stored in the output's metadata under "toxlib" and shown as its last cell).
    """
    try:
        return _run(path, parameters, output, env, progress, profile or "default", kernel)
    finally:
        if kernel is not None:
            shutdown(kernel)


def _run(path, parameters, output, env, progress, profile, kernel) -> dict:
    path = Path(path).resolve()
    read_notebook(path)  # a clear one-line error before anything starts
    smoke = profile == "smoke"
    output = Path(output).resolve() if output else default_output(path, smoke)
    checked = run_values(path, profile, parameters)
    env = checkout_env(env)
    if smoke and "TOXLIB_RESULTS_DIR" not in env and not settings.raw("TOXLIB_RESULTS_DIR"):
        env["TOXLIB_RESULTS_DIR"] = str(paths.smoke_results_dir())
    output.parent.mkdir(parents=True, exist_ok=True)
    source = read_notebook(path)
    source.cells.insert(0, _quiet_cell(path.stem))
    source.cells.append(_facts_cell())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="toxlib-run-") as scratch:
        staged_input = Path(scratch) / path.name
        nbformat.write(source, str(staged_input))
        # beside the output so the final os.replace is atomic; .json so no book build picks up a leftover
        partial = new_partial(output)
        try:
            with environment(env):
                own = start_kernel(path.parent, preload=()) if kernel is None else None
                try:
                    papermill.execute_notebook(
                        str(staged_input), str(partial), parameters=checked, cwd=str(path.parent),
                        progress_bar=progress, kernel_name="python3", km=kernel or own,
                    )
                finally:
                    if own is not None:
                        shutdown(own)
        except papermill.PapermillExecutionError as exc:
            if str(exc.evalue).startswith(OTHER_CHECKOUT):
                partial.unlink(missing_ok=True)
                raise ToxlibError(
                    f"{path.name} was not run: {exc.evalue.removeprefix(OTHER_CHECKOUT).strip()}, the checkout "
                    "this command runs. Start the command with the Python of this checkout's environment, or "
                    "install toxlib from it (pip install -e .), and give the kernel no PYTHONPATH of its own"
                ) from None
            failed = output if output != path else output.with_name(f"{output.stem}.failed.ipynb")
            _finish(partial, failed, path, output=failed)
            raise NotebookExecutionError(
                f"{path.name} failed in cell {exc.exec_count} with {exc.ename}: {exc.evalue}\n"
                f"The executed notebook, with the traceback in that cell, is at {failed}"
            ) from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    nb = nbformat.read(str(partial), as_version=4)
    _drop_progress(nb)
    facts = _pop_kernel_facts(nb) or {"toxlib_version": toxlib.__version__, "commit": "unknown (no kernel facts)",
                                      "machine": machine_description(), "libraries": library_versions()}
    run = {
        "notebook": path.name,
        "parameters": checked,
        "profile": profile,
        "smoke": smoke,
        "toxlib_version": facts["toxlib_version"],
        "toxlib_path": _repo_relative(Path(facts["toxlib_path"])) if facts.get("toxlib_path") else "unknown",
        "commit": facts["commit"],
        "uncommitted": facts.get("uncommitted", []),
        "machine": facts["machine"],
        "cpu": facts.get("cpu", ""),
        "libraries": facts.get("libraries", ""),
        "samples": facts.get("samples", ""),
        "rows": facts.get("rows", {}),
        "finished": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "wall_s": time.perf_counter() - started,
    }
    note_build(path.stem, {k: run[k] for k in ("commit", "machine", "cpu", "libraries", "toxlib_version")}
               | {"date": run["finished"][:10]})  # the record's provenance, when a usage log is kept
    nb.cells = [c for c in nb.cells if CHAPTER_RUN_TAG not in c.metadata.get("tags", [])]
    nb.cells.append(_chapter_run_cell(run))
    nb.metadata.setdefault("toxlib", {})["last_run"] = run
    _set_papermill_paths(nb, path, output)
    nbformat.write(nb, str(partial))
    paths.replace_keeping_mode(partial, output)
    return run


def _set_papermill_paths(nb: nbformat.NotebookNode, path: Path, output: Path) -> None:
    """papermill's input_path/output_path metadata relative to the repository root, not absolute."""
    meta = nb.metadata.setdefault("papermill", {})
    meta["input_path"] = _repo_relative(path)
    meta["output_path"] = _repo_relative(output)


def _finish(partial: Path, target: Path, path: Path, output: Path) -> None:
    """Move a failed run's partial notebook to ``target`` (facts cell removed, papermill paths relative)."""
    nb = nbformat.read(str(partial), as_version=4)
    _pop_kernel_facts(nb)
    _set_papermill_paths(nb, path, output)
    nbformat.write(nb, str(partial))
    paths.replace_keeping_mode(partial, target)
