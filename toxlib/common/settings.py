"""Every environment variable toxlib reads, in one place: its name, what it may be, its default and what it does.

    from toxlib.common import settings
    settings.text("TOXLIB_EXECUTOR")          # -> "local" when unset (the declared default)
    settings.path("TOXLIB_CACHE_DIR")         # -> Path or None when unset
    settings.flag("TOXLIB_RECORD")            # -> True unless "off", "0", "false" or "no"
    settings.whole_number("TOXLIB_THREADS")   # -> int or None; SettingError naming the variable for "two"

No other module of toxlib reads ``os.environ`` by name (``tests/common/test_settings.py`` fails on one that does):
the rest receive values. Asking for a name not declared in ``SETTINGS`` raises KeyError, so a variable cannot be
read without being listed here; ``python -m toxlib settings`` prints the list (the book's "Settings" page,
``book/settings.md``, shows its ``--markdown`` output, and a test holds the two equal).

Some variables are how a parent process hands a value to the chapters' kernels it starts (``set_by`` says who sets
them): the book's runner sets ``TOXLIB_RECORD_CHAPTER`` and the results folder, ``--device`` and ``--no-record`` set
``TOXLIB_DEVICE`` and ``TOXLIB_RECORD`` for every kernel. Model short names are not among them: chapters take them as
the ``model_names`` parameter.

Written by hand: pydantic-settings would read them, but toxlib's variables are read at the moment of use (a test
or a kernel may set one between two calls), which a settings object read once at import does not do.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from toxlib.common.errors import ToxlibError

_OFF = ("off", "0", "false", "no")


class SettingError(ToxlibError, ValueError):
    """An environment variable holds a value its declaration does not allow; the message names both."""


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``name``, ``kind`` (path, text, flag, whole number, list, choice), ``default``
    as the text an unset variable stands for ("" for none), ``meaning`` (one line), ``group`` (where it acts) and
    ``set_by`` (a toxlib component that sets it for the processes it starts; "" when only users set it)."""

    name: str
    kind: str
    default: str
    meaning: str
    group: str
    set_by: str = ""


SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("TOXLIB_DATA_DIR", "path", "<checkout>/data/downloads (installed from a wheel: "
            "<TOXLIB_CACHE_DIR>/downloads)", "where data files are downloaded to", "paths"),
    Setting("TOXLIB_DATA_MIRROR", "path", "", "a local mirror laid out as owner/repo/path, read instead of the "
            "network (the scripts set one when the checkout has a data mirror beside it)", "paths"),
    Setting("TOXLIB_RESULTS_DIR", "path", "<checkout>/data/results (installed from a wheel: ./results)",
            "where chapters write their tables, figures "
            "and claims", "paths", "the book's runner (smoke runs), the report card"),
    Setting("TOXLIB_CACHE_DIR", "path", "$XDG_CACHE_HOME/toxlib or ~/.cache/toxlib", "the user's generation, "
            "score and NLL caches and every other computed artefact", "paths"),
    Setting("TOXLIB_MODEL_CACHE", "path", "<TOXLIB_CACHE_DIR>/models", "bundled models converted to safetensors",
            "paths"),
    Setting("XDG_CACHE_HOME", "path", "~/.cache", "the base of TOXLIB_CACHE_DIR's default", "paths"),
    Setting("TOXLIB_RECORD", "flag", "on", "off: ignore the sample record and recompute (--no-record)", "record",
            "`run` and `book` with --no-record"),
    Setting("TOXLIB_RECORD_DIR", "path", "<checkout>/data/record", "read another sample record", "record"),
    Setting("TOXLIB_RECORD_USAGE", "path", "", "a SQLite file naming every row a build used, for `record write`",
            "record"),
    Setting("TOXLIB_ROWS_LOG", "path", "", "a SQLite file naming the rows one report chapter asked for, so the next "
            "estimate counts those the user's cache holds", "record", "the report card"),
    Setting("TOXLIB_RECORD_CHAPTER", "text", "", "the chapter a kernel runs, named in the usage log and the run "
            "record", "record", "the book's runner"),
    Setting("TOXLIB_EXECUTOR", "choice", "local", "where heavy stages run: local or ray", "compute"),
    Setting("TOXLIB_DEVICE", "text", "cuda when torch sees a GPU, else cpu", "the device every stage runs on: cpu, "
            "cuda, cuda:N", "compute", "`run`, `book` and `report` with --device"),
    Setting("TOXLIB_THREADS", "whole number", "the cores this process may use", "threads for CPU matmuls",
            "compute"),
    Setting("TOXLIB_KEEP_FREED_MEMORY", "flag", "on", "off: leave glibc's malloc settings as they are", "compute"),
    Setting("TOXLIB_SLICED_HEAD", "flag", "on", "off: compute the LM head over the whole vocabulary (for timing "
            "the difference; nothing computed changes)", "compute"),
    Setting("TOXLIB_CUDA_GRAPHS", "flag", "on", "off: decode with the eager loop on a GPU instead of captured CUDA "
            "graphs", "compute"),
    Setting("MKL_CBWR", "text", "", "set: toxlib does not set MKL's conditional numerical reproducibility mode "
            "itself", "compute"),
    Setting("TOXLIB_RAY_NUM_CPUS", "whole number", "the usable cores, at most 8", "CPUs of a local Ray cluster",
            "ray"),
    Setting("TOXLIB_RAY_OBJECT_STORE_MB", "whole number", "512", "object store of a local Ray cluster, in MB", "ray"),
    Setting("RAY_ADDRESS", "text", "", "join this Ray cluster instead of starting a local one", "ray"),
    Setting("HF_HUB_OFFLINE", "flag", "off", "on: never reach the Hugging Face hub (models from its cache only)",
            "models"),
    Setting("PERSPECTIVE_API_KEY", "text", "", "the key sent to the Perspective API (never written to an output)",
            "scorers"),
    Setting("PERSPECTIVE_API_URL", "text", "Google's commentanalyzer.googleapis.com", "another "
            "Perspective-compatible endpoint, such as `toxlib serve`", "scorers"),
    Setting("TOXLIB_SERVE_API_KEYS", "list", "", "comma-separated keys `toxlib serve` accepts (or --keys-file)",
            "scorers"),
    Setting("TOXLIB_PRESTART_KERNELS", "flag", "on", "off: start each chapter's kernel when it runs, not ahead",
            "book"),
    Setting("TOXLIB_REPOSITORY_URL", "text", "the checkout's origin remote", "the repository the book's buttons "
            "link to", "book"),
    Setting("TOXLIB_REPOSITORY_BRANCH", "text", "the checkout's branch, else main", "the branch the launch buttons "
            "open", "book"),
    Setting("PYTHONPATH", "text", "", "kept, after the checkout, in the chapters' kernels", "book"),
)}


