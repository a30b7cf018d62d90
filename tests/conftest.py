"""Shared fixtures. Loaders read from a per-session data directory filled from the mirror (no network)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MIRROR = ROOT.parent / "shared" / "data"


def pytest_configure(config):
    if not os.environ.get("TOXLIB_DATA_MIRROR") and DEFAULT_MIRROR.is_dir():
        os.environ["TOXLIB_DATA_MIRROR"] = str(DEFAULT_MIRROR)


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = os.environ.get("TOXLIB_DATA_MIRROR")
    if not path or not Path(path).is_dir():
        pytest.fail("set TOXLIB_DATA_MIRROR to the data mirror (../shared/data here) or run scripts/run_tests.sh")
    return Path(path)


@pytest.fixture(scope="session", autouse=True)
def session_data_dir(tmp_path_factory, mirror):
    """Every test fetches into a fresh directory, so the tests never depend on what a developer fetched."""
    data_dir = tmp_path_factory.mktemp("toxlib-data")
    os.environ["TOXLIB_DATA_DIR"] = str(data_dir)
    return data_dir


@pytest.fixture()
def results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path / "results"
