"""Self-Debiasing and Instructive Debiasing on tiny random models: the decay formula by hand, the biased
distribution against direct forward passes, cache bookkeeping under pruning and beam reordering, and all modes."""

from __future__ import annotations

import math

import pytest
import torch

from toxlib.generate import DecodingConfig, generate
from toxlib.generate.api import encode_prompt
from toxlib.generate.engine import prefill
from toxlib.models import load
from toxlib.steer.instructive import INSTRUCTIVE_DECODING, InstructiveDebiasing, instruction_prefix
from toxlib.steer.self_debias import DEBIASING_PREFIXES, SelfDebiasing, SelfDebiasingProcessor, decay_scores

PROMPTS = ["The quick brown fox", "Hello", "She said hello, and he", "Toxicity scores"]
PREFIXES = ["The dog:\n", "A question:\n"]  # short, so the tiny models' windows are never an issue
MODES = {
    "greedy": DecodingConfig(mode="greedy", max_new_tokens=5),
    "sample": DecodingConfig(mode="sample", num_samples=2, max_new_tokens=5, seed=3),
    "beam": DecodingConfig(mode="beam", num_beams=3, max_new_tokens=5),
}


@pytest.fixture(scope="module", params=["llama", "gemma3"])
def lm(request, tiny_model_dirs):
    return load(str(tiny_model_dirs[request.param]), device="cpu")


def run(lm, config, steering=None, prompts=PROMPTS, **kw):
    return generate(lm, prompts, config, steering=steering, cache=False, progress=False, **kw)["continuation"].tolist()


def test_decay_formula_by_hand():
    p_plain = torch.tensor([[0.5, 0.3, 0.2]])
    p1, p2 = torch.tensor([0.2, 0.6, 0.2]), torch.tensor([0.1, 0.3, 0.6])
    biased = torch.stack([p1, p2]).log()[None]  # (1 row, 2 prefixes, 3)
    new, p_biased, decay = decay_scores(p_plain.log(), biased, decay_constant=10, epsilon=0.01)
    assert torch.allclose(p_biased, torch.tensor([[0.2, 0.6, 0.6]]), atol=1e-6)
    expected_decay = [1.0, math.exp(-10 * 0.3), math.exp(-10 * 0.4)]  # 0.0498, 0.0183: above epsilon
    assert torch.allclose(decay, torch.tensor([expected_decay]), atol=1e-6)
    unnorm = [0.5 * expected_decay[0], 0.3 * expected_decay[1], 0.2 * expected_decay[2]]
    assert torch.allclose(new.exp(), torch.tensor([[u / sum(unnorm) for u in unnorm]]), atol=1e-6)
    # λ = 50: both decays fall below epsilon and are floored at it
    new, _, decay = decay_scores(p_plain.log(), biased, decay_constant=50, epsilon=0.01)
    assert torch.allclose(decay, torch.tensor([[1.0, 0.01, 0.01]]))
    assert torch.allclose(new.exp(), torch.tensor([[0.5, 0.003, 0.002]]) / 0.505, atol=1e-6)
    # raw logits (not log-probabilities) give the same result; λ = 0 leaves the distribution alone
    shifted, _, _ = decay_scores(p_plain.log() + 3.0, biased, decay_constant=50, epsilon=0.01)
    assert torch.allclose(shifted, new, atol=1e-6)
    same, _, decay = decay_scores(p_plain.log(), biased, decay_constant=0)
    assert torch.equal(decay, torch.ones_like(decay)) and torch.allclose(same.exp(), p_plain)


def direct_next_probs(lm, token_lists):
    """Next-token probabilities of each sequence run alone (no padding, no cache)."""
    with torch.inference_mode():
        return torch.stack([lm.model(input_ids=torch.tensor([ids])).logits[0, -1].float().softmax(-1)
                            for ids in token_lists])


def expected_biased(lm, prompt, generated, prefixes=PREFIXES):
    return direct_next_probs(lm, [encode_prompt(lm, p + prompt) + generated for p in prefixes]).amax(0)


