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
