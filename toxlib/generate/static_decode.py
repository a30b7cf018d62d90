"""Decoding on a GPU: a static key/value cache of the batch's shape, each step replayed as a CUDA graph, the exact
nucleus over the whole batch (``toxlib.generate.nucleus_batch``), and no host synchronisation between the prefill
and the batch's last step.

Why: on a GPU a decoding step of a small model is hundreds of short kernels (28,382 launches in the profile of one
``bench generate`` run of SmolLM2 on an H200), each issued by the host, and the eager loop of
``toxlib.generate.engine.decode_batch`` asks the host twice a step whether rows have stopped, and the nucleus
sampler once per stage of its ladder. Here:
  * the batch is padded to a row bucket (``row_bucket``: powers of two up to 1,024, then multiples of 1,024) and its
    cache to a position bucket (``capacity_bucket``: multiples of 64), so a handful of shapes serve a whole run;
    padding rows are copies of the first row, dropped at the end;
  * the prompts' prefill runs as the eager engine runs it (``batch_invariant_prefill``) and its keys and values
    are copied into the static cache, each prompt's to its samples' rows; each step then writes its keys and values
    at one device-side position (``StaticLayer``) and attends over the whole cache through a prepared mask (the
    positions not written yet are masked);
  * a step (the model's forward and the position's increment) is captured once per shape as a CUDA graph and
    replayed (``DecodeStep``); without CUDA (the tests on a CPU) the same step runs eagerly;
  * every row decodes ``max_new_tokens`` and is cut at its first stop token afterwards (the eager loop drops
    finished rows instead: the same texts), so nothing is read back until the batch ends: the tokens, and the
    sampler's overflow flag. A batch whose sampler ran out of slots is decoded again with more
    (``NucleusSlots.grown``), so every draw is the exact nucleus's; one that did not leaves the next batch of its
    shape the slots it needed, with room to spare (``NucleusSlots.fitted``).
TF32 stays as PyTorch leaves it (off) unless ``toxlib.models.device.tf32(True)``; bf16 only when the model was
loaded in bf16. Rows decoded here are keyed apart from a CPU's (``toxlib.generate.config.run_key``'s kernels).
Steering (logits processors), beam search, and a sliding-window model whose cache would pass its window take the
eager loop (``reason_not_static``). ``TOXLIB_CUDA_GRAPHS=0`` runs this path without graphs (for timing them).
"""

from __future__ import annotations

import os
import time
import warnings
import weakref
from collections import OrderedDict

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from toxlib.generate.config import DecodingConfig
from toxlib.generate.kv_cache import cache_argument
from toxlib.generate.nucleus import NucleusStats
from toxlib.generate.nucleus_batch import NucleusSlots, batch_nucleus_sample, default_slots, stages
from toxlib.generate.prefill import batch_invariant_prefill, cut_at_stop
from toxlib.models.device import free_memory
from toxlib.models.gpu_memory import model_shape
from toxlib.models.length_groups import window as sliding_window

#: row buckets up to 1,024; above, multiples of 1,024
ROW_BUCKETS = (64, 128, 256, 512, 1024)
#: cache positions are padded to a multiple of this
CAPACITY_STEP = 64
#: decoding steps (shapes) whose graphs and caches a model keeps at once
KEPT_STEPS = 2
#: attention implementations whose masks ``DecodeStep`` prepares itself
MASKED_ATTENTION = ("sdpa", "eager")


