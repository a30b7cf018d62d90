"""Short names a reader gives their own models: {short name: local directory or hub id}.

    name_models({"mine": "/path/to/folder"})   # a chapter does this with its ``model_names`` parameter
    load("mine")                               # loads the folder; tables, claims and figures say "mine"

Each chapter that loads models takes the names as its ``model_names`` parameter and hands them over here before it
loads anything, in its first code cell, where a reader sees it; the report card gives every chapter it runs the
model's name that way. ``name_models`` replaces the names this process knew (a kernel runs one chapter).
"""

from __future__ import annotations

from collections.abc import Mapping

from toxlib.common.errors import ModelUnavailableError
from toxlib.models.bundled import BUNDLED

EXAMPLE = '{"my-model": "/path/to/folder"}'
_names: dict[str, str] = {}


def checked_names(names: Mapping[str, str] | None) -> dict[str, str]:
    """``names`` as a dict of non-empty short names to non-empty folders or hub ids. ModelUnavailableError naming
    the problem when it is not such a mapping, or a short name is a bundled model's."""
    if names is None:
        return {}
    if not isinstance(names, Mapping) or not all(isinstance(k, str) and isinstance(v, str) and k.strip() and
                                                 v.strip() for k, v in names.items()):
        raise ModelUnavailableError(f"model_names must map short names to folders or hub ids, such as {EXAMPLE}; "
                                    f"got {names!r}")
    hidden = sorted(set(names) & set(BUNDLED))
    if hidden:
        raise ModelUnavailableError(f"model_names gives bundled model name(s) {', '.join(hidden)} to other models; "
                                    "choose other names")
    return {k.strip(): v.strip() for k, v in names.items()}


def name_models(names: Mapping[str, str] | None) -> dict[str, str]:
    """Make ``names`` ({short name: folder or hub id}) the short names ``load`` knows in this process, replacing
    any given before; returns them. ModelUnavailableError for a malformed mapping (``checked_names``)."""
    checked = checked_names(names)
    _names.clear()
    _names.update(checked)
    return dict(_names)


def named_models() -> dict[str, str]:
    """The short names this process was given ({} when none)."""
    return dict(_names)


def target_of(name: str, names: Mapping[str, str] | None = None) -> str:
    """What ``name`` stands for: its folder or hub id in ``names`` (default: this process's short names), else
    ``name`` itself."""
    return (named_models() if names is None else dict(names)).get(name, name)


def known_models() -> list[str]:
    """The bundled models' names and the short names this process was given."""
    return list(BUNDLED) + list(_names)
