"""A chapter end to end on Ray: rtp_prompted's smoke profile with ``-p executor ray`` writes the same tables as the
same profile run locally (each run with its own generation and score caches, so both compute everything).

Both runs use float32 and one torch thread, the thread count of each Ray worker (``RayExecutor.cpus_per_worker``):
fp32 scores move in their last bits with the thread count (about 1e-8 between 1 and 2 threads), and the smoke
profile's bootstrap intervals over a handful of prompts are full of ties, so such a difference moved a BCa bound by
0.009 while every generation was identical."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "rtp_prompted.ipynb"

pytestmark = [pytest.mark.slow, pytest.mark.data, pytest.mark.models]


def _tables(folder: Path) -> dict[str, pd.DataFrame]:
    return {p.relative_to(folder).as_posix(): pd.read_csv(p) for p in sorted(folder.rglob("*.csv"))}


def test_rtp_prompted_smoke_profile_on_ray_matches_the_local_run(tmp_path):
    pytest.importorskip("ray")
    from toxlib.book_build.runner import notebook_parameters, run_notebook

    assert "executor" in notebook_parameters(NOTEBOOK), "rtp_prompted lost its executor parameter"
    tables = {}
    for executor in ("local", "ray"):
        env = {"TOXLIB_RESULTS_DIR": str(tmp_path / executor / "results"),
               "TOXLIB_CACHE_DIR": str(tmp_path / executor / "cache"),
               "TOXLIB_RAY_NUM_CPUS": "2", "TOXLIB_RAY_OBJECT_STORE_MB": "128", "TOXLIB_EXECUTOR": "local",
               "TOXLIB_THREADS": "1"}
        record = run_notebook(NOTEBOOK, {"executor": executor, "dtype": "float32"},
                              output=tmp_path / f"rtp_prompted-{executor}.ipynb", profile="smoke", env=env,
                              progress=False)
        assert record["parameters"]["executor"] == executor
        tables[executor] = _tables(tmp_path / executor / "results")
    assert tables["local"], "the local run wrote no tables"
    assert tables["ray"].keys() == tables["local"].keys()
    for name, frame in tables["local"].items():
        pd.testing.assert_frame_equal(tables["ray"][name], frame, obj=name)
