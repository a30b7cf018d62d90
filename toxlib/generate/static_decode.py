"""Decoding on a GPU: a static key/value cache of the batch's shape, each step replayed as a CUDA graph, the exact
nucleus over the whole batch (``toxlib.generate.nucleus_batch``), and no host synchronisation between the prefill
and the batch's last step. ``toxlib.generate.decoder_choice.choose_decoder`` sends a batch here.

Why: on a GPU a decoding step of a small model is hundreds of short kernels (28,382 launches in the profile of one
``bench generate`` run of SmolLM2 on an H200), each issued by the host, and the eager loop of
``toxlib.generate.engine.decode_batch`` asks the host twice a step whether rows have stopped, and the nucleus
sampler once per stage of its ladder. The path's parts, one module each:
  * sizing (``static_sizing``): the batch is padded to a row bucket (powers of two up to 1,024, then multiples of
    1,024) and its cache to a position bucket (multiples of 64), so a handful of shapes serve a whole run; padding
    rows are copies of the first row, dropped at the end. The prompts' prefill runs as the eager engine runs it
    (``batch_invariant_prefill``) and its keys and values are copied into the static cache, each prompt's to its
    samples' rows; each step then writes its keys and values at one device-side position (``StaticLayer``) and
    attends over the whole cache through a prepared mask (the positions not written yet are masked);
  * the step (``graphed_step``): the model's forward and the position's increment, captured once per shape as a
    CUDA graph and replayed (``DecodeStep``); without CUDA (the tests on a CPU) the same step runs eagerly;
  * the sampler's capacity (``sampler_capacity``): every row decodes ``max_new_tokens`` and is cut at its first
    stop token afterwards (the eager loop drops finished rows instead: the same texts), so nothing is read back
    until the batch ends: the tokens, and the sampler's overflow flag. A batch whose sampler ran out of slots is
    decoded again with more, so every draw is the exact nucleus's; one that did not leaves the next batch of its
    shape the slots it needed, with room to spare;
  * timing (``decode_timing``): the sampler's time, from CUDA events read once per batch.
What a model keeps between batches (its steps, with their caches and graphs, and its learned slots) is held in a
``Decoders`` object: the caller's (``generate(..., decoders=...)``), or this module's ``SHARED_DECODERS``.
TF32 stays as PyTorch leaves it (off) unless ``toxlib.models.device.tf32(True)``; bf16 only when the model was
loaded in bf16. Rows decoded here are keyed apart from a CPU's (``toxlib.generate.config.run_key``'s kernels).
"""

from __future__ import annotations

import weakref

import torch

from toxlib.generate.config import DecodingConfig
from toxlib.generate.decode_timing import stream_timer
from toxlib.generate.decoder_choice import graphs_wanted
from toxlib.generate.graphed_step import DecodeStep, KeptSteps
from toxlib.generate.nucleus import NucleusStats
from toxlib.generate.nucleus_batch import NucleusSlots, batch_nucleus_sample, stages
from toxlib.generate.prefill import batch_invariant_prefill, cut_at_stop
from toxlib.generate.sampler_capacity import SamplerCapacity, decode_until_it_fits
from toxlib.generate.static_sizing import capacity_bucket, row_bucket


class DecodeState:
    """What one model keeps between batches on this path: its decoding steps of the shapes in use (``steps``) and
    the sampler slots learned per (rows, vocabulary) (``capacity``)."""

    def __init__(self):
        self.steps = KeptSteps()
        self.capacity = SamplerCapacity()


class Decoders:
    """The ``DecodeState`` of each model decoded on this path, held as long as the model (weakly keyed). A caller
    that creates one and passes it down (``generate(..., decoders=...)``) owns its steps, caches and graphs: they
    go when it does, or with ``release``."""

    def __init__(self):
        self._per_model: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def of(self, model) -> DecodeState:
        """``model``'s state (a new, empty one the first time)."""
        return self._per_model.setdefault(model, DecodeState())

    def drop(self, model) -> None:
        """Forget ``model``'s state (its steps, caches, graphs and learned slots)."""
        self._per_model.pop(model, None)


