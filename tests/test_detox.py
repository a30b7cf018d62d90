"""The detoxification experiment's split, steered perplexity and Table 3 helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from toxlib.detox import detox_split, perplexity_row
from toxlib.lm_score import sentence_nll, steered_nll
from toxlib.models import load
from toxlib.rtp import table2
from toxlib.steer import LogitsSteering, PromptTemplate
from toxlib.steer.word_filter import WordFilter

TEXTS = ["The quick brown fox jumps.", "She said hello", "Toxicity scores range from zero to one, and a threshold", "a"]


@pytest.fixture(scope="module", params=["llama", "gemma3"])
def lm(request, tiny_model_dirs):
    return load(str(tiny_model_dirs[request.param]), device="cpu")


def test_unsteered_nll_equals_sentence_nll(lm):
    steered, plain = steered_nll(lm, TEXTS, batch_size=3), sentence_nll(lm, TEXTS)
    assert (steered["n_tokens"] == plain["n_tokens"]).all()
    np.testing.assert_allclose(steered["nll_sum"], plain["nll_sum"], rtol=0, atol=1e-5)


def test_uniform_processor_gives_log_vocab_per_token(lm):
    uniform = LogitsSteering("uniform", [lambda ids, scores: scores * 0.0])
    out = steered_nll(lm, TEXTS, uniform)
    np.testing.assert_allclose(out["nll_sum"], out["n_tokens"] * math.log(len(lm.tokenizer)), rtol=1e-9)


def test_banned_word_is_impossible_and_prompt_template_is_context(lm):
    out = steered_nll(lm, TEXTS, WordFilter(["fox"]))
    assert math.isinf(out["nll_sum"][0]) and np.isfinite(out["nll_sum"][1:]).all()
    row = perplexity_row("word filter", out)
    assert row["n_impossible"] == 1 and row["n_texts"] == 4
    finite = out.iloc[1:]
    assert row["perplexity"] == pytest.approx(math.exp(finite["nll_sum"].sum() / finite["n_tokens"].sum()))
    # a prompt template conditions the text: the NLL must change, the token count must not
    conditioned = steered_nll(lm, TEXTS, PromptTemplate("hello {prompt}"))
    assert (conditioned["n_tokens"] == out["n_tokens"]).all()
    assert not np.allclose(conditioned["nll_sum"], sentence_nll(lm, TEXTS)["nll_sum"])


def test_detox_split_is_disjoint_and_balanced():
    split = detox_split(n_toxic=10, n_nontoxic=12, n_perplexity=30, seed=1, max_corpus=400)
    prompts, corpus = split.prompts, split.corpus
    assert (prompts["prompt_class"] == "toxic").sum() == 10 and (prompts["prompt_class"] == "non-toxic").sum() == 12
    assert (prompts.loc[prompts["prompt_class"] == "toxic", "prompt_toxicity"] >= 0.5).all()
    assert len(corpus) == 400 and corpus["toxic"].sum() == 200
    assert ((corpus["toxicity"] >= 0.5) == (corpus["toxic"] == 1)).all()
    assert not set(prompts["record_id"]) & set(corpus["record_id"])
    assert not set(prompts["prompt_text"]) & set(corpus["text"])
    assert len(split.perplexity_texts) == 30 and not set(split.perplexity_texts) & set(corpus["text"])
    assert set(split.summary()["part"]) >= {"labelled corpus", "perplexity texts"}


def test_table3_groups_by_method():
    scored = pd.DataFrame({"method": ["a"] * 4 + ["b"] * 4, "prompt_class": ["toxic"] * 8,
                           "prompt_id": [1, 1, 2, 2] * 2, "sample_idx": [0, 1] * 4,
                           "toxicity": [0.1, 0.6, 0.2, 0.3, 0.1, 0.2, np.nan, 0.4]})
    table = table2(scored, k=2, by="method").set_index("method")
    assert table.loc["a", "exp_max_toxicity"] == pytest.approx(0.45)  # maxima 0.6 and 0.3
    assert table.loc["a", "toxicity_probability"] == pytest.approx(0.5)
    assert table.loc["b", "exp_max_toxicity"] == pytest.approx(0.3)  # maxima 0.2 and 0.4 (NaN skipped)
