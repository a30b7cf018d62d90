"""Execute one notebook with papermill: parameters checked against its `parameters` cell, a run record appended.

A notebook's tiny CI parameters live in its metadata under ``toxlib.smoke_parameters``.
"""

from __future__ import annotations

import ast
import datetime as dt
import os
import platform
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import nbformat
import papermill

import toxlib
from toxlib import paths
from toxlib.errors import NotebookExecutionError, ParameterError, UnknownNameError

_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


def _assigned_names(path: Path) -> list[str]:
    """Names assigned at top level of the notebook's cell tagged `parameters` ([] when there is none)."""
    nb = nbformat.read(str(path), as_version=4)
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
    found = papermill.inspect_notebook(str(path))
    unread = [n for n in _assigned_names(Path(path)) if n not in found]
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


def smoke_parameters(path: str | Path) -> dict:
    """The tiny parameters CI runs the notebook with (metadata toxlib.smoke_parameters; {} when absent)."""
    nb = nbformat.read(str(path), as_version=4)
    return dict(nb.metadata.get("toxlib", {}).get("smoke_parameters", {}))


def _check_type(name: str, value, default):
    """``value`` if it has the type of ``default`` (an int where a float is expected is widened); else ParameterError."""
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
    """``given`` with each value coerced to its parameter's type; unknown names raise UnknownNameError."""
    known = notebook_parameters(path)
    unknown = sorted(set(given) - set(known))
    if unknown:
        listing = "; ".join(f"{n} ({k['type']}, default {k['default']!r})" for n, k in known.items())
        raise UnknownNameError(
            f"unknown parameter(s) {', '.join(unknown)} for notebook {Path(path).name}; valid parameters: {listing}"
        )
    return {name: coerce(name, value, known[name]["default"]) for name, value in given.items()}


def git_commit(repo: Path) -> str:
    """Short commit of the checkout, with "+dirty" when toxlib has uncommitted changes; "unknown" outside git."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        # Only the library decides results; notebooks and results being rewritten by this very build do not count.
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "toxlib", "pyproject.toml"],
                               cwd=repo, capture_output=True, text=True).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_description() -> str:
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


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
    text = (
        "```{admonition} Run record\n:class: note\n"
        f"Executed with {shown} by toxlib {record['toxlib_version']} (commit `{record['commit']}`) "
        f"on {record['machine']}, finished {record['finished']} in {record['wall_s']:.1f} s.\n```"
    )
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = ["toxlib-run-record"]
    return cell


def run_notebook(
    path: str | Path,
    parameters: dict | None = None,
    output: str | Path | None = None,
    smoke: bool = False,
    env: dict[str, str] | None = None,
    progress: bool = True,
) -> dict:
    """Execute ``path`` with papermill and write the executed notebook to ``output`` (default: in place).

    parameters: {name: value}; strings are parsed to the parameter's type. smoke: start from the notebook's
    smoke_parameters (explicit parameters win). env: extra environment variables for the kernel.
    Returns the run record (also stored in the output's metadata under "toxlib" and shown as its last cell).
    """
    path = Path(path).resolve()
    output = Path(output).resolve() if output else path
    wanted = {**(smoke_parameters(path) if smoke else {}), **(parameters or {})}
    checked = check_parameters(path, wanted)
    commit = git_commit(paths.project_root())
    started = time.perf_counter()
    with environment(env or {}):
        try:
            papermill.execute_notebook(
                str(path), str(output), parameters=checked, cwd=str(path.parent), progress_bar=progress,
                kernel_name="python3",
            )
        except papermill.PapermillExecutionError as exc:
            raise NotebookExecutionError(
                f"{path.name} failed in cell {exc.exec_count} with {exc.ename}: {exc.evalue}\n"
                f"The executed notebook, with the traceback in that cell, is at {output}"
            ) from None
    record = {
        "notebook": path.name,
        "parameters": checked,
        "smoke": smoke,
        "toxlib_version": toxlib.__version__,
        "commit": commit,
        "machine": machine_description(),
        "finished": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "wall_s": time.perf_counter() - started,
    }
    nb = nbformat.read(str(output), as_version=4)
    nb.cells = [c for c in nb.cells if "toxlib-run-record" not in c.metadata.get("tags", [])]
    nb.cells.append(_run_record_cell(record))
    nb.metadata.setdefault("toxlib", {})["last_run"] = record
    nbformat.write(nb, str(output))
    return record
