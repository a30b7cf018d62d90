"""Whether a memo is kept does not depend on which toxlib module a process imported first."""

from __future__ import annotations

import subprocess
import sys

import pytest

FIRST_IMPORTS = ["toxlib.metrics.uncertainty", "toxlib.common.memo", "toxlib.metrics", "toxlib.store"]


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_the_artefact_cache_keeps_memos_whatever_was_imported_first(module):
    code = (f"import {module}\nfrom toxlib.common import memo\n"
            "keeper = memo._keeper\nprint(getattr(keeper, '__module__', None), getattr(keeper, '__name__', None))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["toxlib.store.artefacts", "recorded_json"], f"after importing {module} first: {out}"
