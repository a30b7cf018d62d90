"""No chapter's numbers depend on the CPU's features through its precision: every chapter that loads a model pins
float32 in its parameters (bf16 rows differ between CPUs: 16 of 1,200 base-model continuations came out the same on
an AMD EPYC and an Intel Xeon with AMX), and nothing the chapters call picks a precision from CPU features."""

from __future__ import annotations

import pytest

from toxlib.book_build.book import toc_notebooks
from toxlib.book_build.runner import notebook_parameters
from toxlib.store.paths import project_root

CHAPTERS = toc_notebooks(project_root())


def test_the_book_has_chapters_with_a_precision():
    assert sum("dtype" in notebook_parameters(path) for path in CHAPTERS) >= 4


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_that_sets_a_precision_pins_float32(path):
    dtype = notebook_parameters(path).get("dtype")
    assert dtype is None or dtype["default"] == "float32", (
        f"{path.name} defaults to dtype={dtype['default']!r}: its rows would depend on the CPU's kernels")


def test_no_toxlib_module_picks_a_precision_from_cpu_features():
    """Only cpu_kernels (which describes the CPU and says where bf16 is row invariant) may read AMX or AVX flags."""
    from pathlib import Path

    import toxlib

    root = Path(toxlib.__file__).parent
    readers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                     if any(probe in p.read_text() for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported",
                                                                "amx_tile", "avx512_bf16")))
    assert readers == ["models/cpu_kernels.py"]
