"""The prefill of a batch of prompts, shared by the eager decoding loop (``toxlib.generate.engine``) and the GPU's
(``toxlib.generate.static_decode``), and the cut of a decoded row at its first stop token.

See ``toxlib.generate.engine`` for why the prefill runs once per prompt and how rows stay independent of their
batch (``batch_invariant_prefill``).
"""

from __future__ import annotations

import torch

from toxlib.generate.kv_cache import cache_argument, preallocated_cache
from toxlib.models.batching import companions, pad
from toxlib.models.length_groups import window as sliding_window

MIN_SHARED_PREFIX = 16  # a common prompt prefix at least this long is run once per batch (see ``prefill``)


def shared_prefix(sequences: list[list[int]]) -> int:
    """Length of the longest token prefix common to all sequences, leaving at least one token of each."""
    shortest = min(len(s) for s in sequences)
    n = 0
    while n < shortest - 1 and all(s[n] == sequences[0][n] for s in sequences):
        n += 1
    return n


@torch.inference_mode()
def prefill(model, prompt_ids: list[list[int]], pad_id: int, min_shared: int = MIN_SHARED_PREFIX, reserve: int = 0,
            prefix: int | None = None, width: int | None = None):
    """Run a batch of prompts through the model once, filling a KV cache for decoding.

    ``width``: left-pad the rows (after any shared prefix) to exactly this many tokens rather than to the longest.

    ``prefix``: share exactly this many leading tokens (every prompt must start with them and be longer), whatever
    the batch; a fixed prefix and equal-length rests make each row independent of its batch. None: the rule below.

    When the prompts share a token prefix of at least ``min_shared`` tokens (a few-shot preamble, an instruction),
    the prefix runs once and its cache is copied to every row (``min_shared=0`` never shares); each row's
    remaining tokens are left-padded after it: row layout [prefix, padding, rest], the padding masked and position
    ids counted over real tokens only.
    Otherwise rows are left-padded whole. A model with sliding-window layers (Gemma-3) shares a prefix only when
    the whole row, plus ``reserve`` tokens to be decoded, fits in the window: padding in the middle of a row would
    otherwise take window slots from real tokens and change the result. Returns (last-position logits (rows, V),
    cache, ids (rows, width), mask (rows, width), position ids (rows, width)), where width counts the prefix, the
    padding and the rest.
    """
    device = next(model.parameters()).device
    rows = len(prompt_ids)
    if prefix is not None:
        if any(len(p) <= prefix or p[:prefix] != prompt_ids[0][:prefix] for p in prompt_ids):
            raise ValueError(f"prefill(prefix={prefix}): every prompt must start with the same {prefix} tokens and "
                             "have at least one more")
        n_prefix = prefix
    else:
        n_prefix = shared_prefix(prompt_ids) if rows > 1 and min_shared else 0
        window = sliding_window(model)
        row_span = n_prefix + max(len(p) - n_prefix for p in prompt_ids) + reserve
        n_prefix = n_prefix if min_shared and n_prefix >= min_shared and (not window or row_span <= window) else 0
    ids, mask = pad([p[n_prefix:] for p in prompt_ids], pad_id, device, side="left", width=width)
    cache = preallocated_cache(model.config, n_prefix + ids.shape[1] + reserve)
    position = n_prefix + (mask.cumsum(-1) - 1).clamp(min=0)
    if n_prefix:
        prefix = torch.tensor([prompt_ids[0][:n_prefix]], device=device)
        model(input_ids=prefix, **cache_argument(model, cache), use_cache=True, logits_to_keep=1)
        cache.batch_repeat_interleave(rows)
        start = torch.arange(n_prefix, device=device).expand(rows, -1)
        step = model(input_ids=ids, attention_mask=torch.cat([torch.ones_like(start), mask], 1), position_ids=position,
                     **cache_argument(model, cache), use_cache=True, logits_to_keep=1)
        ids, mask, position = (torch.cat([prefix.expand(rows, -1), ids], 1),
                               torch.cat([torch.ones_like(start), mask], 1), torch.cat([start, position], 1))
    else:
        step = model(input_ids=ids, attention_mask=mask, position_ids=position, **cache_argument(model, cache),
                     use_cache=True, logits_to_keep=1)
    return step.logits[:, -1], cache, ids, mask, position


def batch_invariant_prefill(model, prompt_ids: list[list[int]], pad_id: int, reserve: int, width: int | None):
    """``prefill`` with no prefix shared between prompts and at least ``MIN_ROWS`` rows in every matmul, the same
    outputs for ``len(prompt_ids)`` rows. The prefill's LM head sees one row per prompt (its last position), so a
    batch of 1-3 prompts would take other kernels there: on an AMD EPYC, a prompt's float32 step-0 logits moved by
    up to 2.4e-5 between a batch of its own and one shared with two other prompts of its width, while every hidden
    state was the same. Copies of the prompts run beside them, and their rows are dropped."""
    rows = len(prompt_ids)
    copies = companions(rows)
    logits, cache, ids, mask, position = prefill(model, prompt_ids * copies, pad_id, min_shared=0, reserve=reserve,
                                                 width=width)
    if copies > 1:
        cache.batch_select_indices(torch.arange(rows, device=logits.device))
        logits, ids, mask, position = logits[:rows], ids[:rows], mask[:rows], position[:rows]
    return logits, cache, ids, mask, position


def cut_at_stop(tokens: list[int], stop_ids: tuple[int, ...]) -> list[int]:
    """Tokens up to the first stop token (included); -1 marks steps never decoded."""
    out = []
    for t in tokens:
        if t < 0:
            break
        out.append(t)
        if t in stop_ids:
            break
    return out
