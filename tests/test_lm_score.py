"""Sentence perplexity: hand computation, padding invariance, start-token handling."""

from __future__ import annotations

import numpy as np
import torch

from toxlib.lm_score import corpus_perplexity, sentence_nll

TEXTS = ["Hello", "The quick brown fox jumps over the lazy dog.", "She said hello, and he answered.", "A"]


def test_matches_a_hand_computation(tiny_lm):
    text = TEXTS[1]
    ids = tiny_lm.start_ids + tiny_lm.tokenizer(text).input_ids
    with torch.no_grad():
        logp = torch.log_softmax(tiny_lm.model(torch.tensor([ids])).logits[0].double(), -1)
    nll = -sum(float(logp[i, ids[i + 1]]) for i in range(len(ids) - 1))
    row = sentence_nll(tiny_lm, [text]).iloc[0]
    assert row["n_tokens"] == len(ids) - 1
    assert np.isclose(row["nll_sum"], nll, rtol=1e-5)
    assert np.isclose(row["perplexity"], np.exp(nll / (len(ids) - 1)), rtol=1e-5)


def test_padding_does_not_change_scores(tiny_lm):
    batched = sentence_nll(tiny_lm, TEXTS, batch_tokens=64)
    single = sentence_nll(tiny_lm, TEXTS, batch_tokens=1)
    assert batched["text"].tolist() == TEXTS
    np.testing.assert_allclose(batched["nll_sum"], single["nll_sum"], rtol=1e-5)
    assert (batched["n_tokens"] == single["n_tokens"]).all()


def test_corpus_perplexity_weights_by_tokens():
    import pandas as pd

    scores = pd.DataFrame({"nll_sum": [2.0, 6.0], "n_tokens": [1, 3]})
    assert np.isclose(corpus_perplexity(scores), np.exp(8.0 / 4))
