"""A report run again prints its estimate without timing the model a second time: the rates an earlier report timed
for the same model on this machine are reused (``toxlib.reportcard.timed_rates``), saying when they were timed;
asked to time (``calibrate=True``, the Your model page's ``measure``) it times again; another model, a timing that
failed, or a damaged file are timed afresh."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from toxlib.reportcard import card
from toxlib.reportcard.estimate import Rates
from toxlib.reportcard.timed_rates import RATES_FILE


@pytest.fixture()
def timings(monkeypatch, tmp_path):
    """Each timing as the model it timed. The timing and the size-based rates are stand-ins (the estimate's tests
    time a real model)."""
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "cache"))
    timed = []
    monkeypatch.setattr(card, "load", lambda name, **kwargs: name)

    def measure(lm):
        timed.append(lm)
        if lm == "broken":
            raise ValueError("no EOS token")
        return Rates("cpu", 100.0 + len(timed), 1000.0, 50.0, "timed on this machine, median of 3 runs")
    monkeypatch.setattr(card, "measure_rates", measure)
    monkeypatch.setattr(card, "flops_rates", lambda arch, device: Rates(device, 1.0, 1.0, 1.0, "from its size"))
    return timed


def _rates(name: str, reuse: bool = True) -> Rates:
    facts = SimpleNamespace(kind="causal", target=name, arch={})
    return card._device_rates(name, "cpu", facts, {}, True, reuse=reuse)


def test_a_second_report_reuses_the_rates_the_first_timed(timings, tmp_path):
    first = _rates("model-a")
    again = _rates("model-a")
    assert timings == ["model-a"]  # timed once
    assert (again.gen, again.read, again.texts) == (first.gen, first.read, first.texts)
    assert again.how.startswith(first.how) and "timed by an earlier report at" in again.how
    fresh = _rates("model-a", reuse=False)  # asked to time: times again, and keeps the new rates
    assert timings == ["model-a", "model-a"] and fresh.gen != first.gen
    assert _rates("model-a").gen == fresh.gen
    _rates("model-b")  # another model is timed
    assert timings[-1] == "model-b"


def test_a_failed_timing_is_not_kept_and_a_damaged_file_times_again(timings, tmp_path):
    for _ in range(2):
        assert "timing it here failed (ValueError: no EOS token)" in _rates("broken").how
    assert timings == ["broken", "broken"]
    _rates("model-a")
    (tmp_path / "cache" / RATES_FILE).write_text("{not json")
    assert "earlier report" not in _rates("model-a").how
    assert timings[-1] == "model-a" and len(timings) == 4