def test_biased_distribution_equals_direct_forward_passes(lm):
    """Step by step, with the engine's prefill layout (a shared prefix run once: padding in the middle)."""
    prompts = ["She said hello, and he answered", "She said hello, and he", "She said hello, and he asked why"]
    prompt_ids = [encode_prompt(lm, p) for p in prompts]
    logits, _, ids, mask, _ = prefill(lm.model, prompt_ids, lm.pad_id, min_shared=3)
    assert bool((mask == 0).any()) and bool(mask[:, 0].all())  # padding sits after the shared prefix
    proc = SelfDebiasing(PREFIXES, decay_constant=50).processor(lm, keep_last=True)
    proc.start_batch(ids, mask, 1)
    generated = [[], [], []]
    for _ in range(3):
        proc(ids, logits.float())
        for r, prompt in enumerate(prompts):
            assert torch.allclose(proc.last["p_biased"][r], expected_biased(lm, prompt, generated[r]), atol=1e-5)
        token = torch.tensor([7, 11, 13]) + len(generated[0])
        generated = [g + [int(t)] for g, t in zip(generated, token)]
        ids = torch.cat([ids, token[:, None]], 1)
        with torch.inference_mode():  # the plain logits are the processor's input; any values do here
            logits = torch.randn(3, proc.last["p_biased"].shape[1])


def test_prefixes_run_once_unless_the_join_merges_tokens(lm):
    """The prefixes' own tokens run once and the prompts follow them after padding ([prefix, padding, rest]);
    where tokenising prefix + prompt as one string merges across the join ("...hel" + "lo" gives "hello"; with
    the bundled tokenizers, a prefix ending in a space), the row shares nothing. Both layouts give the
    distributions of the prefixed sequences run alone."""
    from toxlib.models.batching import bucket_width
    from toxlib.steer.self_debias import prefixed_ids, shared_prefix_tokens

    cases = ((PREFIXES, ["She said hello, and he answered", "Toxicity scores"], True),
             (["She said hel", "The fox said hel"], ["lo there", "lo, and he answered"], False))
    for prefixes, prompts, shares in cases:
        prompt_ids = [encode_prompt(lm, p) for p in prompts]
        steering = SelfDebiasing(prefixes, decay_constant=50)
        assert {steering.batch_key(lm, ids)[1] for ids in prompt_ids} == {shares}
        proc = steering.processor(lm)
        drive(proc, prompt_ids, [([[], []], None)])
        for r, prompt in enumerate(prompts):
            assert torch.allclose(proc._forward_full([[], []], with_cache=False)[r],
                                  expected_biased(lm, prompt, [], prefixes), atol=1e-5)
        own = [len(t) for t in shared_prefix_tokens(lm, prefixes)] if shares else [0, 0]
        rest = max(len(prefixed_ids(lm, pre, ids)) - k for ids in prompt_ids for pre, k in zip(prefixes, own))
        assert proc._mask.shape[1] == max(own) + bucket_width(rest)


def test_real_prefixes_on_tiny_llama(tiny_lm):
    ids = encode_prompt(tiny_lm, "Hello")
    proc = SelfDebiasing(decay_constant=50).processor(tiny_lm, keep_last=True)
    x, m = torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long)
    proc.start_batch(x, m, 1)
    with torch.inference_mode():
        proc(x, tiny_lm.model(input_ids=x).logits[:, -1].float())
    assert torch.allclose(proc.last["p_biased"][0], expected_biased(tiny_lm, "Hello", [], DEBIASING_PREFIXES),
                          atol=1e-5)
    assert DEBIASING_PREFIXES[0] == "The following text contains rude, disrespectful, or unreasonable language:\n"


def drive(proc, prompt_ids, steps, rows_per_prompt=1, expand=1):
    """Feed a processor a scripted batch: steps = list of (generated tokens per row, rows kept before it or None)."""
    from toxlib.models.batching import pad

    ids, mask = pad(prompt_ids, 0, side="left")
    proc.start_batch(ids, mask, rows_per_prompt)
    width, out = ids.shape[1], []
    base = ids.repeat_interleave(expand, 0)
    for generated, keep in steps:
        if keep is not None:
            proc.select_rows(torch.tensor(keep))
            base = base[keep]
        gen = torch.tensor(generated, dtype=torch.long).reshape(len(generated), -1)
        out.append(proc.biased_probs(torch.cat([base, gen], 1)).clone())
        assert proc._width == width
    return out


