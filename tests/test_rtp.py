"""RealToxicityPrompts chapter helpers: the unprompted pool and scores joined to generations."""

from __future__ import annotations

from toxlib import rtp
from toxlib.generate import DecodingConfig


def test_unprompted_pool_has_the_requested_size_and_scores_join_row_by_row(tiny_lm):
    config = DecodingConfig(num_samples=1, max_new_tokens=5, top_p=0.9, seed=3)
    pool = rtp.unprompted_pool(tiny_lm, 12, config, progress=False)
    assert len(pool) == 12 and pool["sample_idx"].tolist() == list(range(12)) and set(pool["prompt"]) == {""}
    scored = rtp.with_scores(pool, "profanity-svm", progress=False)
    assert len(scored) == 12 and {"continuation", "profanity", "scorer", "error"} <= set(scored.columns)
    from profanity_check import predict_prob

    assert scored["profanity"].round(9).tolist() == [round(float(p), 9) for p in predict_prob(pool["continuation"].tolist())]
