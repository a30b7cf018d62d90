"""Every test file under tests/ is collected: no folder of tests matches pytest's ``norecursedirs`` (its default list
skips any folder named ``build``, which is where the book build's tests live)."""

from __future__ import annotations

import fnmatch
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_folder_of_tests_is_skipped_by_norecursedirs(pytestconfig):
    patterns = pytestconfig.getini("norecursedirs")
    skipped = [str(folder.relative_to(TESTS)) for folder in TESTS.rglob("*") if folder.is_dir()
               and any(fnmatch.fnmatch(folder.name, p) for p in patterns) and any(folder.rglob("test_*.py"))]
    assert skipped == [], f"pytest would not collect the tests in {skipped}: norecursedirs {patterns}"
