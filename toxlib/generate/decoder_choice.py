"""Which loop decodes a batch of sampled or greedy rows, and why: the one place that chooses between the eager loop
(``toxlib.generate.engine.decode_batch``, every CPU) and the GPU decoding path (``toxlib.generate.static_decode``:
static cache, batch-wide nucleus, steps replayed as CUDA graphs).

Inputs: the model (its device, attention implementation, sliding window), the decoding config, the batch's logits
processors and padded prompt width; the environment variable ``TOXLIB_CUDA_GRAPHS`` (read in
``cuda_graphs_enabled`` and nowhere else).
Output: a ``DecoderChoice``: the loop ("eager" or "static"), whether steps are captured as CUDA graphs, and the
reason in words ("cpu: eager loop", "cuda: graphed static decoding", ...).
Guarantees: a CPU always takes the eager loop; a GPU takes the static path unless ``reason_not_static`` names
something it cannot do (steering's logits processors, beam search, an attention without a prepared mask, a
sliding window the batch would pass); ``TOXLIB_CUDA_GRAPHS=0`` keeps the static path and only turns the graphs
off (for timing them). A captured step can still fall back to eager steps when its forward cannot be captured
(``toxlib.generate.graphed_step.DecodeStep.capture`` warns).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from toxlib.common import settings
from toxlib.generate.config import DecodingConfig
from toxlib.generate.graphed_step import MASKED_ATTENTION
from toxlib.models.length_groups import window as sliding_window


class DecoderChoice(NamedTuple):
    """The decoding loop a batch takes: ``loop`` "eager" (``engine.decode_batch``'s loop) or "static"
    (``static_decode.static_decode_batch``); ``graphs``: its steps captured as CUDA graphs; ``reason``: why, in
    words."""

    loop: str
    graphs: bool
    reason: str


def cuda_graphs_enabled() -> bool:
    """Whether the static path may capture CUDA graphs: ``TOXLIB_CUDA_GRAPHS`` is not "0", "off", "false" or "no"
    (default on; ``toxlib.common.settings``)."""
    return settings.flag("TOXLIB_CUDA_GRAPHS")


def graphs_wanted(device: torch.device) -> bool:
    """CUDA graphs on a GPU unless ``TOXLIB_CUDA_GRAPHS=0``; never on a CPU."""
    return device.type == "cuda" and cuda_graphs_enabled()


def reason_not_static(model, config: DecodingConfig, processors, width: int) -> str | None:
    """Why a batch takes the eager loop instead of the static path (None: it can take the static path)."""
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


def choose_decoder(model, config: DecodingConfig, processors, width: int,
                   device: torch.device | None = None) -> DecoderChoice:
    """The loop for a batch of ``model`` (on ``device``, None: the model's) under ``config`` with ``processors``
    and prompts padded to ``width``, with the reason."""
    device = next(model.parameters()).device if device is None else device
    if device.type != "cuda":
        return DecoderChoice("eager", False, f"{device.type}: eager loop")
    reason = reason_not_static(model, config, processors, width)
    if reason is not None:
        return DecoderChoice("eager", False, f"cuda, {reason}: eager loop")
    if not graphs_wanted(device):
        return DecoderChoice("static", False,
                             "cuda, graphs disabled by TOXLIB_CUDA_GRAPHS=0: static decoding without graphs")
    return DecoderChoice("static", True, "cuda: graphed static decoding")
