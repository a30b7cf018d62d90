"""A default build from the sample record writes every committed file of a chapter byte for byte, timing files
included (the chapters show committed benchmark runs unless asked to ``measure``): the generation chapter, whose
speed, roofline and cache tables were the files a rebuild used to change, rebuilt here in a fresh results folder and
a fresh cache, on whatever CPU runs the tests. ``test_chapter_timings`` holds the other timing tables to the same
committed runs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.data, pytest.mark.models]


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_a_default_rebuild_writes_every_committed_file_byte_for_byte(tmp_path):
    from toxlib.book_build.runner import run_notebook

    stem = "generation"
    # a fresh results folder and cache; the converted models are the session's (conftest: converted once, reused)
    env = {"TOXLIB_RESULTS_DIR": str(tmp_path / "results"), "TOXLIB_CACHE_DIR": str(tmp_path / "cache")}
    run_notebook(ROOT / "notebooks" / f"{stem}.ipynb", {}, output=tmp_path / f"{stem}.ipynb", env=env, progress=False)
    committed, built = ROOT / "data" / "results" / stem, tmp_path / "results" / stem
    assert _files(built) == _files(committed)
    differ = [name for name in _files(committed) if (built / name).read_bytes() != (committed / name).read_bytes()]
    assert not differ, f"rebuilt {stem} differs from the committed files in {differ}"
