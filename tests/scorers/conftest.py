"""Fixtures of the scorers' tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    """Requests to the local test servers on 127.0.0.1 go there directly, whatever proxy the environment names."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
