"""Execute one notebook with papermill: parameters checked against its `parameters` cell, a run record appended.

Profiles: a notebook declares its parameter sets in one place, its metadata ``toxlib.profiles``: ``{"smoke": {...},
"paper": {...}}``. ``default`` is the parameters cell itself; ``smoke`` holds tiny CI parameters; ``paper`` the
paper's sizes wherever the data exist here. Explicit parameters override a profile's. A smoke run writes a copy
under _build/smoke (notebook and results); a paper run is a real run: like a default run it executes in place and
writes the committed data/results/ unless given an output (``-o``) and TOXLIB_RESULTS_DIR. Execution writes to a
temporary file beside the output and replaces the output only when the run has finished, so an interrupted or killed
run leaves the previous notebook as it was. The run record's toxlib version and commit are read inside the kernel
(the toxlib the notebook imported), by a cell appended for the run and removed from the output.
"""

from __future__ import annotations

import ast
import datetime as dt
import inspect
import json
import math
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import nbformat
import papermill

import toxlib
from toxlib.build.kernels import shutdown
from toxlib.build.machine import git_commit, kernel_facts, library_versions, machine_description
from toxlib.common.errors import InputFileError, NotebookExecutionError, ParameterError, ToxlibError, UnknownNameError
from toxlib.scorers import known_scorers
from toxlib.store import paths
from toxlib.store.record import note_build

_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


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


PROFILES = ("default", "smoke", "paper")


def notebook_profiles(path: str | Path) -> dict[str, dict]:
    """The notebook's declared profiles: {"default": {}, "smoke": {...}, "paper": {...}} (a profile it does not
    declare is absent, except default and smoke, which are {} when absent)."""
    meta = read_notebook(path).metadata.get("toxlib", {})
    declared = dict(meta.get("profiles", {}))
    unknown = sorted(set(declared) - set(PROFILES))
    if unknown:
        raise UnknownNameError(f"{Path(path).name} declares unknown profile(s) {', '.join(unknown)} in metadata "
                               f"toxlib.profiles; profiles are {', '.join(PROFILES)}")
    if "default" in declared and declared["default"]:
        raise ParameterError(f"{Path(path).name}: the default profile is the parameters cell; change its defaults "
                             "there instead of declaring toxlib.profiles.default")
    out = {"default": {}, "smoke": dict(declared.get("smoke", {}))}
    if "paper" in declared:
        out["paper"] = dict(declared["paper"])
    return out


def profile_parameters(path: str | Path, profile: str) -> dict:
    """The parameters ``profile`` sets (unchecked; ``check_parameters`` checks them). UnknownNameError for a profile
    name toxlib does not know; ParameterError when the notebook does not declare it (saying where to)."""
    if profile not in PROFILES:
        raise UnknownNameError(f"unknown profile {profile!r}; profiles are {', '.join(PROFILES)}")
    profiles = notebook_profiles(path)
    if profile not in profiles:
        raise ParameterError(f"{Path(path).name} declares no {profile!r} profile; add its parameters to the "
                             f"notebook metadata toxlib.profiles.{profile} (an empty dict when the defaults are it)")
    return profiles[profile]


def _check_type(name: str, value, default):
    """``value`` if it has the type of ``default`` (an int where a float is expected is widened); else
    ParameterError."""
    if default is None:
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    same = isinstance(value, bool) if isinstance(default, bool) else (
        isinstance(value, type(default)) and not isinstance(value, bool))
    if not same:
        raise ParameterError(f"parameter {name!r} expects a {type(default).__name__} like {default!r}, got {value!r}")
    return value


def coerce(name: str, value, default):
    """Parse ``value`` (a command-line string or a Python value) to the type of ``default``."""
    if isinstance(default, str) or not isinstance(value, str):
        return _check_type(name, value, default)
    text = value.strip()
    if isinstance(default, bool):
        if text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        raise ParameterError(f"parameter {name!r} is a bool: give true or false, not {value!r}")
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if default is None:
            return value
        raise ParameterError(
            f"parameter {name!r} expects a {type(default).__name__} like {default!r}, could not parse {value!r}"
        ) from None
    return _check_type(name, parsed, default)