def row_bucket(rows: int) -> int:
    """The rows a batch of ``rows`` is padded to: the smallest of ``ROW_BUCKETS`` that holds it, past 1,024 the next
    multiple of 1,024."""
    if rows < 1:
        raise ValueError(f"a batch needs at least one row, got {rows}")
    for bucket in ROW_BUCKETS:
        if rows <= bucket:
            return bucket
    return -(-rows // ROW_BUCKETS[-1]) * ROW_BUCKETS[-1]


def capacity_bucket(width: int, max_new_tokens: int) -> int:
    """Cache positions for prompts of ``width`` and ``max_new_tokens`` new tokens (the last one is never fed back):
    ``width + max_new_tokens - 1`` up to a multiple of ``CAPACITY_STEP``."""
    need = width + max_new_tokens - 1
    return max(CAPACITY_STEP, -(-need // CAPACITY_STEP) * CAPACITY_STEP)


def reason_not_static(model, config: DecodingConfig, processors, width: int) -> str | None:
    """Why a batch takes the eager loop instead of this path (None: it can take this path)."""
    if config.mode not in ("sample", "greedy"):
        return f"{config.mode} decoding goes through model.generate"
    if processors:
        return "logits processors (steering) read and change rows step by step"
    implementation = getattr(model.config, "_attn_implementation", None)
    if implementation not in MASKED_ATTENTION:
        return f"attention {implementation!r} takes no prepared mask here (only {', '.join(MASKED_ATTENTION)})"
    limit = sliding_window(model)
    if limit is not None and width + config.max_new_tokens - 1 > limit - 1:  # as the eager cache keeps every state
        return f"prompt and continuation would pass the sliding window ({limit} positions)"
    return None


class StaticLayer(DynamicLayer):
    """A layer of the static cache: keys and values (rows, kv heads, capacity, head dim) at fixed addresses; an
    update writes its states at the device-side position ``filled`` (one 0-d tensor shared by every layer, moved on
    by ``DecodeStep`` after the forward) and returns the whole buffers (positions not written yet are masked)."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, filled: torch.Tensor):
        super().__init__()
        self.keys, self.values, self.filled = keys, values, filled
        self.is_initialized = True

    def update(self, key_states, value_states, *args, **kwargs):
        at = self.filled + torch.arange(key_states.shape[-2], device=self.filled.device)
        self.keys.index_copy_(2, at, key_states)
        self.values.index_copy_(2, at, value_states)
        return self.keys, self.values

    def get_seq_length(self) -> int:
        """The positions attention reads: the whole buffer (how many are written is on the device, in
        ``filled``; the step passes position ids and a prepared mask, so nothing reads this to place tokens)."""
        return self.keys.shape[-2]


def static_cache(model, rows: int, capacity: int) -> tuple[DynamicCache, torch.Tensor]:
    """(a cache of ``StaticLayer``s for ``rows`` x ``capacity`` positions, zeros, in the model's dtype and device;
    its shared position ``filled``)."""
    shape = model_shape(model.config)
    parameter = next(model.parameters())
    filled = torch.zeros((), dtype=torch.long, device=parameter.device)
    cache = DynamicCache(config=model.config)
    size = (rows, shape["kv_heads"], capacity, shape["head_dim"])
    cache.layers = [StaticLayer(parameter.new_zeros(size), parameter.new_zeros(size), filled)
                    for _ in range(len(cache.layers) or shape["layers"])]
    return cache, filled


class DecodeStep:
    """One decoding step of ``model`` for ``rows`` rows and ``capacity`` cache positions, on tensors at fixed
    addresses: token ids (rows, 1), position ids (rows, 1), the attention mask (rows, 1, 1, capacity) bool, the
    static cache, and the logits it writes (rows, V). ``load`` fills them from a prefill; ``run`` feeds one token
    per row and returns the next logits, through a CUDA graph once one is captured (``capture``), eagerly
    otherwise."""

    def __init__(self, model, rows: int, capacity: int):
        self.model, self.rows, self.capacity = model, rows, capacity
        device = next(model.parameters()).device
        self.cache, self.filled = static_cache(model, rows, capacity)
        self.ids = torch.zeros((rows, 1), dtype=torch.long, device=device)
        self.positions = torch.zeros((rows, 1), dtype=torch.long, device=device)
        self.mask = torch.zeros((rows, 1, 1, capacity), dtype=torch.bool, device=device)
        self.graph = None
        self.logits = None
        self.capturable = True

    def load(self, prefill_cache, source_rows: torch.Tensor, width: int, mask: torch.Tensor,
             last_positions: torch.Tensor) -> None:
        """Fill the step's tensors from a prefill: row r takes prefill row ``source_rows[r]``'s keys and values (the
        first ``width`` positions), attention mask (width,) and last position id."""
        for layer, pre in zip(self.cache.layers, prefill_cache.layers):
            layer.keys[:, :, :width].copy_(pre.keys[source_rows])
            layer.values[:, :, :width].copy_(pre.values[source_rows])
        self.mask.zero_()
        self.mask[:, 0, 0, :width] = mask[source_rows].bool()
        self.start = (width, last_positions[source_rows].view(-1, 1).clone())
        self.rewind()

    def rewind(self) -> None:
        """Back to the state ``load`` left (the prompts' positions are never written by a step)."""
        width, positions = self.start
        self.mask[:, :, :, width:] = False
        self.positions.copy_(positions)
        self.filled.fill_(width)

    def _forward(self) -> torch.Tensor:
        attend = self.mask
        if self.model.config._attn_implementation == "eager":  # eager attention adds its mask
            dtype = self.cache.layers[0].keys.dtype
            attend = torch.zeros(self.mask.shape, dtype=dtype, device=self.mask.device).masked_fill_(
                ~self.mask, torch.finfo(dtype).min)
        out = self.model(input_ids=self.ids, attention_mask=attend, position_ids=self.positions,
                         **cache_argument(self.model, self.cache), use_cache=True)
        self.filled.add_(1)
        return out.logits[:, -1]

    def capture(self) -> None:
        """Record the step as a CUDA graph (after two eager warm-up steps on a side stream, whose writes the first
        replay overwrites). A forward that cannot be captured (one that reads the device from the host, in some
        transformers release) leaves the step eager, with a warning that says why."""
        start = self.filled.clone()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                self._forward()
                self.filled.copy_(start)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                self.logits = self._forward()
        except RuntimeError as err:
            warnings.warn(f"decoding steps of {type(self.model).__name__} run without CUDA graphs: the forward "
                          f"could not be captured ({str(err).splitlines()[0]})", stacklevel=3)
            self.capturable = False
            self.filled.copy_(start)
            return
        self.filled.copy_(start)
        self.graph = graph

    def run(self, tokens: torch.Tensor, column: int) -> torch.Tensor:
        """Feed ``tokens`` (rows,) at cache position ``column`` (one past the positions written so far); returns the
        next logits (rows, V), in the graph's buffer when graphed (overwritten by the next ``run``)."""
        self.ids.copy_(tokens.view(-1, 1))
        self.positions.add_(1)
        self.mask[:, :, :, column] = True
        if self.graph is None:
            return self._forward()
        self.graph.replay()
        return self.logits


class _ModelSteps:
    """Per model: the ``DecodeStep`` of each shape in use (the ``KEPT_STEPS`` most recent) and the sampler slots
    learned per (rows, vocabulary) from batches that overflowed."""

    def __init__(self):
        self.steps: OrderedDict = OrderedDict()
        self.slots: dict = {}

    def step(self, model, rows: int, capacity: int) -> DecodeStep:
        key = (rows, capacity)
        if key in self.steps:
            self.steps.move_to_end(key)
            return self.steps[key]
        while len(self.steps) >= KEPT_STEPS:
            self.steps.popitem(last=False)
        step = DecodeStep(model, rows, capacity)
        self.steps[key] = step
        return step


_per_model: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def graphs_wanted(device: torch.device) -> bool:
    """CUDA graphs on a GPU unless ``TOXLIB_CUDA_GRAPHS=0``; never on a CPU."""
    return device.type == "cuda" and os.environ.get("TOXLIB_CUDA_GRAPHS", "1") != "0"


def _timer(device: torch.device):
    """(mark, seconds): ``mark()`` notes a point in the stream, ``seconds(marks)`` sums the time between pairs of
    marks; CUDA events on a GPU (read once the batch is done), the host's clock on a CPU."""
    if device.type == "cuda":
        def mark():
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return mark, lambda marks: sum(a.elapsed_time(b) for a, b in zip(marks[::2], marks[1::2])) / 1000
    return time.perf_counter, lambda marks: sum(b - a for a, b in zip(marks[::2], marks[1::2]))


@torch.inference_mode()
def static_decode_batch(model, prompt_ids: list[list[int]], config: DecodingConfig, uniforms: torch.Tensor | None,
                        stop_ids: tuple[int, ...], pad_id: int, stats: NucleusStats | None = None,
                        width: int | None = None, graphs: bool | None = None) -> list[list[int]]:
    """``toxlib.generate.engine.decode_batch``'s rows for a batch with no logits processors, decoded on this path.

    Arguments and result as ``decode_batch``'s: ``config.num_samples`` rows per prompt in prompt-major order, each
    the new token ids up to and including its first stop token. graphs: capture CUDA graphs (None:
    ``graphs_wanted``). Greedy rows take the argmax of the same float32 logits.
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
    per_model = _per_model.setdefault(model, _ModelSteps())
    step = per_model.step(model, bucket, capacity_bucket(width, steps_to_run))
    step.load(prefill_cache, prompt_of, width, mask, position[:, -1])
    del prefill_cache
    if graphs and step.graph is None and step.capturable:
        step.capture()
    first = logits[prompt_of].float()
    vocab = first.shape[-1]
    names = stages(vocab, config.top_p)
    u = None if uniforms is None else uniforms.to(device)[source]
    slots = per_model.slots.get((bucket, vocab)) or default_slots(bucket, vocab, names, free_memory(device))
    mark, seconds = _timer(device)
    while True:
        state = NucleusSlots.of(slots, device, counted=rows)
        tokens, marks = _decode_steps(step, first.clone(), config, u, state, width, mark)
        overflowed = bool(state.overflow) if config.mode == "sample" else False  # the batch's one read-back
        if not overflowed:
            if config.mode == "sample":  # the next batch of this shape gets the slots this one needed
                per_model.slots[(bucket, vocab)] = state.fitted(bucket)
            break
        slots = state.grown(bucket).slots
        per_model.slots[(bucket, vocab)] = slots
        step.rewind()
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


def release(model) -> None:
    """Drop the decoding steps (static caches, CUDA graphs and their memory pools) kept for ``model``, e.g. before
    another library's code runs on the same GPU; the next batch makes them again."""
    _per_model.pop(model, None)
    if next(model.parameters()).device.type == "cuda":
        torch.cuda.empty_cache()