def test_cache_follows_pruning_and_beam_reordering(tiny_lm, monkeypatch):
    prompt_ids = [encode_prompt(tiny_lm, p) for p in PROMPTS[:3]]
    full_calls = []
    original = SelfDebiasingProcessor._forward_full
    monkeypatch.setattr(SelfDebiasingProcessor, "_forward_full",
                        lambda self, *a, **k: full_calls.append(1) or original(self, *a, **k))
    steering, fresh = SelfDebiasing(PREFIXES, 50), SelfDebiasing(PREFIXES, 50, use_cache=False, max_forward_rows=4)
    # decode_batch: rows 0..2, row 1 pruned before the third step
    steps = [([[], [], []], None), ([[5], [6], [7]], None), ([[5, 8], [7, 9]], [0, 2]), ([[5, 8, 1], [7, 9, 2]], None)]
    cached = drive(steering.processor(tiny_lm), prompt_ids, steps)
    assert len(full_calls) == 1  # one prefill, then one cached step per call
    chunked = drive(SelfDebiasing(PREFIXES, 50, max_forward_rows=2).processor(tiny_lm), prompt_ids, steps)
    for a, b, c in zip(cached, drive(fresh.processor(tiny_lm), prompt_ids, steps), chunked):
        assert torch.allclose(a, b, atol=1e-5) and torch.allclose(c, b, atol=1e-5)
    # beam search: 2 prompts x 3 beams, expanded by the processor; beams reordered (and duplicated) every step
    full_calls.clear()
    beams = [([[]] * 6, None),
             ([[5], [6], [7], [8], [9], [10]], None),
             ([[7, 1], [5, 2], [7, 3], [10, 4], [8, 4], [8, 5]], None),
             ([[5, 2, 1], [7, 1, 1], [7, 1, 2], [8, 4, 3], [10, 4, 3], [8, 5, 6]], None)]
    cached = drive(steering.processor(tiny_lm), prompt_ids[:2], beams, rows_per_prompt=3, expand=3)
    assert len(full_calls) == 1
    for a, b in zip(cached, drive(fresh.processor(tiny_lm), prompt_ids[:2], beams, rows_per_prompt=3, expand=3)):
        assert torch.allclose(a, b, atol=1e-5)
    # a history that extends no previous row falls back to recomputing (still right)
    full_calls.clear()
    odd = beams[:2] + [([[1, 1]] * 6, None)]
    cached = drive(steering.processor(tiny_lm), prompt_ids[:2], odd, rows_per_prompt=3, expand=3)
    assert len(full_calls) == 2
    assert torch.allclose(cached[-1], drive(fresh.processor(tiny_lm), prompt_ids[:2], odd, 3, 3)[-1], atol=1e-5)


def test_identical_rows_run_once_with_the_same_result(lm, monkeypatch):
    """Beams (or samples) of one prompt start identical: their prefixed copies run once and are copied. Every
    step's p_biased is bitwise the one computed with every row run (and the cache then followed as usual)."""
    prompt_ids = [encode_prompt(lm, p) for p in PROMPTS[:2]]
    beams = [([[]] * 6, None), ([[5], [6], [7], [8], [9], [10]], None), ([[7, 1], [5, 2], [7, 3], [10, 4], [8, 4],
                                                                         [8, 5]], None)]
    seen = []
    original = SelfDebiasingProcessor._run_copies
    monkeypatch.setattr(SelfDebiasingProcessor, "_run_copies",
                        lambda self, rows, *a: seen.append(len(rows)) or original(self, rows, *a))
    once = drive(SelfDebiasing(PREFIXES, 50).processor(lm), prompt_ids, beams, rows_per_prompt=3, expand=3)
    assert seen == [2]  # two prompts, not six beams; later steps use the cache

    def every_row(self, generated, with_cache):
        probs, cache, mask, position = self._run_copies(self._rows, generated, with_cache)
        self._cache, self._mask, self._position = cache, mask, position[:, -1:]
        return probs

    monkeypatch.setattr(SelfDebiasingProcessor, "_forward_full", every_row)
    every = drive(SelfDebiasing(PREFIXES, 50).processor(lm), prompt_ids, beams, rows_per_prompt=3, expand=3)
    assert seen[1:] == [6]
    for a, b in zip(once, every):
        assert torch.equal(a, b)
    for r, prompt in enumerate(PROMPTS[:2]):
        assert torch.allclose(once[0][3 * r], expected_biased(lm, prompt, []), atol=1e-5)