def check_parameters(path: str | Path, given: dict) -> dict:
    """``given`` with each value coerced to its parameter's type and checked for meaning against the chapter's
    declared rules (``parameter_rules``); unknown names raise UnknownNameError, a value outside its rule
    ParameterError naming the parameter, the value and what is allowed."""
    known = notebook_parameters(path)
    unknown = sorted(set(given) - set(known))
    if unknown:
        listing = "; ".join(f"{n} ({k['type']}, default {k['default']!r})" for n, k in known.items())
        raise UnknownNameError(
            f"unknown parameter(s) {', '.join(unknown)} for notebook {Path(path).name}; valid parameters: {listing}"
        )
    values = {name: coerce(name, value, known[name]["default"]) for name, value in given.items()}
    rules = parameter_rules(path)
    for name, value in values.items():
        if name in rules:
            check_meaning(name, value, rules[name], Path(path).name)
    return values


def _is_count(value, minimum: int = 1) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _known_scorer(name) -> bool:
    return isinstance(name, str) and (name in known_scorers() or name.startswith("hf:"))


#: the rules a chapter may declare (metadata toxlib.checks: {parameter: rule}): name -> (what it allows, its test)
RULES = {
    "count": ("a whole number of at least 1", _is_count),
    "count or 0 for all": ("a whole number of at least 1, or 0 for all", lambda v: _is_count(v, 0)),
    "count or None for all": ("a whole number of at least 1, or None for all", lambda v: v is None or _is_count(v)),
    "count or 0 to skip": ("a whole number of at least 1, or 0 to skip it", lambda v: _is_count(v, 0)),
    "seed": ("a whole number of at least 0", lambda v: _is_count(v, 0)),
    "probability": ("a number from 0 to 1", lambda v: _is_number(v) and 0 <= v <= 1),
    "nucleus mass": ("a number above 0 and at most 1", lambda v: _is_number(v) and 0 < v <= 1),
    "positive": ("a finite number above 0", lambda v: _is_number(v) and v > 0),
    "number": ("a finite number", _is_number),
    "non-empty list": ("a list with at least one entry", lambda v: isinstance(v, list) and bool(v)),
    "models": ("a list of at least one model (bundled name, local directory or hub id)",
               lambda v: isinstance(v, list) and bool(v) and all(isinstance(m, str) and m for m in v)),
    "scorer": ("a known scorer name (python -m toxlib score --help lists them) or hf:<id or dir>", _known_scorer),
    "scorers": ("a list of at least one known scorer name",
                lambda v: isinstance(v, list) and bool(v) and all(_known_scorer(s) for s in v)),
}


def parameter_rules(path: str | Path) -> dict:
    """The chapter's declared rules: metadata toxlib.checks, {parameter: a ``RULES`` name, or {"choices": [...]}
    (one of them) or {"subset": [...]} (a non-empty list of them)}."""
    rules = read_notebook(path).metadata.get("toxlib", {}).get("checks", {})
    for name, rule in rules.items():
        if not ((isinstance(rule, str) and rule in RULES)
                or (isinstance(rule, dict) and rule and set(rule) <= {"choices", "subset"})):
            raise ParameterError(f"{Path(path).name}: metadata toxlib.checks.{name} is {rule!r}, not a known rule "
                                 f"({', '.join(RULES)}, or {{'choices': [...]}} or {{'subset': [...]}})")
    return rules


def check_meaning(name: str, value, rule, notebook: str = "") -> None:
    """ParameterError unless ``value`` is allowed by ``rule`` (see ``RULES``), naming the parameter, the value and
    what is allowed."""
    if isinstance(rule, dict):
        allowed = rule.get("choices") or rule.get("subset")
        ok = (value in allowed if "choices" in rule
              else isinstance(value, list) and bool(value) and all(v in allowed for v in value))
        what = ("one of " if "choices" in rule else "a non-empty list of ") + ", ".join(map(repr, allowed))
    else:
        what, test = RULES[rule]
        ok = test(value)
    if not ok:
        where = f" of {notebook}" if notebook else ""
        raise ParameterError(f"parameter {name!r}{where} is {value!r}: it must be {what}")


FACTS_MARKER = "toxlib-run-facts:"
FACTS_TAG = "toxlib-run-facts"


def _facts_cell() -> nbformat.NotebookNode:
    """A code cell printing kernel_facts() as JSON; self-contained, so it reports even a toxlib without runner."""
    code = "\n".join(["import os, platform, subprocess", "from pathlib import Path", "",
                      inspect.getsource(git_commit), inspect.getsource(machine_description),
                      inspect.getsource(library_versions), inspect.getsource(kernel_facts)])
    source = (f"import json as _json\n_ns = {{}}\nexec({code!r}, _ns)\n"
              f"print({FACTS_MARKER!r} + _json.dumps(_ns['kernel_facts']()))\ndel _ns, _json")
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = [FACTS_TAG]
    return cell


