"""The decoding loop for one batch of prompts: batched prefill, shared across samples, then token-by-token decoding.

Why not ``model.generate`` once per prompt (what the papers' code does)? Three costs dominate on a CPU:
  1. transformers' top-p sorts the whole vocabulary every step (262,144 entries per row for Gemma);
     we use the exact partial-top-k sampler of :mod:`toxlib.generate.nucleus`;
  2. ``num_return_sequences=25`` copies the prompt 25 times before the prefill; we run the prefill once per prompt
     and copy its key/value cache (``DynamicCache.batch_repeat_interleave``);
  3. 25 rows per forward pass leaves the matmuls small; we batch the prompts of one padded width together (up
     to a few hundred rows per step) and drop rows from the batch once they have stopped.
``prefill`` can run a prefix shared by every prompt of a batch once; ``decode_batch`` does not use that (a row's
result would then depend on its batch). It gets prompts left-padded to one width fixed by their own lengths
(``toxlib.models.batching.bucket_width``), and never decodes fewer than ``MIN_ROWS`` rows: a smaller batch is
decoded beside copies of itself, the prefill of fewer than ``MIN_ROWS`` prompts beside copies of them, and pruning
keeps finished rows beside the last live ones, because a matmul of 1-3 rows takes other kernels (see
``toxlib.models.batching.MIN_ROWS``). Greedy decoding runs through the same
loop; beam search goes to ``model.generate`` (batched, left padded to the same width, with copies up to
``MIN_ROWS`` rows).

Sliding-window attention (Gemma-3's local layers) counts padded positions inside the window, as transformers' own
batched generation does; it changes nothing while prompt + continuation is shorter than the window (512 tokens).
"""

from __future__ import annotations

import torch

from toxlib.generate.config import DecodingConfig
from toxlib.generate.kv_cache import cache_argument, preallocated_cache
from toxlib.generate.nucleus import NucleusStats, nucleus_sample
from toxlib.models.batching import MIN_ROWS, companions, pad
from toxlib.models.length_groups import window as sliding_window

PRUNE_SHARE = 0.125  # drop finished rows from the batch once they are at least this share of it
MIN_SHARED_PREFIX = 16  # a common prompt prefix at least this long is run once per batch (see ``prefill``)


