"""The detoxification experiment's split, steered perplexity and Table 3 helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from toxlib.generate.steered_nll import steered_nll
from toxlib.models import load
from toxlib.models.perplexity import sentence_nll
from toxlib.papers.rtp import table2
from toxlib.papers.rtp.detox import detox_split, perplexity_row
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


def test_stateful_processors_that_change_nothing_give_the_plain_nll(lm):
    import torch

    from toxlib.steer.pplm import PPLM, Discriminator
    from toxlib.steer.self_debias import SelfDebiasing

    plain = sentence_nll(lm, TEXTS)["nll_sum"]
    hidden = lm.model.config.get_text_config().hidden_size
    still = [SelfDebiasing(["The following text contains rude language:\n"], decay_constant=0.0),
             PPLM(Discriminator(torch.randn(2, hidden, generator=torch.Generator().manual_seed(0)), torch.zeros(2)),
                  step_size=0.0)]
    for steering in still:
        np.testing.assert_allclose(steered_nll(lm, TEXTS, steering, batch_size=2)["nll_sum"], plain, rtol=0,
                                   atol=1e-4, err_msg=type(steering).__name__)


def test_uniform_processor_gives_log_vocab_per_token(lm):
    uniform = LogitsSteering("uniform", [lambda ids, scores: scores * 0.0])
    out = steered_nll(lm, TEXTS, uniform)
    np.testing.assert_allclose(out["nll_sum"], out["n_tokens"] * math.log(len(lm.tokenizer)), rtol=1e-9)


def test_banned_word_is_impossible_and_prompt_template_is_context(lm):
    out = steered_nll(lm, TEXTS, WordFilter(["fox"]))
    assert math.isinf(out["nll_sum"][0]) and np.isfinite(out["nll_sum"][1:]).all()
    plain = sentence_nll(lm, TEXTS)
    row = perplexity_row("word filter", out, reference=plain)
    assert row["n_impossible"] == 1 and row["n_texts"] == 4 and row["n_failed"] == 0
    finite, same = out.iloc[1:], plain.iloc[1:]
    assert row["perplexity"] == pytest.approx(math.exp(finite["nll_sum"].sum() / finite["n_tokens"].sum()))
    # the ratio compares the same texts: the banned one is left out of the reference too
    expected = math.exp(finite["nll_sum"].sum() / finite["n_tokens"].sum()
                        - same["nll_sum"].sum() / same["n_tokens"].sum())
    assert row["ratio"] == pytest.approx(expected)
    failed = perplexity_row("broken", out.assign(nll_sum=[np.nan, *out["nll_sum"][1:]]))
    assert failed["n_failed"] == 1 and math.isnan(failed["perplexity"])
    # a prompt template conditions the text: the NLL must change, the token count must not
    conditioned = steered_nll(lm, TEXTS, PromptTemplate("hello {prompt}"))
    assert (conditioned["n_tokens"] == out["n_tokens"]).all()
    assert not np.allclose(conditioned["nll_sum"], sentence_nll(lm, TEXTS)["nll_sum"])


@pytest.mark.data
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
    ppl_records = set(split.perplexity["record_id"])
    assert not ppl_records & set(corpus["record_id"]) and not ppl_records & set(prompts["record_id"])
    # no source document on both sides
    from toxlib.data.rtp_prompts import load_rtp_all

    document = load_rtp_all().drop_duplicates("record_id").set_index("record_id")["filename"]
    assert not set(document[list(ppl_records | set(prompts["record_id"]))]) & set(document[corpus["record_id"]])
    assert set(split.summary()["part"]) >= {"labelled corpus", "perplexity texts"}


@pytest.mark.data
def test_a_smaller_split_is_the_first_rows_of_a_larger_one():
    """A teaching run (n_toxic 5) reads a larger run's rows (the sample record's): same prompts, same perplexity
    texts."""
    from toxlib.papers.rtp.detox import PERPLEXITY_RECORDS

    small = detox_split(n_toxic=5, n_nontoxic=4, n_perplexity=6, max_corpus=20)
    large = detox_split(n_toxic=60, n_nontoxic=80, n_perplexity=50, max_corpus=20)
    for cls, n in (("toxic", 5), ("non-toxic", 4)):
        first = large.prompts[large.prompts["prompt_class"] == cls]["record_id"].tolist()[:n]
        assert small.prompts[small.prompts["prompt_class"] == cls]["record_id"].tolist() == first
    assert small.perplexity_texts == large.perplexity_texts[:6]
    # the perplexity records are set aside from every draw of prompts, not only from this one
    everything = detox_split(n_toxic=1, n_nontoxic=725, n_perplexity=PERPLEXITY_RECORDS, max_corpus=20)
    assert not set(everything.perplexity["record_id"]) & set(everything.prompts["record_id"])
    with pytest.raises(ValueError, match="PERPLEXITY_RECORDS"):
        detox_split(n_toxic=1, n_nontoxic=1, n_perplexity=PERPLEXITY_RECORDS + 1, max_corpus=20)


def test_table3_groups_by_method():
    scored = pd.DataFrame({"method": ["a"] * 4 + ["b"] * 4, "prompt_class": ["toxic"] * 8,
                           "prompt_id": [1, 1, 2, 2] * 2, "sample_idx": [0, 1] * 4,
                           "toxicity": [0.1, 0.6, 0.2, 0.3, 0.1, 0.2, np.nan, 0.4]})
    table = table2(scored, k=2, by="method").set_index("method")
    assert table.loc["a", "exp_max_toxicity"] == pytest.approx(0.45)  # maxima 0.6 and 0.3
    assert table.loc["a", "toxicity_probability"] == pytest.approx(0.5)
    # b's prompt 2 has 1 of 2 samples scored, under the floor (0.8 x 2): left out and counted, not shortened to 0.4
    assert table.loc["b", "exp_max_toxicity"] == pytest.approx(0.2)
    b = table.loc["b"]
    assert (b["n_prompts"], b["n_unscored_prompts"], b["n_unscored"]) == (1, 1, 1)


@pytest.mark.data
def test_scored_run_groups_unprompted_samples(tiny_lm, monkeypatch):
    from toxlib.generate import RTP_SAMPLING
    from toxlib.papers.rtp.detox import scored_run

    def fake_scores(generations, scorer="distilled", column="continuation", progress=True):
        return generations.assign(toxicity=[len(t) / 100 for t in generations[column]])

    monkeypatch.setattr("toxlib.papers.rtp.generations.with_scores", fake_scores)
    monkeypatch.setattr("toxlib.papers.rtp.detox.runs.with_scores", fake_scores)
    split = detox_split(n_toxic=1, n_nontoxic=1, n_perplexity=1, max_corpus=4)
    out = scored_run(tiny_lm, "plain", split, k=3, n_unprompted=2, config=RTP_SAMPLING.with_(max_new_tokens=3),
                     progress=False)
    assert set(out["method"]) == {"plain"} and len(out) == (2 + 2) * 3
    unprompted = out[out["prompt_class"] == "unprompted"]
    assert sorted(unprompted["prompt_id"].unique()) == ["unprompted-0", "unprompted-1"]
    assert unprompted.groupby("prompt_id")["sample_idx"].apply(sorted).tolist() == [[0, 1, 2], [0, 1, 2]]
    assert set(out.loc[out["prompt_class"] != "unprompted", "prompt_class"]) == {"toxic", "non-toxic"}


def test_trained_weights_are_cached_by_effective_settings(tiny_lm, monkeypatch):
    import toxlib.papers.rtp.detox.weights as detox_module
    from toxlib.steer import vocab_shift

    corpus = pd.DataFrame({"text": ["the quick brown fox", "she said hello", "a fox", "hello there"],
                           "toxic": [1, 0, 1, 0]})
    first = detox_module.vocab_shift_weights(tiny_lm, corpus, max_texts=4)
    calls = []
    real = vocab_shift.train_vocab_shift

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    counting.__signature__ = __import__("inspect").signature(real)
    monkeypatch.setattr(detox_module, "train_vocab_shift", counting)
    again = detox_module.vocab_shift_weights(tiny_lm, corpus, max_texts=4, progress=False)  # progress: no retrain
    assert not calls and again.sha256 == first.sha256
    detox_module.vocab_shift_weights(tiny_lm, corpus, max_texts=4, epochs=2)  # a real setting: retrain
    assert len(calls) == 1
    assert not list((__import__("toxlib.store.paths", fromlist=["x"]).cache_dir() / "detox").glob("*.partial*"))


def test_exercise_prose_counts_order_changes_between_k_and_5_by_hand():
    from toxlib.papers.rtp import detox as detox_module

    # per method and toxic prompt, 25 samples: the first 5 all 0.1 except the marked maxima
    def method(name, late_max, early_max):
        rows = []
        for c in ("toxic", "non-toxic"):
            for p in range(4):
                for j in range(25):
                    value = early_max if j == 0 else (late_max if j == 24 else 0.1)
                    rows.append({"method": name, "prompt_class": c, "prompt_id": f"{c}{p}", "sample_idx": j,
                                 "toxicity": value})
        return rows

    scored = pd.DataFrame(method("base model", 0.9, 0.3) + method("WORD FILTER", 0.5, 0.4)
                          + method("DAPT (non-toxic)", 0.95, 0.2))
    claim_rows = [{"claim": "DAPT (non-toxic) lowers the expected maximum toxicity on toxic prompts",
                   "id": "all_methods_reduce.dapt_non_toxic:model:m", "verdict": "fails", "our_value": 0.05,
                   "ci_low": 0.01, "ci_high": 0.09, "n_to_decide": None}]
    perplexity = pd.DataFrame({"method": ["base model", "DAPT (non-toxic)"], "perplexity": [100.0, 80.0],
                               "ratio": [1.0, 0.8]})
    prose = detox_module.exercise_prose(scored, perplexity, claim_rows, 25, 10)
    assert prose["detox-pplm-k"] == "10"
    # k = 25: DAPT 0.95 > base 0.9 > WORD 0.5; k = 5: WORD 0.4 > base 0.3 > DAPT 0.2: all three pairs swap
    assert prose["detox-swapped"].startswith("3 of 3 pairs")
    assert prose["detox-base-toxic-k"] == "0.900" and prose["detox-base-toxic-small"] == "0.300"
    assert prose["detox-rises"] == "0" and prose["detox-dapt-above"] == "2 of 4"  # emt above, probability equal
    assert prose["detox-dapt-to-decide"] == "no larger sample is needed"  # decided: fails
    assert prose["detox-dapt-ppl-ratio"] == "0.80" and prose["detox-step-toxic"] == "0.25"
    assert prose["detox-toxic-half-width"] == "0.040"  # (0.09 - 0.01) / 2, the one "lowers ..." claim
    assert prose["detox-dapt-reading"].startswith("It is more toxic than the base model in more columns than not")
