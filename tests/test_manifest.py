"""A source distribution carries the files setup.py copies into the wheel: MANIFEST.in includes every pattern of
pyproject.toml's ``wheel-companion`` (else a wheel built from the sdist, as ``python -m build`` and PyPI installs
do, stops with "matches no file")."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_manifest_includes_every_companion_pattern():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["wheel-companion"]
    included = {line.split(None, 1)[1].strip() for line in (ROOT / "MANIFEST.in").read_text().splitlines()
                if line.startswith("include ")}
    assert set(patterns) <= included, sorted(set(patterns) - included)
    assert "setup.py" in included
    for pattern in patterns:
        assert sorted(ROOT.glob(pattern)), f"{pattern} matches no file in the checkout"