def _quiet_cell(chapter: str = "") -> nbformat.NotebookNode:
    """A first code cell that keeps the libraries' bars and warnings out of the pages
    (``toxlib.common.progress.quiet_libraries``) and names the chapter for the record's usage log
    (``TOXLIB_RECORD_CHAPTER``); it prints nothing and is removed with the facts cell."""
    named = f"import os as _os\n_os.environ['TOXLIB_RECORD_CHAPTER'] = {chapter!r}\ndel _os\n" if chapter else ""
    source = named + "from toxlib.common.progress import quiet_libraries as _quiet\n_quiet()\ndel _quiet"
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


@contextmanager
def environment(overrides: dict[str, str]):
    """Temporarily set environment variables (the papermill kernel inherits them)."""
    saved = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def _run_record_cell(record: dict) -> nbformat.NotebookNode:
    params = record["parameters"]
    shown = ", ".join(f"`{k}={v!r}`" for k, v in params.items()) if params else "the defaults in the parameters cell"
    profile = record.get("profile", "default")
    which = "" if profile == "default" else f" with the {profile} profile,"
    libraries = f" with {record['libraries']}" if record.get("libraries") else ""
    cpu = f" ({record['cpu']})" if record.get("cpu") else ""
    samples = f" Rows: {record['samples']}." if record.get("samples") else ""
    text = (
        "```{admonition} Run record\n:class: note\n"
        f"Executed{which} with {shown} by toxlib {record['toxlib_version']} (commit `{record['commit']}`) "
        f"on {record['machine']}{cpu}{libraries}, finished {record['finished']} in {record['wall_s']:.1f} s."
        f"{samples}\n```"
    )
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = ["toxlib-run-record"]
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
    kernel: a kernel manager already started for this notebook (``toxlib.build.kernels.start_kernel`` with the same
    ``env`` and the notebook's folder as cwd); it is used and shut down here. None: papermill starts one.
    The output is replaced only when the run has finished (an interrupted run leaves it untouched); a notebook that
    fails is written to ``output`` when one was given, else beside it as <stem>.failed.ipynb.
    Returns the run record (also stored in the output's metadata under "toxlib" and shown as its last cell).
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
    wanted = {**profile_parameters(path, profile), **(parameters or {})}
    checked = check_parameters(path, wanted)
    env = dict(env or {})
    if smoke and "TOXLIB_RESULTS_DIR" not in env and not os.environ.get("TOXLIB_RESULTS_DIR"):
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
        fd, partial = tempfile.mkstemp(dir=output.parent, prefix=f".{output.stem}.", suffix=".running.json")
        os.close(fd)
        partial = Path(partial)
        try:
            with environment(env):
                papermill.execute_notebook(
                    str(staged_input), str(partial), parameters=checked, cwd=str(path.parent),
                    progress_bar=progress, kernel_name="python3", **({"km": kernel} if kernel else {}),
                )
        except papermill.PapermillExecutionError as exc:
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
    facts = _pop_kernel_facts(nb) or {"toxlib_version": toxlib.__version__, "commit": "unknown (no kernel record)",
                                      "machine": machine_description(), "libraries": library_versions()}
    record = {
        "notebook": path.name,
        "parameters": checked,
        "profile": profile,
        "smoke": smoke,
        "toxlib_version": facts["toxlib_version"],
        "commit": facts["commit"],
        "machine": facts["machine"],
        "cpu": facts.get("cpu", ""),
        "libraries": facts.get("libraries", ""),
        "samples": facts.get("samples", ""),
        "finished": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "wall_s": time.perf_counter() - started,
    }
    note_build(path.stem, {k: record[k] for k in ("commit", "machine", "cpu", "libraries", "toxlib_version")}
               | {"date": record["finished"][:10]})  # the record's provenance, when a usage log is kept
    nb.cells = [c for c in nb.cells if "toxlib-run-record" not in c.metadata.get("tags", [])]
    nb.cells.append(_run_record_cell(record))
    nb.metadata.setdefault("toxlib", {})["last_run"] = record
    _set_papermill_paths(nb, path, output)
    nbformat.write(nb, str(partial))
    paths.replace_keeping_mode(partial, output)
    return record


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
