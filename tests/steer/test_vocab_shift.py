"""VOCAB-SHIFT: the logits shift, GIS training on a toy corpus with a toxic marker token, saving and cache keys."""

from __future__ import annotations

import random

import pandas as pd
import pytest
import torch

from toxlib.generate import DecodingConfig, generate
from toxlib.steer.vocab_shift import (
    NONTOXIC_COLUMN,
    TOXIC_COLUMN,
    VocabShift,
    VocabShiftWeights,
    top_tokens,
    train_vocab_shift,
)

WORDS = ["the quick", "brown fox", "jumps over", "the lazy dog", "language models", "a question", "the weather",
         "she said hello", "nucleus sampling", "a threshold"]
MARKER = " one"  # a single token of the tiny tokenizer


def toy_corpus(n: int = 60, seed: int = 0) -> pd.DataFrame:
    """Balanced: toxic texts (toxic=1) contain MARKER twice, non-toxic ones never."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(3))
        if i % 2:
            text = f"{text}{MARKER} and{MARKER}"
        rows.append((text, i % 2))
    return pd.DataFrame(rows, columns=["text", "toxic"])


@pytest.fixture(scope="module")
def weights(tiny_lm):
    return train_vocab_shift(tiny_lm, toy_corpus(), epochs=3)


def test_the_processor_adds_beta_times_the_nontoxic_column(tiny_lm):
    vocab = tiny_lm.model.get_output_embeddings().weight.shape[0]
    W = torch.randn(vocab, 2, generator=torch.Generator().manual_seed(0))
    steering = VocabShift(VocabShiftWeights(W=W), beta=3.0)
    (processor,) = steering.logits_processors(tiny_lm)
    scores = torch.randn(4, vocab, generator=torch.Generator().manual_seed(1))
    out = processor(torch.zeros(4, 5, dtype=torch.long), scores.clone())
    assert torch.equal(out, scores + 3.0 * W[:, 1])
    with pytest.raises(ValueError, match="tokens"):
        processor(torch.zeros(1, 5, dtype=torch.long), torch.zeros(1, vocab + 1))


def test_training_moves_the_marker_towards_toxic(tiny_lm, weights):
    marker = tiny_lm.tokenizer(MARKER, add_special_tokens=False).input_ids
    assert len(marker) == 1
    (marker,) = marker
    corpus = toy_corpus()
    nontoxic_ids = {i for t in corpus.loc[corpus.toxic == 0, "text"] for i in tiny_lm.tokenizer(t).input_ids}
    assert marker not in nontoxic_ids
    W = weights.W
    assert W.shape == (tiny_lm.model.get_output_embeddings().weight.shape[0], 2) and W.dtype == torch.float32
    assert W[marker, TOXIC_COLUMN] > 0.3 and W[marker, NONTOXIC_COLUMN] < 0
    table = top_tokens(weights, tiny_lm.tokenizer, k=5)
    assert list(table.columns) == ["side", "rank", "token_id", "token", "w_toxic", "w_nontoxic", "association"]
    assert table["side"].tolist() == ["toxic"] * 5 + ["non-toxic"] * 5
    assert table.iloc[0]["token_id"] == marker and table.iloc[0]["token"] == MARKER
    assert (table["association"].iloc[:5].diff().dropna() <= 0).all()


def test_each_gis_epoch_lowers_the_corpus_nll(weights):
    nll = [h["all"] for h in weights.meta["nll_per_token"]]
    assert len(nll) == 3 and nll[0] > nll[1] > nll[2]
    assert weights.meta["n_texts"] == 60 and weights.meta["n_toxic_texts"] == 30 and weights.meta["n_tokens"] > 0


def test_training_is_deterministic_and_subsamples_with_the_seed(tiny_lm):
    a = train_vocab_shift(tiny_lm, toy_corpus(), max_texts=20, seed=3)
    b = train_vocab_shift(tiny_lm, toy_corpus(), max_texts=20, seed=3)
    c = train_vocab_shift(tiny_lm, toy_corpus(), max_texts=20, seed=4)
    assert torch.equal(a.W, b.W) and a.sha256 == b.sha256 and a.meta["n_texts"] == 20
    assert a.sha256 != c.sha256


def test_save_load_round_trip(tmp_path, weights):
    path = weights.save(tmp_path / "sub" / "vocab_shift.safetensors")
    loaded = VocabShiftWeights.load(path)
    assert torch.equal(loaded.W, weights.W) and loaded.meta == weights.meta and loaded.sha256 == weights.sha256


def test_config_changes_with_beta_t_and_weights(weights):
    base = VocabShift(weights).config()
    assert base["name"] == "vocab-shift" and base["beta"] == 3.0 and base["weights_sha256"] == weights.sha256
    assert VocabShift(weights, beta=1.0).config() != base
    assert VocabShift(weights, t=(-1.0, 1.0)).config() != base
    other = VocabShiftWeights(W=weights.W.clone(), meta=weights.meta)
    other.W[0, 0] += 1e-3
    assert VocabShift(other).config() != base
    assert VocabShift(VocabShiftWeights(W=weights.W.clone())).config() == base  # meta is not part of the key


def test_generation_with_the_shift(tiny_lm, weights):
    config = DecodingConfig(num_samples=3, max_new_tokens=6, seed=2)
    prompts = ["The quick brown fox", "Hello"]
    plain = generate(tiny_lm, prompts, config, cache=False, progress=False)
    zero = generate(tiny_lm, prompts, config, cache=False, progress=False, steering=VocabShift(weights, beta=0.0))
    assert zero["continuation"].tolist() == plain["continuation"].tolist()
    assert zero["config_hash"].iloc[0] != plain["config_hash"].iloc[0]
    strong = VocabShift(weights, beta=30.0, t=(1.0, -1.0))  # hard towards the toxic marker
    out = generate(tiny_lm, prompts, config.with_(mode="greedy", num_samples=1), cache=False, progress=False,
                   steering=strong)
    assert all(MARKER in text for text in out["continuation"])


def test_the_corpus_is_checked(tiny_lm):
    with pytest.raises(ValueError, match="columns"):
        train_vocab_shift(tiny_lm, pd.DataFrame({"text": ["a"]}))
    with pytest.raises(ValueError, match="both labels"):
        train_vocab_shift(tiny_lm, pd.DataFrame({"text": ["a", "b"], "toxic": [1, 1]}))
