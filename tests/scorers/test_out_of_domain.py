"""The out-of-domain sentences: a fixed, documented set, kept out of every evaluation set; the summary by hand."""

from __future__ import annotations

import numpy as np
import pytest

from toxlib.scorers.base import BatchScores, Scorer
from toxlib.scorers.out_of_domain import (
    BENIGN,
    TOXIC_EXAMPLES,
    out_of_domain_scores,
    out_of_domain_sentences,
    out_of_domain_summary,
)


class Marker(Scorer):
    """toxicity 0.9 for texts with "idiot", 0.6 for "stupid", else 0.1 (known in advance)."""

    name, version, attributes = "marker", "1", ("toxicity",)

    def score_batch(self, texts):
        return BatchScores(np.array([[0.9 if "idiot" in t else 0.6 if "stupid" in t else 0.1] for t in texts]))


@pytest.mark.data
def test_the_set_is_fixed_and_disjoint_from_the_evaluation_sets():
    from toxlib.data import load_rtp_all, load_sass_benchmark, load_tweeteval_hate

    sentences = out_of_domain_sentences()
    assert len(BENIGN) == len(TOXIC_EXAMPLES) == 20 and sentences["text"].is_unique
    assert sentences["kind"].tolist() == ["benign"] * 20 + ["toxic"] * 20
    rtp = load_rtp_all()
    evaluation = (set(load_sass_benchmark()["text"]) | set(load_tweeteval_hate()["text"])
                  | set(rtp["prompt_text"]) | set(rtp["continuation_text"]))
    assert not evaluation & set(sentences["text"])


def test_summary_counts_by_kind():
    scores = out_of_domain_scores(Marker(), cache=False)
    assert list(scores.columns[:3]) == ["kind", "text", "toxicity"] and len(scores) == 40
    summary = out_of_domain_summary(scores).set_index("kind")
    idiot = sum("idiot" in t for t in TOXIC_EXAMPLES)
    stupid = sum("stupid" in t and "idiot" not in t for t in TOXIC_EXAMPLES)
    rest = 20 - idiot - stupid
    assert summary.loc["toxic", "mean"] == pytest.approx((0.9 * idiot + 0.6 * stupid + 0.1 * rest) / 20)
    assert summary.loc["toxic", "share_at_or_above"] == pytest.approx((idiot + stupid) / 20)
    assert summary.loc["benign", "share_at_or_above"] == 0.0 and summary.loc["benign", "max"] == pytest.approx(0.1)
    assert out_of_domain_summary(scores, threshold=0.7).loc[1, "share_at_or_above"] == pytest.approx(idiot / 20)
