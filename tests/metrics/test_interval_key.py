"""Bootstrap intervals kept between runs (``toxlib.metrics.interval_key``, kept through ``toxlib.common.memo`` in the
store's artefact cache): same data, statistic and settings read back; anything that changes the bounds computes them
again; moving code changes no key."""

from __future__ import annotations

import numpy as np
import pytest

import toxlib.store  # noqa: F401  (installs the artefact cache as the memo's keeper)
from toxlib.metrics import interval_key as interval_cache
from toxlib.metrics import uncertainty
from toxlib.metrics.interval_key import fingerprint, interval_key

SETTINGS = {"n_resamples": 999}
THRESHOLD = 0.5


def above_threshold(rows):
    return float(np.mean(rows > THRESHOLD))


@pytest.fixture()
def counted(monkeypatch, tmp_path):
    """Counts the real scipy bootstraps run, with the memo in a fresh cache directory."""
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(uncertainty, "N_RESAMPLES", 999)
    calls = []
    real = uncertainty._scipy_bootstrap

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(uncertainty, "_scipy_bootstrap", counting)
    return calls


def test_the_same_interval_is_computed_once_and_read_back_identically(counted, tmp_path):
    values = np.random.default_rng(1).random((40, 3))
    first = uncertainty.unit_interval(values, lambda rows: float(rows.max(axis=1).mean()))
    again = uncertainty.unit_interval(values.copy(), lambda rows: float(rows.max(axis=1).mean()))
    assert len(counted) == 1 and again == first
    assert len(list((tmp_path / "intervals").glob("*.json"))) == 1


def test_other_data_or_settings_compute_again(counted, monkeypatch):
    a = np.random.default_rng(2).random(30)
    b = a + 0.1
    uncertainty.paired_interval(a, b)
    changed = a.copy()
    changed[7] += 1e-9  # one value in its last digits
    uncertainty.paired_interval(changed, b)
    uncertainty.paired_interval(a, b, relative=True)  # a closure value of the statistic
    monkeypatch.setattr(uncertainty, "N_RESAMPLES", 1999)
    uncertainty.paired_interval(a, b)
    assert len(counted) == 4


def test_a_changed_global_of_the_statistic_changes_the_key():
    data = (np.arange(10.0),)
    before = interval_key(data, above_threshold, SETTINGS)
    globals()["THRESHOLD"] = 0.6
    try:
        assert interval_key(data, above_threshold, SETTINGS) != before
    finally:
        globals()["THRESHOLD"] = 0.5
    assert interval_key(data, above_threshold, SETTINGS) == before


def test_a_statistic_over_an_unknown_object_is_computed_every_time(counted):
    class Opaque:
        scale = 1.0

    opaque = Opaque()
    assert interval_key((np.arange(5.0),), lambda rows: float(rows.mean() * opaque.scale), SETTINGS) is None
    values = np.random.default_rng(3).random((20, 2))
    for _ in range(2):
        uncertainty.unit_interval(values, lambda rows: float(rows.mean() * opaque.scale))
    assert len(counted) == 2


def test_a_damaged_entry_is_computed_again(counted, tmp_path):
    a = np.random.default_rng(4).random(25)
    first = uncertainty.paired_interval(a, a[::-1])
    [entry] = (tmp_path / "intervals").glob("*.json")
    entry.write_text("{not json")
    assert uncertainty.paired_interval(a, a[::-1]) == first and len(counted) == 2


def test_fingerprints_tell_code_closures_and_arrays_apart():
    def make(k):
        return lambda x: x * k

    assert fingerprint(make(2)) != fingerprint(make(3))
    assert fingerprint(make(2)) == fingerprint(make(2))
    assert fingerprint(lambda x: x + 1) != fingerprint(lambda x: x - 1)
    assert fingerprint(np.zeros(3, dtype=np.float32)) != fingerprint(np.zeros(3, dtype=np.float64))
    assert fingerprint(np.mean) == "library:numpy.mean"
    with pytest.raises(interval_cache.Unfingerprintable):
        fingerprint(object())


def test_a_function_moved_to_another_module_keeps_its_fingerprint():
    def statistic(rows):
        return float(np.mean(rows > THRESHOLD))

    before = fingerprint(statistic)
    statistic.__module__, statistic.__qualname__ = "toxlib.elsewhere.module", "renamed"
    assert fingerprint(statistic) == before
