"""Sentence perplexity: hand computation, padding invariance, start-token handling."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from toxlib.models.perplexity import cached_nll, corpus_perplexity, pseudo_nll, sentence_nll

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


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory):
    from toxlib.models import load
    from toxlib.models.tiny import tiny_masked_lm

    return load(str(tiny_masked_lm(tmp_path_factory.mktemp("mlm") / "bert")), device="cpu", kind="masked")


def test_pseudo_perplexity_masks_each_token_with_the_tokenizers_own_mask(tiny_mlm):
    text = TEXTS[1]
    ids = tiny_mlm.tokenizer(text).input_ids
    mask_id = tiny_mlm.tokenizer.mask_token_id
    assert mask_id != 103  # the reference implementation's hard-coded BERT id would be wrong here
    expected = 0.0
    with torch.no_grad():
        for pos in range(len(ids)):
            masked = list(ids)
            masked[pos] = mask_id
            logp = torch.log_softmax(tiny_mlm.model(torch.tensor([masked])).logits[0, pos].double(), -1)
            expected -= float(logp[ids[pos]])
    row = pseudo_nll(tiny_mlm, [text]).iloc[0]
    assert row["n_tokens"] == len(ids)
    assert np.isclose(row["nll_sum"], expected, rtol=1e-5)


def test_pseudo_perplexity_batching_does_not_change_scores(tiny_mlm):
    a = pseudo_nll(tiny_mlm, TEXTS, batch_tokens=10_000)
    b = pseudo_nll(tiny_mlm, TEXTS, batch_tokens=1)
    np.testing.assert_allclose(a["nll_sum"], b["nll_sum"], rtol=1e-5)


def test_pseudo_perplexity_needs_a_mask_token(tiny_lm):
    with pytest.raises(ValueError, match="no mask token"):
        pseudo_nll(tiny_lm, ["Hello"])


def test_cached_scores_are_reused_and_resumable(tiny_lm, tmp_path, monkeypatch):
    import toxlib.models.perplexity as lm_score
    from toxlib.store.cache import LMScoreStore

    store = LMScoreStore(tmp_path / "s.sqlite")
    first = cached_nll(tiny_lm, TEXTS[:2], cache=store, progress=False)
    calls = []
    real = lm_score.sentence_nll
    monkeypatch.setattr(lm_score, "sentence_nll", lambda lm, texts, **kw: calls.append(texts) or real(lm, texts))
    both = cached_nll(tiny_lm, TEXTS + TEXTS[:1], cache=store, chunk=1, progress=False)
    assert calls == [[TEXTS[2]], [TEXTS[3]]]  # only the new texts, one chunk (one stored batch) each
    assert both.iloc[:2][["n_tokens", "nll_sum"]].equals(first[["n_tokens", "nll_sum"]])
    np.testing.assert_allclose(both["nll_sum"], sentence_nll(tiny_lm, TEXTS + TEXTS[:1])["nll_sum"], rtol=1e-6)
    assert store.integrity_check() == "ok"


def test_steered_scores_are_cached_per_steering(tiny_lm, tmp_path, monkeypatch):
    import toxlib.generate.steered_nll as lm_score
    from toxlib.generate.steered_nll import cached_steered_nll, steered_nll
    from toxlib.steer.word_filter import WordFilter
    from toxlib.store.cache import LMScoreStore

    store = LMScoreStore(tmp_path / "s.sqlite")
    plain = cached_steered_nll(tiny_lm, TEXTS[:2], cache=store)
    calls = []
    real = lm_score.steered_nll
    monkeypatch.setattr(lm_score, "steered_nll",
                        lambda lm, texts, steering=None, **kw: calls.append(texts) or real(lm, texts, steering, **kw))
    again = cached_steered_nll(tiny_lm, TEXTS, cache=store)
    assert calls == [TEXTS[2:]]  # only the texts not seen under this steering
    assert again.iloc[:2].equals(plain)
    np.testing.assert_allclose(again["nll_sum"], steered_nll(tiny_lm, TEXTS)["nll_sum"], rtol=1e-6)
    filtered = cached_steered_nll(tiny_lm, TEXTS[:2], WordFilter(["the"]), cache=store)
    assert len(calls) == 2  # another steering is another key
    assert not filtered["nll_sum"].equals(plain["nll_sum"])
