"""The report's estimate: each chapter's work at a budget follows its parameters (and, at the book's sizes, the
sample record's own work), the seconds follow the rates, and a model too large or of the wrong kind is told so
before anything loads or runs."""

from __future__ import annotations

import pytest

from toxlib.benchmarks.record_cost import record_work
from toxlib.chapters import model_chapters
from toxlib.reportcard.budgets import chapter_values
from toxlib.reportcard.estimate import SD_ROWS, Rates, estimate_seconds
from toxlib.reportcard.work import ChapterWork, chapter_work


@pytest.mark.parametrize("stem,record_kind,field", [("safety_score", "lm_scores", "read_tokens"),
                                                   ("debias_consistency", "generations", None)])
def test_the_decide_budgets_work_is_the_records_own_within_a_fifth(stem, record_kind, field):
    """At the book's sizes a chapter's counted work matches what the record holds for it (keys it uses; a key shared
    with the Your model page's domain check holds a few hundred rows more)."""
    rows = record_work()
    used = rows["chapters"].astype(str).str.split("; ").map(lambda chapters: stem in chapters)
    mine = rows[used & (rows["kind"] == record_kind)
                & rows["model"].astype(str).str.startswith("smollm2")]
    work = chapter_work(stem, chapter_values(stem, "decide", "smollm2-135m"))
    counted = getattr(work, field) if field else work.gen_tokens + work.sd_tokens
    assert 0.8 <= counted / mine["work"].sum() <= 1.2, (counted, mine["work"].sum())


@pytest.mark.parametrize("stem", model_chapters())
def test_each_budget_asks_more_work_than_the_one_below(stem):
    totals = []
    for budget in ("smoke", "quick", "decide"):
        work = chapter_work(stem, chapter_values(stem, budget, "smollm2-135m"))
        totals.append(work.total())
    assert totals[0] < totals[1] < totals[2], (stem, totals)


def test_seconds_are_work_over_rates_with_each_kind_at_its_cost():
    rates = Rates("cpu", gen=100.0, read=1000.0, texts=10.0, how="given")
    assert estimate_seconds(ChapterWork(gen_tokens=500), rates, overhead=7) == pytest.approx(12.0)
    assert estimate_seconds(ChapterWork(sd_tokens=100), rates) == pytest.approx(SD_ROWS * 1.0)
    assert estimate_seconds(ChapterWork(read_tokens=2000, scored_texts=30), rates) == pytest.approx(5.0)