#: the state of callers that pass none (``decode_batch`` and ``generate`` without ``decoders``): kept between
#: ``generate`` calls, so a warm-up call leaves the timed one its graphs and slots
SHARED_DECODERS = Decoders()


@torch.inference_mode()
def static_decode_batch(model, prompt_ids: list[list[int]], config: DecodingConfig, uniforms: torch.Tensor | None,
                        stop_ids: tuple[int, ...], pad_id: int, stats: NucleusStats | None = None,
                        width: int | None = None, graphs: bool | None = None,
                        decoders: Decoders | None = None) -> list[list[int]]:
    """``toxlib.generate.engine.decode_batch``'s rows for a batch with no logits processors, decoded on this path.

    Arguments and result as ``decode_batch``'s: ``config.num_samples`` rows per prompt in prompt-major order, each
    the new token ids up to and including its first stop token. graphs: capture CUDA graphs (None:
    ``graphs_wanted``). decoders: where the model's steps and learned slots are kept (None: ``SHARED_DECODERS``).
    Greedy rows take the argmax of the same float32 logits.
    """
    device = next(model.parameters()).device
    graphs = graphs_wanted(device) if graphs is None else graphs
    n, steps_to_run = config.num_samples, config.max_new_tokens
    rows = len(prompt_ids) * n
    logits, prefill_cache, ids, mask, position = batch_invariant_prefill(model, prompt_ids, pad_id, 0, width)
    width = ids.shape[1]
    bucket = row_bucket(rows)
    source = torch.arange(bucket, device=device)
    source[rows:] = 0  # padding rows: copies of the first row
    prompt_of = source // n
    state_of_model = (SHARED_DECODERS if decoders is None else decoders).of(model)
    step = state_of_model.steps.step(model, bucket, capacity_bucket(width, steps_to_run))
    step.load(prefill_cache, prompt_of, width, mask, position[:, -1])
    del prefill_cache
    if graphs and step.graph is None and step.capturable:
        step.capture()
    first = logits[prompt_of].float()
    vocab = first.shape[-1]
    names = stages(vocab, config.top_p)
    u = None if uniforms is None else uniforms.to(device)[source]
    mark, seconds = stream_timer(device)
    (tokens, marks), state = decode_until_it_fits(
        lambda slots: _decode_steps(step, first.clone(), config, u, slots, width, mark), step.rewind,
        state_of_model.capacity, bucket, vocab, names, device, rows, config.mode == "sample")
    if stats is not None and config.mode == "sample":
        state.add_to(stats, names)
        stats.seconds += seconds(marks)
    return [cut_at_stop(row, stop_ids) for row in tokens[:rows].tolist()]


def _decode_steps(step: DecodeStep, logits: torch.Tensor, config: DecodingConfig, u: torch.Tensor | None,
                  state: NucleusSlots, width: int, mark) -> tuple[torch.Tensor, list]:
    """Every step of one batch from the prefill's logits: (tokens (rows, max_new_tokens), the sampler's timing
    marks). Nothing here waits for the device."""
    tokens = torch.empty((step.rows, config.max_new_tokens), dtype=torch.long, device=logits.device)
    marks = []
    for t in range(config.max_new_tokens):
        if t:
            logits = step.run(tokens[:, t - 1], width + t - 1).float()
        if config.mode == "greedy":
            tokens[:, t] = logits.argmax(-1)
            continue
        scores = logits / config.temperature if config.temperature != 1.0 else logits
        marks.append(mark())
        tokens[:, t] = batch_nucleus_sample(scores, config.top_p, u[:, t], top_k=config.top_k, overwrite=True,
                                            state=state)
        marks.append(mark())
    return tokens, marks


def release(model, decoders: Decoders | None = None) -> None:
    """Drop the decoding steps (static caches, CUDA graphs and their memory pools) kept for ``model`` in
    ``decoders`` (None: ``SHARED_DECODERS``), e.g. before another library's code runs on the same GPU; the next
    batch makes them again."""
    (SHARED_DECODERS if decoders is None else decoders).drop(model)
    if next(model.parameters()).device.type == "cuda":
        torch.cuda.empty_cache()
