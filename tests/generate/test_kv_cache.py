"""The preallocated KV cache gives bitwise the logits of transformers' DynamicCache: through prefill, decoding,
row repetition and pruning, room overflow, and a sliding window that the sequence outgrows."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM
from transformers.cache_utils import DynamicCache

from toxlib.generate.kv_cache import (
    PreallocatedLayer,
    PreallocatedSlidingLayer,
    cache_argument,
    concatenate_rows,
    preallocated_cache,
)


def decode_logits(model, cache, prompt: torch.Tensor, steps: int, repeat: int = 1, keep=None) -> list[torch.Tensor]:
    """Greedy decoding with ``cache``: the last-position logits of the prompt and of every step."""
    mask = torch.ones_like(prompt)
    with torch.inference_mode():
        out = model(input_ids=prompt, attention_mask=mask, **cache_argument(model, cache), use_cache=True)
        logits = [out.logits[:, -1]]
        if repeat > 1:
            cache.batch_repeat_interleave(repeat)
            mask, logits[0] = mask.repeat_interleave(repeat, 0), logits[0].repeat_interleave(repeat, 0)
        for step in range(steps):
            if keep is not None and step == 2:
                cache.batch_select_indices(keep)
                mask, logits[-1] = mask[keep], logits[-1][keep]
            token = logits[-1].argmax(-1, keepdim=True)
            mask = torch.cat([mask, torch.ones_like(token)], 1)
            out = model(input_ids=token, attention_mask=mask, **cache_argument(model, cache), use_cache=True)
            logits.append(out.logits[:, -1])
    return logits


@pytest.mark.parametrize("arch, capacity", [("llama", 64), ("llama", 5), ("gemma3", 64)])
def test_preallocated_cache_gives_the_dynamic_cache_logits_bit_for_bit(tiny_model_dirs, arch, capacity):
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dirs[arch]).eval()
    prompt = torch.randint(3, 200, (3, 7), generator=torch.Generator().manual_seed(0))
    keep = torch.tensor([0, 2, 5])
    reference = decode_logits(model, DynamicCache(config=model.config), prompt, 8, repeat=2, keep=keep)
    cache = preallocated_cache(model.config, capacity)  # capacity 5 < 7 + 8: the room doubles on the way
    assert any(isinstance(layer, (PreallocatedLayer, PreallocatedSlidingLayer)) for layer in cache.layers)
    got = decode_logits(model, cache, prompt, 8, repeat=2, keep=keep)
    assert all(torch.equal(a, b) for a, b in zip(reference, got))


def test_a_sliding_window_layer_outgrown_by_the_sequence_falls_back_to_transformers(tiny_model_dirs):
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dirs["gemma3"]).eval()
    model.config.sliding_window = 6  # prompt 7 + 8 steps run past it
    prompt = torch.randint(3, 200, (2, 7), generator=torch.Generator().manual_seed(1))
    reference = decode_logits(model, DynamicCache(config=model.config), prompt, 8)
    cache = preallocated_cache(model.config, 32)
    got = decode_logits(model, cache, prompt, 8)
    assert any(getattr(layer, "_spilled", False) for layer in cache.layers)
    assert all(torch.equal(a, b) for a, b in zip(reference, got))


def test_concatenated_rows_continue_like_one_cache(tiny_model_dirs):
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dirs["llama"]).eval()
    prompt = torch.randint(3, 200, (4, 6), generator=torch.Generator().manual_seed(2))
    whole = decode_logits(model, DynamicCache(config=model.config), prompt, 1)
    with torch.inference_mode():
        parts = [preallocated_cache(model.config, 16) for _ in range(2)]
        for cache, rows in zip(parts, (prompt[:2], prompt[2:])):
            model(input_ids=rows, attention_mask=torch.ones_like(rows), **cache_argument(model, cache), use_cache=True)
        joined = concatenate_rows(parts)
        token = whole[0].argmax(-1, keepdim=True)
        mask = torch.ones(4, 7, dtype=torch.long)
        step = model(input_ids=token, attention_mask=mask, **cache_argument(model, joined), use_cache=True)
        step = step.logits[:, -1]
    torch.testing.assert_close(step, whole[1], rtol=0, atol=1e-5)


def test_the_cache_goes_in_under_the_name_the_forward_declares():
    """transformers renamed past_key_values to cache; a name the forward does not declare would vanish into its
    **kwargs and decode without the cache, so cache_argument reads the name from the signature (or refuses)."""
    from toxlib.generate.kv_cache import cache_argument

    class NewStyle(torch.nn.Module):
        def forward(self, input_ids=None, cache=None, **kwargs):
            return cache

    class OldStyle(torch.nn.Module):
        def forward(self, input_ids=None, past_key_values=None, **kwargs):
            return past_key_values

    class Neither(torch.nn.Module):
        def forward(self, input_ids=None, **kwargs):
            return None

    marker = object()
    assert NewStyle()(**cache_argument(NewStyle(), marker)) is marker
    assert OldStyle()(**cache_argument(OldStyle(), marker)) is marker
    with pytest.raises(TypeError, match="neither cache nor past_key_values"):
        cache_argument(Neither(), marker)
