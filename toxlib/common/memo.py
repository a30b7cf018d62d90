"""Values worth keeping between runs, for code that must not know where they are kept.

``kept(name, compute)`` returns ``compute()``'s JSON-ready value through the keeper ``keep_with`` installed, else
computes it every time. ``toxlib.store`` installs its artefact cache when it is imported
(``toxlib.store.artefacts.recorded_json``: the sample record's copy, else the user's cache), and ``import toxlib``
imports it, whatever module was asked for: the metrics keep their bootstrap bounds there without depending on any
storage (``tests/test_import_graph.py`` holds the metrics to importing nothing of ``store``), and no import order
decides whether they are kept.
"""

from __future__ import annotations

from typing import Callable

_keeper: Callable[[str, Callable[[], object]], object] | None = None


def keep_with(keeper: Callable[[str, Callable[[], object]], object] | None) -> None:
    """Keep values with ``keeper(name, compute)`` from now on (None: keep nothing)."""
    global _keeper
    _keeper = keeper


def kept(name: str, compute: Callable[[], object]):
    """``compute()``, or the value kept under ``name`` ("<kind>/<file name>") when a keeper has one."""
    return compute() if _keeper is None else _keeper(name, compute)
