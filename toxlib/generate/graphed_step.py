"""One decoding step of the GPU decoding path (:mod:`toxlib.generate.static_decode`), captured once per shape as a
CUDA graph and replayed, and the few steps a model keeps between batches.

Inputs: a model, a row bucket and a cache capacity (``toxlib.generate.static_sizing``); a prefill's cache, mask and
last positions (``DecodeStep.load``); then one token per row per step (``DecodeStep.run``).
Outputs: the next logits (rows, V) of each step, in the graph's own buffer when graphed.
Guarantees: the step's tensors (token ids, position ids, the prepared attention mask, the static cache, the logits)
stay at fixed addresses, so a replay computes what the eager forward computes; a forward that cannot be captured
leaves the step eager, with a warning (``DecodeStep.capture``); without a capture (a CPU, ``TOXLIB_CUDA_GRAPHS=0``)
the same step runs eagerly. ``KeptSteps`` keeps the ``KEPT_STEPS`` most recently used shapes of one model (their
caches and graphs hold GPU memory).
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

import torch

from toxlib.generate.kv_cache import cache_argument
from toxlib.generate.static_sizing import static_cache

#: decoding steps (shapes) whose graphs and caches a model keeps at once
KEPT_STEPS = 2
#: attention implementations whose masks ``DecodeStep`` prepares itself
MASKED_ATTENTION = ("sdpa", "eager")


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


class KeptSteps:
    """One model's ``DecodeStep`` of each shape in use: the ``KEPT_STEPS`` most recently used, the oldest dropped
    (with its static cache and graph) when a new shape comes."""

    def __init__(self):
        self.steps: OrderedDict = OrderedDict()

    def step(self, model, rows: int, capacity: int) -> DecodeStep:
        """The step for (``rows``, ``capacity``): the kept one, or a new one (not captured yet)."""
        key = (rows, capacity)
        if key in self.steps:
            self.steps.move_to_end(key)
            return self.steps[key]
        while len(self.steps) >= KEPT_STEPS:
            self.steps.popitem(last=False)
        step = DecodeStep(model, rows, capacity)
        self.steps[key] = step
        return step
