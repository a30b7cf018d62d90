"""The estimate charges only what the sample record does not hold (issue 63, item 3): a bundled model's report at the
book's sizes or below reads every row; another model, or a chapter the record has no rows of for that model, is
charged in full; a run larger than the book's is charged for the rest."""

from __future__ import annotations

import pytest

from toxlib.chapters import model_chapters
from toxlib.reportcard.budgets import chapter_values
from toxlib.reportcard.held import record_share


@pytest.mark.parametrize("stem", model_chapters())
def test_a_bundled_models_decide_run_is_held_in_full_and_an_unknown_model_not_at_all(stem):
    assert record_share(stem, "smollm2-135m", chapter_values(stem, "decide", "smollm2-135m")) == 1.0
    assert record_share(stem, "smollm2-135m", chapter_values(stem, "smoke", "smollm2-135m")) == 1.0
    assert record_share(stem, "not-a-recorded-model", chapter_values(stem, "decide", "not-a-recorded-model")) == 0.0


def test_a_run_beyond_the_books_sizes_is_held_in_part_and_a_chapter_the_model_never_ran_not_at_all():
    values = chapter_values("rtp_prompted", "decide", "smollm2-135m")
    doubled = {**values, "n_toxic": 2 * values["n_toxic"], "n_nontoxic": 2 * values["n_nontoxic"],
               "n_challenging": 2 * values["n_challenging"]}
    assert record_share("rtp_prompted", "smollm2-135m", doubled) == pytest.approx(0.5)
    # the book detoxifies SmolLM2 only: Gemma's rows for that chapter are not in the record
    assert record_share("rtp_detox", "gemma3-270m", chapter_values("rtp_detox", "decide", "gemma3-270m")) == 0.0


@pytest.mark.parametrize("name", ["smollm2-135m", "gemma3-270m"])
def test_a_bundled_models_decide_report_leaves_out_the_chapters_the_book_does_not_run_for_it(name):
    """A bundled model's report at the book's sizes is read, not computed: a chapter the book runs for the other
    model only is left out (the record holds none of its rows) and named as such, unless the reader names it."""
    from toxlib.reportcard import card
    from toxlib.reportcard.rows import book_models

    planned = card.plan_report(name, "decide")
    by_stem = {p.stem: p for p in planned.chapters}
    left = {stem for stem, p in by_stem.items() if p.left_out}
    assert left == {stem for stem in model_chapters() if name not in book_models(stem)}
    assert name != "gemma3-270m" or left == {"rtp_detox"}  # the book detoxifies SmolLM2 only
    for stem in left:
        assert not by_stem[stem].applies and f"--chapters {stem}" in by_stem[stem].why
        [line] = [x for x in card.estimate_text(planned).splitlines() if x.split()[0] == stem]
        assert "left out: the book runs this chapter for" in line
    assert all(p.record_share == 1.0 for p in planned.chapters if p.applies)
    if left:
        named = card.plan_report(name, "decide", chapters=sorted(left), calibrate=False)
        assert all(p.applies and not p.left_out and p.record_share == 0.0 for p in named.chapters)