def _declared(name: str) -> Setting:
    if name not in SETTINGS:
        raise KeyError(f"{name} is not a declared setting: add it to toxlib.common.settings.SETTINGS")
    return SETTINGS[name]


def raw(name: str) -> str | None:
    """The variable's text as set (stripped), or None when unset or blank. KeyError for an undeclared name."""
    _declared(name)
    value = os.environ.get(name, "").strip()
    return value or None


def is_set(name: str) -> bool:
    """Whether the variable is present in the environment at all (even empty)."""
    _declared(name)
    return name in os.environ


def text(name: str, default: str | None = None) -> str | None:
    """The variable's text, else ``default`` (the caller's, since a declared default may be a description)."""
    value = raw(name)
    return default if value is None else value


def path(name: str) -> Path | None:
    """The variable as an absolute path (``~`` expanded), or None when unset."""
    value = raw(name)
    return None if value is None else Path(value).expanduser().resolve()


def absolute_paths(env: dict[str, str]) -> dict[str, str]:
    """``env`` (an environment for a child process) with each declared path variable it sets made absolute against
    this process's working folder (``~`` expanded), as ``path`` reads it here: a child that runs in another folder
    (a notebook's kernel) then means the same place."""
    return {**env, **{name: str(Path(env[name].strip()).expanduser().resolve()) for name, setting in SETTINGS.items()
                      if setting.kind == "path" and env.get(name, "").strip()}}


def flag(name: str) -> bool:
    """False when the variable is "off", "0", "false" or "no" (any case); True when unset or anything else for a
    default-on flag. A default-off flag (``HF_HUB_OFFLINE``) is True only for "1", "on", "yes" or "true"."""
    setting, value = _declared(name), raw(name)
    if setting.default == "off":
        return value is not None and value.lower() in ("1", "on", "yes", "true")
    return value is None or value.lower() not in _OFF


def whole_number(name: str, minimum: int = 1) -> int | None:
    """The variable as a whole number of at least ``minimum``, or None when unset; SettingError otherwise."""
    value = raw(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise SettingError(f"{name}={value!r}: give a whole number of at least {minimum}, or unset it")
    return number


def items(name: str) -> list[str]:
    """A comma-separated variable's non-blank items ([] when unset)."""
    return [part.strip() for part in (raw(name) or "").split(",") if part.strip()]


def markdown_table() -> str:
    """Every setting as a Markdown table (the book's "Settings" page); defaults as code, so that
    ``<checkout>`` or ``$XDG_CACHE_HOME`` are shown as written."""
    lines = ["| variable | what it does | default | set by toxlib for its child processes |", "|---|---|---|---|"]
    for s in SETTINGS.values():
        default = f"`{s.default}`" if s.default else "(unset)"
        lines.append(f"| `{s.name}` | {s.meaning} | {default} | {s.set_by} |")
    return "\n".join(lines)


def passthrough(names: tuple[str, ...]) -> dict[str, str]:
    """{name: value} of the variables among ``names`` that are set and not blank: what a parent process hands to
    processes it starts (Ray workers), variables toxlib itself need not read (``HF_HOME``) included."""
    return {name: os.environ[name] for name in names if os.environ.get(name, "").strip()}


@contextlib.contextmanager
def overridden(overrides: dict[str, str]):
    """Set environment variables for the duration of a ``with`` block (the kernels papermill starts inherit
    them), then restore each to its earlier value or absence."""
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
