"""Keep freed memory in the process, so that the large tensors of every decoding step reuse pages already mapped.

Why: a decoding step makes tensors of (rows x vocabulary) logits, in bf16 and again in fp32 (SmolLM2 at 400 rows:
39 MB and 78 MB; Gemma: 210 MB and 420 MB), and Self-Debiasing six times as many rows of them. glibc's malloc
serves any block over its mmap threshold (at most 32 MB) with a fresh ``mmap`` and gives it back with ``munmap``
when the tensor is freed, so each step touches new pages and the kernel faults and zeroes every one of them again.
Measured on a 2-core AMD EPYC, bf16 (benchmarks/README.md has the table): SmolLM2 generation, 16 prompts x
25 samples, 768 -> 1,164 tokens/s (536,000 -> 223,000 minor page faults); Gemma perplexity 746 -> 955 tokens/s
(14.4 million -> 394,000 faults); Self-Debiasing 605 -> 708 row-tokens/s.

This is what PyTorch's CPU tuning guides get from jemalloc or tcmalloc set never to return memory; glibc's
``mallopt`` does the same in-process, without an LD_PRELOAD: no block is served by ``mmap`` (``M_MMAP_MAX`` 0)
and the heap's free top is not trimmed below 1 GiB (``M_TRIM_THRESHOLD``); the heap grows 64 MB past each request
(``M_TOP_PAD``), so fewer calls extend it. The cost is that the process keeps its peak heap until it exits.
Nothing computed changes: only where tensors live. ``TOXLIB_KEEP_FREED_MEMORY=0`` turns it off; on a C library
other than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

from toxlib.common import settings

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_TOP_PAD = -2
M_MMAP_MAX = -4
TOP_PAD = 64 << 20
TRIM_THRESHOLD = 1 << 30


@functools.cache
def keep_freed_memory() -> bool:
    """Tell glibc's malloc to serve every block from the heap and keep freed memory (once per process).

    Returns True when the settings were applied; False when ``TOXLIB_KEEP_FREED_MEMORY=0``, or the C library is
    not glibc, or glibc refused a setting."""
    if not settings.flag("TOXLIB_KEEP_FREED_MEMORY"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # no C library by that name, or one without mallopt (musl, macOS)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(param, value) for param, value in
               ((M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, TRIM_THRESHOLD), (M_TOP_PAD, TOP_PAD)))
