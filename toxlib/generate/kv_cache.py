"""A KV cache that writes each step into preallocated room instead of concatenating.

transformers' ``DynamicCache`` grows every layer's keys and values with ``torch.cat`` at each decoding step, which
copies the whole cache every step: for SmolLM2 at 400 rows that was 12% of bf16 generation time on this book's
2-core CPU (``aten::cat`` in the profile), more than attention itself. ``preallocated_cache(config, rows_hint,
capacity)`` returns a ``DynamicCache`` whose layers keep one buffer of ``capacity`` positions and write new states
into it; ``keys``/``values`` are views of the filled part. Attention reads exactly the values it read before, in the
same shapes, so results are bitwise the same as with ``DynamicCache`` (tested on both bundled models in bf16).
A layer that outgrows its room doubles it (one copy). Sliding-window layers (Gemma-3) use the room while the
sequence fits their window and fall back to transformers' own behaviour past it.
"""

from __future__ import annotations

import functools
import inspect

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer, DynamicSlidingWindowLayer


def cache_argument(model, cache) -> dict:
    """``{name: cache}`` for ``model(**..., **cache_argument(model, cache))``: transformers renamed the forward
    argument ``past_key_values`` to ``cache`` (in 5.2x; the old name warns until its removal in 5.40) and older
    releases take only the old one, which the forward's signature tells apart. Passing a name the forward does not
    declare would vanish into its ``**kwargs`` and decode without the cache, so the name is never guessed."""
    return {_cache_keyword(type(model)): cache}


@functools.cache
def _cache_keyword(model_class) -> str:
    parameters = inspect.signature(model_class.forward).parameters
    if "cache" in parameters:
        return "cache"
    if "past_key_values" in parameters:
        return "past_key_values"
    raise TypeError(f"{model_class.__name__}.forward takes neither cache nor past_key_values: toxlib cannot pass it "
                    "a key/value cache (a transformers release this toxlib does not know; see pyproject.toml)")


class _Room:
    """The preallocated part shared by both layer kinds: a buffer (rows, heads, capacity, dim) per keys/values, and
    the batch-dimension operations (repeat, select, reorder) applied to it; listed first among the bases, so these
    replace the transformers layers' own."""

    def _init_room(self, capacity: int) -> None:
        self.capacity = capacity
        self._k = self._v = None
        self._filled = 0

    def _write(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        n = key_states.shape[-2]
        if self._k is None or self._filled + n > self._k.shape[-2]:
            room = max(self.capacity, 2 * (self._filled + n))
            k = key_states.new_empty((*key_states.shape[:2], room, key_states.shape[-1]))
            v = value_states.new_empty((*value_states.shape[:2], room, value_states.shape[-1]))
            if self._filled:
                k[:, :, :self._filled] = self._k[:, :, :self._filled]
                v[:, :, :self._filled] = self._v[:, :, :self._filled]
            self._k, self._v = k, v
        self._k[:, :, self._filled:self._filled + n] = key_states
        self._v[:, :, self._filled:self._filled + n] = value_states
        self._filled += n
        self.keys, self.values = self._k[:, :, :self._filled], self._v[:, :, :self._filled]

    def replace_states(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        """Hold exactly ``keys``/``values`` (rows, heads, positions, dim), with room for ``capacity`` positions."""
        self._k = self._v = None
        self._filled = 0
        self._write(keys, values)

    def _rows(self, pick) -> None:
        """Apply a batch-dimension operation (repeat, select) to the buffers and refresh the views."""
        if self._k is not None and self._filled:
            self._k, self._v = pick(self._k), pick(self._v)
            self.keys, self.values = self._k[:, :, :self._filled], self._v[:, :, :self._filled]

    def _batch(self, pick) -> None:
        self._rows(pick)

    def batch_repeat_interleave(self, repeats: int) -> None:
        self._batch(lambda t: t.repeat_interleave(repeats, dim=0))

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self._batch(lambda t: t[indices, ...])

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self._batch(lambda t: t.index_select(0, beam_idx.to(t.device)))

    def crop(self, tokens_to_remove: int) -> None:
        raise NotImplementedError("a preallocated cache layer is not croppable; use DynamicCache for that")


class PreallocatedLayer(_Room, DynamicLayer):
    """A full-attention layer of ``preallocated_cache``."""

    def __init__(self, capacity: int):
        super().__init__()
        self._init_room(capacity)

    def update(self, key_states, value_states, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        self._write(key_states, value_states)
        return self.keys, self.values


class PreallocatedSlidingLayer(_Room, DynamicSlidingWindowLayer):
    """A sliding-window layer of ``preallocated_cache``: preallocated while the sequence fits in the window (where
    ``DynamicSlidingWindowLayer`` keeps every state too), ``DynamicSlidingWindowLayer`` itself past it."""

    def __init__(self, sliding_window: int, capacity: int):
        super().__init__(sliding_window=sliding_window)
        self._init_room(min(capacity, sliding_window - 1))
        self._spilled = False

    def update(self, key_states, value_states, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        if not self._spilled and self.cumulative_length + key_states.shape[-2] <= self.sliding_window - 1:
            self.cumulative_length += key_states.shape[-2]
            self._write(key_states, value_states)
            return self.keys, self.values
        if not self._spilled:  # past the window: plain tensors from here on, transformers' code path
            self._spilled = True
            self.keys, self.values = self.keys.contiguous(), self.values.contiguous()
            self._k = self._v = None
        return super().update(key_states, value_states, *args, **kwargs)

    def _batch(self, pick) -> None:
        if self._spilled:
            self.keys, self.values = pick(self.keys), pick(self.values)
        else:
            self._rows(pick)


def concatenate_rows(caches: list[DynamicCache]) -> DynamicCache:
    """One cache holding the rows of several caches of the same model and sequence length, in order (the first
    cache, reused). Preallocated layers keep their room; other layers get the concatenated tensors."""
    first = caches[0]
    if len(caches) == 1:
        return first
    for i, layer in enumerate(first.layers):
        keys = torch.cat([c.layers[i].keys for c in caches], dim=0)
        values = torch.cat([c.layers[i].values for c in caches], dim=0)
        if isinstance(layer, _Room) and not getattr(layer, "_spilled", False):
            layer.replace_states(keys, values)
        else:
            layer.keys, layer.values = keys, values
    return first


def preallocated_cache(config, capacity: int) -> DynamicCache:
    """A ``DynamicCache`` for a model with ``config`` whose layers write into room for ``capacity`` positions
    (prompt width plus the tokens to decode). Layer kinds other than full attention and sliding window (none in
    the bundled models) stay transformers' own."""
    cache = DynamicCache(config=config)
    for i, layer in enumerate(cache.layers):
        if type(layer) is DynamicLayer:
            cache.layers[i] = PreallocatedLayer(capacity)
        elif type(layer) is DynamicSlidingWindowLayer:
            cache.layers[i] = PreallocatedSlidingLayer(layer.sliding_window, capacity)
    return cache
