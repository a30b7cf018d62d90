"""PPLM on tiny random models: the discriminator, the past perturbation inside the batched decoding loop (padding,
shared prefixes, several samples, row pruning), and the settings in the cache key."""

from __future__ import annotations

import random

import pandas as pd
import pytest
import torch

from toxlib.generate import DecodingConfig, generate
from toxlib.models import load
from toxlib.steer import LogitsSteering
from toxlib.steer.pplm import PPLM, Discriminator, mean_hidden, train_discriminator

WORDS = ["the quick", "brown fox", "jumps over", "the lazy dog", "language models", "a question", "the weather",
         "she said hello", "nucleus sampling", "a threshold"]
PROMPTS = ["The quick brown fox", "Hello", "Nucleus sampling keeps the smallest set of tokens", "She said"]
SAMPLE = DecodingConfig(num_samples=3, max_new_tokens=6, seed=1)


def toy_corpus(n: int = 120, seed: int = 0) -> pd.DataFrame:
    """Separable: toxic texts (toxic=1) are mostly the token " one", non-toxic ones ordinary words."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        if i % 2:
            rows.append((" ".join(["one"] * rng.randint(4, 8) + [rng.choice(WORDS)]), 1))
        else:
            rows.append((" ".join(rng.choice(WORDS) for _ in range(3)), 0))
    return pd.DataFrame(rows, columns=["text", "toxic"])


@pytest.fixture(scope="module", params=["llama", "gemma3"])
def lm(request, tiny_model_dirs):
    return load(str(tiny_model_dirs[request.param]), device="cpu")


@pytest.fixture(scope="module")
def disc(lm):
    return train_discriminator(lm, toy_corpus())


def run(lm, steering=None, prompts=PROMPTS, config=SAMPLE, **kw):
    return generate(lm, prompts, config, steering=steering, cache=False, progress=False, **kw)


class Recorder:
    """Wraps a processor: records max |log_softmax(out) - log_softmax(in)| per step, passes the hooks on."""

    def __init__(self, inner):
        self.inner, self.diffs = inner, []

    def start_batch(self, *args):
        self.inner.start_batch(*args)

    def select_rows(self, index):
        self.inner.select_rows(index)

    def __call__(self, ids, scores):
        out = self.inner(ids, scores.clone())
        self.diffs.append(float((torch.log_softmax(out, -1) - torch.log_softmax(scores, -1)).abs().max()))
        return out


class ForceStop:
    """Makes every row of the prompts in ``prompt_ids`` (token id lists) emit a stop token at step ``at``."""

    def __init__(self, stop_id: int, prompt_ids: list[list[int]], at: int = 1):
        self.stop_id, self.prompt_ids, self.at = stop_id, prompt_ids, at

    def start_batch(self, ids, mask, n):
        self.chosen = torch.tensor([ids[r][mask[r].bool()].tolist() in self.prompt_ids for r in range(ids.shape[0])])
        self.step = 0

    def select_rows(self, index):
        self.chosen = self.chosen[index]

    def __call__(self, ids, scores):
        if self.step == self.at:
            scores[self.chosen] = float("-inf")
            scores[self.chosen, self.stop_id] = 0.0
        self.step += 1
        return scores


def test_discriminator_learns_a_separable_corpus(lm, disc, tmp_path):
    hidden = lm.model.config.get_text_config().hidden_size
    assert disc.weight.shape == (2, hidden) and disc.bias.shape == (2,)
    assert disc.meta["n_valid"] == 24 and disc.meta["n_train"] == 96
    assert disc.meta["train_accuracy"] >= 0.95 and disc.meta["valid_accuracy"] >= 0.9
    proba = disc.predict_proba(lm, ["one one one one one the weather", "the quick brown fox jumps over"])
    assert proba.shape == (2,) and proba[0] > 0.5 > proba[1]
    loaded = Discriminator.load(disc.save(tmp_path / "disc.safetensors"))
    assert torch.equal(loaded.weight, disc.weight) and loaded.meta == disc.meta and loaded.sha256 == disc.sha256
    again = train_discriminator(lm, toy_corpus())
    assert again.sha256 == disc.sha256


def test_mean_hidden_ignores_padding(lm):
    texts = ["Hello", "The quick brown fox jumps over the lazy dog"]
    together = mean_hidden(lm, texts)
    alone = torch.cat([mean_hidden(lm, [t]) for t in texts])
    assert torch.allclose(together, alone, atol=1e-5)


def test_step_size_zero_gives_plain_generation(lm, disc):
    plain = run(lm)
    for steering in (PPLM(disc, step_size=0.0), PPLM(disc, num_iterations=0)):
        assert run(lm, steering)["continuation"].tolist() == plain["continuation"].tolist()
        (proc,) = steering.logits_processors(lm)
        scores = torch.randn(2, lm.model.config.vocab_size)
        assert proc(torch.ones(2, 3, dtype=torch.long), scores) is scores


def test_a_negligible_perturbation_reproduces_the_model(lm, disc):
    """With a tiny step and gm_scale 1 the output is the perturbed model's own distribution, so any misaligned
    cache, position or mask (left padding, a shared prompt prefix, several samples) would show up here."""
    preamble = "Is it toxic? the quick brown fox => False\n"
    prompts = PROMPTS + [preamble + tail for tail in ("Hi =>", "A longer phrase =>")]
    for batch_rows, prompt_set in ((1000, PROMPTS), (1000, prompts[-2:]), (3, PROMPTS)):
        steering = PPLM(disc, step_size=1e-7, gm_scale=1.0, kl_scale=0.0)
        recorder = Recorder(steering.logits_processors(lm)[0])
        out = run(lm, LogitsSteering("rec", [recorder]), prompts=prompt_set, batch_rows=batch_rows)
        assert len(recorder.diffs) >= SAMPLE.max_new_tokens and max(recorder.diffs) < 1e-3
        assert out["continuation"].tolist() == run(lm, prompts=prompt_set, batch_rows=batch_rows)[
            "continuation"].tolist()


@pytest.mark.parametrize("settings", [{}, {"window_length": 2, "horizon_length": 2}])
def test_a_gradient_step_raises_the_nontoxic_probability(lm, disc, settings):
    steering = PPLM(disc, step_size=0.05, num_iterations=2, kl_scale=0.0, **settings)
    (proc,) = steering.logits_processors(lm)
    run(lm, LogitsSteering("pplm", [proc]), config=SAMPLE.with_(mode="greedy", num_samples=1))
    assert len(proc.trace) >= 2
    assert all(len(t) == 2 for t in proc.trace)
    # near 1 an fp32 mean can round to the same value (one row per batch now): never lower, almost always higher
    assert all(after >= before for before, after in proc.trace)
    assert sum(after > before for before, after in proc.trace) >= 0.9 * len(proc.trace)


def test_sampling_with_several_samples_and_row_pruning(lm, disc):
    steering = PPLM(disc, step_size=0.5)
    steered = run(lm, steering)
    plain = run(lm)
    assert len(steered) == len(PROMPTS) * SAMPLE.num_samples and steered["n_new_tokens"].between(1, 6).all()
    assert steered["continuation"].tolist() != plain["continuation"].tolist()
    assert steered["continuation"].tolist() == run(lm, steering, batch_rows=3)["continuation"].tolist()
    to_stop = ["Hello", "She said"]

    def with_stops(prompts_to_stop):
        proc = steering.logits_processors(lm)[0]
        force = ForceStop(lm.stop_ids[0], [lm.tokenizer(p).input_ids for p in prompts_to_stop])
        return run(lm, LogitsSteering("pplm+stop", [proc, force]), batch_rows=1000)

    free = with_stops([])
    stopped = with_stops(to_stop)  # half the rows stop after 2 tokens: they are pruned from the batch
    chosen = stopped["prompt"].isin(to_stop)
    assert (stopped.loc[chosen, "n_new_tokens"] == 2).all() and stopped.loc[chosen, "stopped"].all()
    assert stopped.loc[~chosen, "continuation"].tolist() == free.loc[~chosen, "continuation"].tolist()


def test_model_parameters_get_no_gradients(lm, disc):
    run(lm, PPLM(disc, step_size=0.5), prompts=PROMPTS[:2])
    params = list(lm.model.parameters())
    assert all(p.grad is None for p in params) and all(p.requires_grad for p in params)
    assert not lm.model.training


def test_config_holds_every_setting(disc):
    base = PPLM(disc).config()
    assert base["name"] == "pplm" and base["discriminator_sha256"] == disc.sha256
    for change in (dict(step_size=0.03), dict(num_iterations=1), dict(kl_scale=0.0), dict(gm_scale=0.8),
                   dict(gamma=1.5), dict(window_length=5), dict(horizon_length=0)):
        assert PPLM(disc, **change).config() != base
    other = Discriminator(weight=disc.weight + 1e-3, bias=disc.bias, meta=disc.meta)
    assert PPLM(other).config() != base
    with pytest.raises(ValueError):
        PPLM(disc, gm_scale=1.5)


def test_beam_search_is_refused(lm, disc):
    with pytest.raises(ValueError, match="beam"):
        run(lm, PPLM(disc), prompts=PROMPTS[:2], config=DecodingConfig(mode="beam", num_beams=2, max_new_tokens=3))

