"""Timing the nucleus sampler inside a batch of the GPU decoding path (:mod:`toxlib.generate.static_decode`)
without waiting for the device at each step.

Input: the device. Output: ``stream_timer``'s (mark, seconds): ``mark()`` notes a point (a CUDA event recorded in
the current stream on a GPU, the host's clock elsewhere) and ``seconds(marks)`` sums the time between marks taken
in pairs (start, end). Guarantee: marking never synchronises with the device; ``seconds`` does on a GPU, so call it
once the batch is done (it is added to ``NucleusStats.seconds``).
"""

from __future__ import annotations

import time

import torch


def stream_timer(device: torch.device):
    """(mark, seconds): ``mark()`` notes a point in the stream, ``seconds(marks)`` sums the time between pairs of
    marks; CUDA events on a GPU (read once the batch is done), the host's clock on a CPU."""
    if device.type == "cuda":
        def mark():
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return mark, lambda marks: sum(a.elapsed_time(b) for a, b in zip(marks[::2], marks[1::2])) / 1000
    return time.perf_counter, lambda marks: sum(b - a for a, b in zip(marks[::2], marks[1::2]))
