"""Paths as executed notebooks show them: relative to the repository, never the machine's absolute path.

``ShownPath`` is a ``pathlib.Path`` (open it, read it, pass it on) whose repr, the text a notebook cell ending in
it stores and the book prints, is the path relative to the project root: ``ShownPath('data/results/sass/x.png')``
instead of ``PosixPath('/home/me/checkout/data/results/sass/x.png')``.
"""

from __future__ import annotations

from pathlib import Path

from toxlib.store import paths


class ShownPath(type(Path())):
    """An absolute path whose repr is relative to the project root (outside it: to the results folder, else the
    bare file name)."""

    def shown(self) -> str:
        for base in (paths.companion_root(), paths.results_dir()):
            if self.is_relative_to(base):
                return self.relative_to(base).as_posix()
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.shown()!r})"
