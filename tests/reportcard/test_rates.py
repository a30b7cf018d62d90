"""Timing a model for the estimate: each rate is the median of repeated runs, and a busy machine is said."""

from __future__ import annotations

import itertools

import pandas as pd

from toxlib.chapters import chapter
from toxlib.reportcard import estimate
from toxlib.reportcard.page_rates import budget_headers


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


def test_a_report_the_record_holds_in_full_times_nothing_and_one_with_work_left_times_the_model(monkeypatch):
    """A bundled model at ``decide`` reads every row from the sample record: its estimate is the chapters' fixed
    costs, and no seconds go to timing a model whose rates would charge nothing. At ``paper`` rtp_prompted has work
    left (the paper's 100,000 prompts against the book's sample), and the model is timed."""
    import math

    from toxlib.reportcard import card

    timed = []
    monkeypatch.setattr(card, "_device_rates", lambda name, dev, *a, **k: timed.append(dev) or estimate.Rates(
        dev, 100.0, 1000.0, 10.0, "timed (stand-in)"))
    monkeypatch.setattr(card, "_devices", lambda device: ("cpu", ["cpu"]))
    held = card.plan_report("smollm2-135m", "decide", chapters=["safety_score", "sass"])
    assert timed == [] and held.rates["cpu"].how.startswith("not timed: the sample record holds every row")
    overheads = [estimate.overhead_seconds(card.chapter_notebook(card.paths.project_root(), p.stem))
                 for p in held.chapters]
    assert [p.estimates["cpu"] for p in held.chapters] == overheads and all(s > 0 for s in overheads)
    assert "rates on cpu: not timed" in card.estimate_text(held) and "nan" not in card.estimate_text(held)
    left = card.plan_report("smollm2-135m", "paper", chapters=["rtp_prompted"])
    overhead = estimate.overhead_seconds(card.chapter_notebook(card.paths.project_root(), "rtp_prompted"))
    assert timed == ["cpu"] and math.isfinite(left.chapters[0].estimates["cpu"])
    assert left.chapters[0].estimates["cpu"] > overhead
    card.plan_report("smollm2-135m", "decide", chapters=["safety_score"], calibrate=True)
    assert timed == ["cpu", "cpu"]  # asked to time (the page's budgets table needs rates), it times


def test_the_budgets_table_names_each_chapter_column_by_its_title_in_minutes():
    table = pd.DataFrame(columns=["budget", "rtp_prompted", "sass", "all chapters (min)", "machine"])
    headers = budget_headers(table)
    assert headers == {"rtp_prompted": f"{chapter('rtp_prompted').title} (min)", "sass": "SASS (min)"}