@pytest.mark.parametrize("mode", list(MODES))
def test_lambda_zero_and_empty_prefixes_change_nothing(lm, mode):
    plain = run(lm, MODES[mode])
    assert run(lm, MODES[mode], SelfDebiasing(PREFIXES, decay_constant=0)) == plain
    assert run(lm, MODES[mode], SelfDebiasing(["", ""], decay_constant=100)) == plain


def test_empty_prefixes_give_the_plain_distribution(tiny_lm):
    ids = encode_prompt(tiny_lm, "The quick brown fox")
    proc = SelfDebiasing(["", ""], decay_constant=100).processor(tiny_lm, keep_last=True)
    x, m = torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long)
    proc.start_batch(x, m, 1)
    with torch.inference_mode():
        scores = tiny_lm.model(input_ids=x).logits[:, -1].float()
    new = proc(x, scores)
    assert torch.allclose(proc.last["p_biased"], proc.last["p_plain"], atol=1e-5)
    assert torch.allclose(new, scores.log_softmax(-1), atol=1e-5)


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_runs_deterministically_with_and_without_cache(lm, mode):
    steering = SelfDebiasing(PREFIXES, decay_constant=100)
    first = run(lm, MODES[mode], steering)
    assert run(lm, MODES[mode], steering) == first
    assert run(lm, MODES[mode], SelfDebiasing(PREFIXES, 100, use_cache=False, max_forward_rows=3)) == first
    assert run(lm, MODES[mode], SelfDebiasing(PREFIXES, 100, max_forward_rows=5)) == first  # caches merged
    assert run(lm, MODES[mode], steering, batch_rows=3) == first  # other batch layouts, other pruning
    assert len(first) == len(PROMPTS) * MODES[mode].num_samples


def test_debiasing_changes_texts_and_config_keys_the_cache(tiny_lm):
    greedy, sample = MODES["greedy"], MODES["sample"]
    # the tiny models' greedy choices are too sure to move; sampled texts show the shifted distribution
    assert run(tiny_lm, sample, SelfDebiasing(PREFIXES, 100)) != run(tiny_lm, sample)
    config = SelfDebiasing(PREFIXES, decay_constant=10, epsilon=0.02).config()
    assert config == {"name": "self-debiasing", "prefixes": PREFIXES, "decay_constant": 10.0, "epsilon": 0.02,
                      "layout": "prefix run once"}
    hashes = {generate(tiny_lm, ["Hi"], greedy, steering=s, cache=False, progress=False)["config_hash"][0]
              for s in (SelfDebiasing(PREFIXES, 10), SelfDebiasing(PREFIXES, 50), SelfDebiasing(PREFIXES[:1], 10),
                        SelfDebiasing(PREFIXES, 10, epsilon=0.05))}
    assert len(hashes) == 4
    with pytest.raises(ValueError):
        SelfDebiasing([])


def test_instructive_debiasing_prefixes():
    assert InstructiveDebiasing().transform_prompt("x") == (
        "Be positive, polite, respectful, compliant, loveable, modest, helpful, and kind for: x")
    assert InstructiveDebiasing("").transform_prompt("x") == "Be for: x"
    assert instruction_prefix("") == "Be for: "
    assert InstructiveDebiasing("a {prompt} b").transform_prompt("y") == "Be a {prompt} b for: y"
    assert InstructiveDebiasing("rude").config()["prefix"] == "Be rude for: "
    assert InstructiveDebiasing("rude").config() != InstructiveDebiasing("kind").config()
    assert INSTRUCTIVE_DECODING.mode == "greedy" and INSTRUCTIVE_DECODING.max_new_tokens == 20


def test_instructive_debiasing_generates_from_the_prefixed_prompt(tiny_lm):
    greedy = MODES["greedy"]
    steered = generate(tiny_lm, PROMPTS, greedy, steering=InstructiveDebiasing("kind"), cache=False, progress=False)
    manual = run(tiny_lm, greedy, prompts=["Be kind for: " + p for p in PROMPTS])
    assert steered["continuation"].tolist() == manual and steered["prompt"].tolist() == PROMPTS
