"""The learning-rate schedule of every training in toxlib (the distilled scorer, the DAPT/ATCON adapters): linear
warm-up over ``warm`` steps, then linear decay to 0 at ``steps``.

Written here, not taken from transformers' ``get_linear_schedule_with_warmup``, for one reason: that helper scales
step s of the warm-up by s / warm, so its first optimizer step runs at learning rate 0, where this one scales it by
(s + 1) / warm. The decay is the same (``tests/models/test_schedule.py`` compares the two). The shipped scorer
weights and the adapters behind the sample record's detoxification rows were trained with this schedule; the
helper's would train other weights, so switching is a change of results, not of code.
"""

from __future__ import annotations

import torch


def warmup_factor(step: int, warm: int, steps: int) -> float:
    """The learning-rate multiplier at optimizer step ``step`` (0-based) of ``steps``, ``warm`` of them warm-up:
    min((step + 1) / warm, max(0, (steps - step) / (steps - warm))), in [0, 1]."""
    return min((step + 1) / warm, max(0.0, (steps - step) / max(1, steps - warm)))


def linear_warmup_decay(optimizer: torch.optim.Optimizer, warm: int, steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """torch's ``LambdaLR`` over ``optimizer`` with ``warmup_factor``; ``warm`` >= 1."""
    if warm < 1 or steps < 1:
        raise ValueError(f"warm-up steps ({warm}) and steps ({steps}) must be at least 1")
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_factor(s, warm, steps))
