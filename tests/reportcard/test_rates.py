"""Timing a model for the estimate: each rate is the median of repeated runs, and a busy machine is said."""

from __future__ import annotations

import itertools

from toxlib.reportcard import estimate


def test_a_rate_is_the_median_of_the_repeats_so_one_slow_run_does_not_move_it(monkeypatch):
    seconds = itertools.chain([1.0, 10.0, 2.0])  # the second run met a busy machine
    monkeypatch.setattr(estimate, "_timed", lambda run: (run(), next(seconds))[1])
    rate = estimate._median_rate(lambda: list(range(100)), len)
    assert estimate.REPEATS == 3 and rate == 50.0  # rates 100, 10 and 50 texts/s


def test_a_load_above_the_cpus_is_said_beside_the_rates(monkeypatch):
    monkeypatch.setattr(estimate.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(estimate.os, "getloadavg", lambda: (2.8, 2.0, 1.5))
    assert estimate.busy_note() == ("; the machine was busy while timing (load 2.8 on 2 CPUs): the rates are low "
                                    "and the estimate long")
    monkeypatch.setattr(estimate.os, "getloadavg", lambda: (1.2, 2.0, 1.5))
    assert estimate.busy_note() == ""
