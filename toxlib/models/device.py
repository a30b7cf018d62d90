"""Device, dtype and CPU thread choices for loading a model.

Defaults: CUDA when available, else CPU. fp32 on CPU (bf16 is an option; its effect on perplexity is reported by
``python -m toxlib bench generate``); bf16 on CUDA where the GPU supports it, else fp16.
"""

from __future__ import annotations

import os

import torch

from toxlib.common.errors import UnknownNameError

DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
          "float16": torch.float16, "fp16": torch.float16, "float64": torch.float64, "fp64": torch.float64}


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """``None`` or "auto": CUDA if available, else CPU; otherwise the device named."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def pick_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``None``/"auto": fp32 on CPU; bf16 on a CUDA GPU that supports it, else fp16. Strings as in ``DTYPES``."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None or dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if dtype not in DTYPES:
        raise UnknownNameError(f"unknown dtype {dtype!r}; known: {', '.join(sorted(DTYPES))} or 'auto'")
    return DTYPES[dtype]


def cpu_threads() -> int:
    """Threads for CPU matmuls: TOXLIB_THREADS if set, else the CPUs this process may use (cgroup/affinity aware)."""
    env = os.environ.get("TOXLIB_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def configure_cpu_threads(threads: int | None = None) -> int:
    """Set torch's intra-op thread count (one per usable core; more only adds contention). Returns the count."""
    n = threads or cpu_threads()
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n
