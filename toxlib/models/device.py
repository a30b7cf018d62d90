"""Device, dtype and CPU thread choices for loading a model, and what a GPU adds to a cache key.

Defaults: ``TOXLIB_DEVICE`` when set, else CUDA when available, else CPU; float32 on both. bf16 (or fp16) is an
option, never a default: its effect on perplexity is reported by ``python -m toxlib bench generate --bf16``. TF32
matmuls on a GPU are off (PyTorch's default) unless ``tf32(True)`` turns them on.

Rows computed on a GPU are not the CPU's rows bit for bit (other kernels, other summation orders), so what keys
them names the device class (``kernel_key``): nothing on a CPU, which keeps every CPU key as it was, and "cuda"
(with "+tf32" when TF32 matmuls are on) on a GPU, so a GPU's rows are never served as the CPU's, nor the CPU's as
a GPU's.
"""

from __future__ import annotations

import os

import torch

from toxlib.common import settings
from toxlib.common.errors import UnknownNameError

DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
          "float16": torch.float16, "fp16": torch.float16, "float64": torch.float64, "fp64": torch.float64}


#: environment variable choosing the device of every stage a process (or a chapter's kernel) runs, as
#: ``TOXLIB_EXECUTOR`` chooses where they run: "cpu", "cuda", "cuda:1", ...
DEVICE_VARIABLE = "TOXLIB_DEVICE"


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """``None`` or "auto": ``TOXLIB_DEVICE`` when set, else CUDA if available, else CPU; otherwise the device named.
    UnknownNameError for a device torch does not know, or CUDA asked for where there is none."""
    if device is None or device == "auto":
        device = settings.text(DEVICE_VARIABLE) or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        chosen = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise UnknownNameError(f"unknown device {device!r} ({exc}); give cpu, cuda or cuda:N") from None
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise UnknownNameError(f"device {device!r} asked for (argument or {DEVICE_VARIABLE}), but torch sees no CUDA "
                               "GPU here; give cpu")
    return chosen


def pick_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``None``/"auto": float32, on a CPU and on a GPU alike (bf16 and fp16 are opt-in: name them). Strings as in
    ``DTYPES``. ``device`` is kept for callers that pass it; the choice no longer depends on it."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None or dtype == "auto":
        return torch.float32
    if dtype not in DTYPES:
        raise UnknownNameError(f"unknown dtype {dtype!r}; known: {', '.join(sorted(DTYPES))} or 'auto'")
    return DTYPES[dtype]


def cpu_threads() -> int:
    """Threads for CPU matmuls: TOXLIB_THREADS if set, else the CPUs this process may use (cgroup/affinity aware)."""
    given = settings.whole_number("TOXLIB_THREADS")
    if given:
        return given
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


def tf32_enabled() -> bool:
    """Whether float32 matmuls on a GPU may run in TF32 (``torch.backends.cuda.matmul.allow_tf32``)."""
    return bool(torch.backends.cuda.matmul.allow_tf32)


def tf32(enabled: bool) -> None:
    """Let float32 matmuls and convolutions on a GPU run in TF32 (``enabled``) or not (PyTorch's default, and
    toxlib's). Opt-in: TF32 keeps float32's range with a 10-bit mantissa, so rows move; ``kernel_key`` names it."""
    torch.backends.cuda.matmul.allow_tf32 = bool(enabled)
    torch.backends.cudnn.allow_tf32 = bool(enabled)


def kernel_key(device: str | torch.device) -> str | None:
    """What a cache key adds for rows computed on ``device``: None on a CPU (every CPU key stays as it was), "cuda"
    on a GPU, "cuda+tf32" while TF32 matmuls are on (``tf32``)."""
    device = torch.device(device)
    if device.type == "cpu":
        return None
    return f"{device.type}+tf32" if device.type == "cuda" and tf32_enabled() else device.type


def free_memory(device: str | torch.device) -> int | None:
    """Bytes free on a GPU now (``torch.cuda.mem_get_info``, which counts other processes' use too), plus what
    PyTorch's caching allocator holds but does not use; None on a CPU (no figure that sizes a batch there)."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    free, _ = torch.cuda.mem_get_info(device)
    return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))
