"""Sizing for the GPU decoding path (:mod:`toxlib.generate.static_decode`): the shapes a batch is padded to, and
the static key/value cache allocated in them.

Inputs: a batch's row count, its padded prompt width and ``max_new_tokens``; a model (its config, dtype, device).
Outputs: ``row_bucket`` (the rows a batch is padded to: powers of two up to 1,024, then multiples of 1,024),
``capacity_bucket`` (cache positions: a multiple of ``CAPACITY_STEP``), and ``static_cache`` (a ``DynamicCache`` of
``StaticLayer``s of that shape, zeros, with the device-side position ``filled`` every layer shares).
Guarantees: a handful of shapes serve a whole run (so a captured step is reused); a bucket always holds what it is
asked for; the cache's tensors never move, so a CUDA graph can read and write them (``StaticLayer.update`` writes in
place at ``filled`` and returns the whole buffers).
"""

from __future__ import annotations

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from toxlib.models.gpu_memory import model_shape

#: row buckets up to 1,024; above, multiples of 1,024
ROW_BUCKETS = (64, 128, 256, 512, 1024)
#: cache positions are padded to a multiple of this
CAPACITY_STEP = 64


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
