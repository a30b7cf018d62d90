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
    # Converted bundled models are reused across test runs (converting Gemma takes a minute); every other cache
    # (generations, scores) goes to a per-session directory below.
    from toxlib.store import paths

    os.environ.setdefault("TOXLIB_MODEL_CACHE", str(paths.model_cache_dir()))


def pytest_collection_modifyitems(config, items):
    """Files with a test marked slow (minutes each) run first, each file's tests in their order: spread over
    pytest-xdist's workers a file at a time (the test command's ``--dist loadfile --no-loadscope-reorder``), the long
    files start at once on every worker instead of ending the run on one while the others idle."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = os.environ.get("TOXLIB_DATA_MIRROR")
    if not path or not Path(path).is_dir():
        pytest.fail("set TOXLIB_DATA_MIRROR to the data mirror (../shared/data here) or run scripts/run_tests.sh")
    return Path(path)


@pytest.fixture(scope="session", autouse=True)
def session_data_dir(tmp_path_factory):
    """Every test fetches into a fresh directory, so the tests never depend on what a developer fetched. Unit tests
    run without the mirror; tests marked ``data`` fail at once, saying how to point at it, when it is missing."""
    data_dir = tmp_path_factory.mktemp("toxlib-data")
    os.environ["TOXLIB_DATA_DIR"] = str(data_dir)
    return data_dir


@pytest.fixture(autouse=True)
def _data_mirror_for_marked(request):
    if request.node.get_closest_marker("data"):
        request.getfixturevalue("mirror")


@pytest.fixture(scope="session", autouse=True)
def session_cache_dir(tmp_path_factory):
    cache = tmp_path_factory.mktemp("toxlib-cache")
    os.environ["TOXLIB_CACHE_DIR"] = str(cache)
    return cache


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory) -> dict[str, Path]:
    """Tiny random Llama and Gemma-3 models with a byte-level BPE tokenizer, built offline."""
    from toxlib.models.tiny import tiny_causal_lm

    root = tmp_path_factory.mktemp("tiny-models")
    return {arch: tiny_causal_lm(root / arch, arch=arch) for arch in ("llama", "gemma3")}


@pytest.fixture(scope="session")
def tiny_lm(tiny_model_dirs):
    from toxlib.models import load

    return load(str(tiny_model_dirs["llama"]), device="cpu")


@pytest.fixture()
def results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path / "results"
