"""Same parameters, same texts: a bundled model's continuations do not depend on the generation cache's contents,
on ``batch_rows``, on slicing a prompt's samples or on the other prompts of a call, in float32 (the book's
precision). The bits these rest on (a row's logits and every decoding step, alone and in any batch) are compared
in float32, float64 and bfloat16 in ``test_batch_invariance.py``; what is compared here is the engine's slicing and
caching, which does not depend on the precision."""

from __future__ import annotations

import pandas as pd
import pytest
from invariance_prompts import CONFIG, PROMPTS

from toxlib.generate import DecodingConfig, generate
from toxlib.models import load
from toxlib.store.cache import GenerationStore

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def lm():
    return load("smollm2-135m", dtype="float32")


def texts(frame):
    return frame.sort_values(["prompt_id", "sample_idx"])["continuation"].tolist()


def test_generation_is_the_same_cold_after_a_partial_warm_up_and_at_any_batch_rows(lm, tmp_path):
    cold = generate(lm, PROMPTS, CONFIG, cache=GenerationStore(tmp_path / "cold.sqlite"), progress=False)
    warm_store = GenerationStore(tmp_path / "warm.sqlite")
    generate(lm, PROMPTS[1:6:2], CONFIG, cache=warm_store, progress=False, batch_rows=7)  # a smaller run first
    warm = generate(lm, PROMPTS, CONFIG, cache=warm_store, progress=False)
    # one prompt per batch: the prompts the warm-up did not already decode alone (warm holds those, from it); cold
    # decoded every prompt in one batch (the CPU's default batch_rows holds all 48 rows)
    rest = pd.Series(PROMPTS).drop([1, 3, 5])
    narrow = generate(lm, rest, CONFIG, cache=False, progress=False, batch_rows=6)
    assert cold["prompt_id"].nunique() == len(PROMPTS) and sorted(set(narrow["prompt_id"])) == list(rest.index)
    assert texts(warm) == texts(cold)
    assert texts(narrow) == texts(cold[cold["prompt_id"].isin(rest.index)])


def test_a_prompt_with_more_samples_than_batch_rows_is_decoded_in_slices_with_the_same_rows(lm, monkeypatch):
    """An unprompted pool (one prompt, thousands of samples) once went to one batch of every sample, whose logits
    (rows x 262,144 floats on Gemma) ran a 23 GB machine out of memory."""
    import toxlib.generate.api as api

    pool = CONFIG.with_(num_samples=23)
    whole = generate(lm, ["", PROMPTS[0]], pool, cache=False, progress=False, batch_rows=1000)
    sizes = []
    real = api.decode_batch
    monkeypatch.setattr(api, "decode_batch", lambda model, ids, config, *rest: sizes.append(
        len(ids) * config.num_samples) or real(model, ids, config, *rest))
    sliced = generate(lm, ["", PROMPTS[0]], pool, cache=False, progress=False, batch_rows=8)
    assert max(sizes) <= 8 and sum(sizes) == 2 * 23
    assert texts(sliced) == texts(whole)
    assert sliced["sample_idx"].tolist() == whole["sample_idx"].tolist()


def test_greedy_generation_does_not_depend_on_the_other_prompts(lm):
    greedy = DecodingConfig(mode="greedy", max_new_tokens=10)
    together = generate(lm, PROMPTS, greedy, cache=False, progress=False)
    alone = [generate(lm, [p], greedy, cache=False, progress=False)["continuation"].iloc[0] for p in PROMPTS]
    assert together["continuation"].tolist() == alone
