"""How many rows each stage of the batch-wide nucleus sampler (:mod:`toxlib.generate.nucleus_batch`) has slots
for, learned from batch to batch on the GPU decoding path (:mod:`toxlib.generate.static_decode`).

Inputs: a batch's row bucket, its vocabulary and the sampler's stages (``nucleus_batch.stages``); a function that
decodes the whole batch with given slots (``NucleusSlots``) and one that rewinds it for another try.
Outputs: the batch's result and the ``NucleusSlots`` it finished with (their per-stage counts for ``NucleusStats``);
the slots the next batch of the same shape starts from, kept in a ``SamplerCapacity``.
Guarantees: every draw is the exact nucleus's: a batch whose slots overflowed (the sampler's device flag, read once
per batch) is decoded again with more (``NucleusSlots.grown``) until none does; one that did not leaves the next
batch of its shape the slots it needed with room to spare (``NucleusSlots.fitted``). Slots change how long a batch
takes, never which rows it gives. Greedy batches (no sampler) read nothing back and learn nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from toxlib.generate.nucleus_batch import NucleusSlots, default_slots
from toxlib.models.device import free_memory

Result = TypeVar("Result")


class SamplerCapacity:
    """One model's sampler slots per (row bucket, vocabulary), learned from the batches decoded so far (none:
    ``default_slots`` for the device's free memory)."""

    def __init__(self):
        self.slots: dict = {}


def decode_until_it_fits(decode: Callable[[NucleusSlots], Result], rewind: Callable[[], None],
                         capacity: SamplerCapacity, bucket: int, vocab: int, names: tuple, device, counted: int,
                         sampled: bool) -> tuple[Result, NucleusSlots]:
    """``decode(state)`` with the slots ``capacity`` holds for (``bucket``, ``vocab``), again after ``rewind()``
    with more slots while the sampler overflowed; returns (its last result, its last state). ``counted``: the
    batch's real rows (padding rows are not counted in the state's per-stage counts); ``sampled``: False for greedy
    decoding (nothing is read back or learned)."""
    slots = capacity.slots.get((bucket, vocab)) or default_slots(bucket, vocab, names, free_memory(device))
    while True:
        state = NucleusSlots.of(slots, device, counted=counted)
        result = decode(state)
        overflowed = bool(state.overflow) if sampled else False  # the batch's one read-back
        if not overflowed:
            if sampled:  # the next batch of this shape gets the slots this one needed
                capacity.slots[(bucket, vocab)] = state.fitted(bucket)
            return result, state
        slots = state.grown(bucket).slots
        capacity.slots[(bucket, vocab)] = slots
        rewind()