def call_optional(processors, method: str, *args) -> None:
    for proc in processors:
        if hasattr(proc, method):
            getattr(proc, method)(*args)


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
    batch of 1-3 prompts would take other kernels there (on an AMD EPYC a prompt's float32 step-0 logits moved by
    up to 2.4e-5 between a batch of its own and one shared with two other prompts of its width, every hidden state
    the same). Copies of the prompts run beside them, and their rows are dropped
    (``tests/generate/test_batch_invariance.py``)."""
    rows = len(prompt_ids)
    copies = companions(rows)
    logits, cache, ids, mask, position = prefill(model, prompt_ids * copies, pad_id, min_shared=0, reserve=reserve,
                                                 width=width)
    if copies > 1:
        cache.batch_select_indices(torch.arange(rows, device=logits.device))
        logits, ids, mask, position = logits[:rows], ids[:rows], mask[:rows], position[:rows]
    return logits, cache, ids, mask, position


@torch.inference_mode()
def decode_batch(model, prompt_ids: list[list[int]], config: DecodingConfig, uniforms: torch.Tensor | None,
                 stop_ids: tuple[int, ...], pad_id: int, processors: list | None = None,
                 stats: NucleusStats | None = None, width: int | None = None) -> list[list[int]]:
    """Decode ``config.num_samples`` continuations for each prompt with the sample/greedy loop.

    prompt_ids: token ids per prompt (each non-empty). uniforms: (len(prompt_ids) * num_samples, max_new_tokens)
    float64 in [0, 1), one row per (prompt, sample) in prompt-major order (None for greedy). width: the padded
    prompt width (None: the longest prompt); pass one fixed by the prompts' own lengths for batch invariance.
    Returns the new token ids per row in the same order, each ending at (and including) its first stop token.
    """
    n = config.num_samples
    rows = len(prompt_ids) * n
    copies = companions(rows)
    if copies > 1:  # too few rows take other kernels: decode copies of the batch beside it, drop them
        more = None if uniforms is None else uniforms.repeat(copies, 1)
        return decode_batch(model, prompt_ids * copies, config, more, stop_ids, pad_id, processors, stats,
                            width)[:rows]
    processors = processors or []
    device = next(model.parameters()).device
    # min_shared=0: no prefix run once for several prompts, which would make a row depend on its batch
    logits, cache, ids, mask, position = batch_invariant_prefill(model, prompt_ids, pad_id, config.max_new_tokens,
                                                                 width)
    position = position[:, -1:]
    if n > 1:
        cache.batch_repeat_interleave(n)
        logits, ids, mask, position = (t.repeat_interleave(n, dim=0) for t in (logits, ids, mask, position))
    rows = ids.shape[0]
    call_optional(processors, "start_batch", ids, mask, n)
    stop = torch.tensor(stop_ids or [-1], device=device)
    if uniforms is not None:
        uniforms = uniforms.to(device)
    live = torch.arange(rows, device=device)  # batch row -> output row
    new_tokens = torch.full((rows, config.max_new_tokens), -1, dtype=torch.long, device=device)
    for step in range(config.max_new_tokens):
        scores = logits.float()
        for proc in processors:
            scores = proc(ids, scores)
        if config.mode == "greedy":
            token = scores.argmax(-1)
        else:
            token = nucleus_sample(scores / config.temperature if config.temperature != 1.0 else scores,
                                   config.top_p, uniforms[live, step], top_k=config.top_k, stats=stats,
                                   overwrite=True)  # the step's logits are not needed afterwards
        new_tokens[live, step] = token
        finished = torch.isin(token, stop)
        if step == config.max_new_tokens - 1 or bool(finished.all()):
            break
        ids = torch.cat([ids, token[:, None]], dim=1)
        mask = torch.cat([mask, torch.ones_like(token)[:, None]], dim=1)
        position = position + 1
        if finished.any() and int(finished.sum()) >= PRUNE_SHARE * live.numel():
            keep = (~finished).nonzero().squeeze(-1)
            if keep.numel() < MIN_ROWS:  # too few rows take other kernels: finished rows stay as companions
                keep = torch.cat([keep, finished.nonzero()[:MIN_ROWS - keep.numel(), 0]]).sort().values
            cache.batch_select_indices(keep)
            ids, mask, position, token, live = ids[keep], mask[keep], position[keep], token[keep], live[keep]
            call_optional(processors, "select_rows", keep)
            finished = finished[keep]
        # Rows that stopped but were not pruned keep decoding; their extra tokens are cut below.
        out = model(input_ids=token[:, None], attention_mask=mask, position_ids=position,
                    **cache_argument(model, cache), use_cache=True)
        logits = out.logits[:, -1]
    return [_cut(row, stop_ids) for row in new_tokens.tolist()]


def _cut(tokens: list[int], stop_ids: tuple[int, ...]) -> list[int]:
    """Tokens up to the first stop token (included); -1 marks steps never decoded."""
    out = []
    for t in tokens:
        if t < 0:
            break
        out.append(t)
        if t in stop_ids:
            break
    return out


@torch.inference_mode()
def beam_batch(model, prompt_ids: list[list[int]], config: DecodingConfig, stop_ids: tuple[int, ...], pad_id: int,
               processors: list | None = None, width: int | None = None) -> list[list[int]]:
    """Beam search (``config.num_beams`` beams, the best kept) for a batch of prompts via ``model.generate``,
    prompts left-padded to ``width`` (None: the longest)."""
    from transformers import LogitsProcessorList

    copies = companions(len(prompt_ids) * config.num_beams)
    if copies > 1:  # too few rows per step take other kernels: search copies of the batch beside it, drop them
        return beam_batch(model, prompt_ids * copies, config, stop_ids, pad_id, processors, width)[:len(prompt_ids)]
    device = next(model.parameters()).device
    ids, mask = pad(prompt_ids, pad_id, device, side="left", width=width)
    call_optional(processors or [], "start_batch", ids, mask, config.num_beams)
    out = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, num_beams=config.num_beams,
                         num_return_sequences=1, max_new_tokens=config.max_new_tokens, pad_token_id=pad_id,
                         eos_token_id=list(stop_ids) or None, logits_processor=LogitsProcessorList(processors or []),
                         top_p=None, top_k=None, temperature=None)
    return [_cut(row, stop_ids) for row in out[:, ids.shape[1]:].tolist()]
