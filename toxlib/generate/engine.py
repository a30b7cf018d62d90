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

Which loop decodes a batch is chosen in one place, :func:`toxlib.generate.decoder_choice.choose_decoder` (with its
reason): on a GPU, sampled and greedy batches without logits processors go to :mod:`toxlib.generate.static_decode`
(a static cache, CUDA graphs, the batch-wide nucleus, no host synchronisation inside a step); everything on a CPU
runs the loop below, unchanged.
"""

from __future__ import annotations

import torch

from toxlib.generate.config import DecodingConfig
from toxlib.generate.decoder_choice import choose_decoder
from toxlib.generate.kv_cache import cache_argument
from toxlib.generate.nucleus import NucleusStats, nucleus_sample
from toxlib.generate.prefill import (  # noqa: F401 -- prefill and shared_prefix are imported from here too
    MIN_SHARED_PREFIX,
    batch_invariant_prefill,
    cut_at_stop,
    prefill,
    shared_prefix,
)
from toxlib.generate.static_decode import Decoders, static_decode_batch
from toxlib.models.batching import MIN_ROWS, companions, pad

PRUNE_SHARE = 0.125  # drop finished rows from the batch once they are at least this share of it


def call_optional(processors, method: str, *args) -> None:
    for proc in processors:
        if hasattr(proc, method):
            getattr(proc, method)(*args)


@torch.inference_mode()
def decode_batch(model, prompt_ids: list[list[int]], config: DecodingConfig, uniforms: torch.Tensor | None,
                 stop_ids: tuple[int, ...], pad_id: int, processors: list | None = None,
                 stats: NucleusStats | None = None, width: int | None = None,
                 decoders: Decoders | None = None) -> list[list[int]]:
    """Decode ``config.num_samples`` continuations for each prompt with the sample/greedy loop.

    prompt_ids: token ids per prompt (each non-empty). uniforms: (len(prompt_ids) * num_samples, max_new_tokens)
    float64 in [0, 1), one row per (prompt, sample) in prompt-major order (None for greedy). width: the padded
    prompt width (None: the longest prompt); pass one fixed by the prompts' own lengths for batch invariance.
    decoders: what the GPU path keeps between batches (``toxlib.generate.static_decode.Decoders``; None: its
    shared one). Returns the new token ids per row in the same order, each ending at (and including) its first stop
    token.
    """
    device = next(model.parameters()).device
    choice = choose_decoder(model, config, processors, _width(prompt_ids, width))
    if choice.loop == "static":
        return static_decode_batch(model, prompt_ids, config, uniforms, stop_ids, pad_id, stats, width,
                                   graphs=choice.graphs, decoders=decoders)
    n = config.num_samples
    rows = len(prompt_ids) * n
    copies = companions(rows)
    if copies > 1:  # too few rows take other kernels: decode copies of the batch beside it, drop them
        more = None if uniforms is None else uniforms.repeat(copies, 1)
        return decode_batch(model, prompt_ids * copies, config, more, stop_ids, pad_id, processors, stats,
                            width, decoders)[:rows]
    processors = processors or []
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
    return [cut_at_stop(row, stop_ids) for row in new_tokens.tolist()]


def _width(prompt_ids: list[list[int]], width: int | None) -> int:
    """The padded prompt width of a batch (``width``, or its longest prompt)."""
    return width if width is not None else max(len(p) for p in prompt_ids)


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
    return [cut_at_stop(row, stop_ids) for row in out[:, ids.shape[1]:].tolist()]
