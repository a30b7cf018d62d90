"""The CPU facts that decide a row's bits, and the matmul mode that makes float32 rows independent of their batch.

Why a mode at all. PyTorch's x86 builds run float32 ``linear`` through Intel MKL's sgemm, and MKL picks its kernel
(and whether the two threads split the inner dimension) by the number of rows. Measured on an Intel Xeon with
AVX-512 (2 cores, torch 2.13.0, MKL 2024.2): a row's output bits differ between a matmul of 1 row, of
2-15 rows and of 16 or more; for SmolLM2's MLP down projection (1536 -> 576) also between 16-56, 57-192 and 193+
rows, and for Gemma's (2048 -> 640) between 16-56, 57-256 and 257+. So no minimum row count (companion rows) makes a
decoding step's rows independent of how many rows share it. MKL's *strict conditional numerical reproducibility*
mode (``MKL_CBWR=AUTO,STRICT``) gave the same bits for every row count from 1 to 400 on every shape of both bundled
models, at the same speed (on that Xeon: 212-303 GFLOP/s at 300 rows against 214-304 without it; 95-185 at 16 rows
against 52-153).
No library call does this from Python, hence this module: a ctypes call into the MKL that torch links
(``mkl_serv_cbwr_set``, what MKL's documented ``mkl_cbwr_set`` calls).

MKL reads the mode once, before its first computation in the process, so ``use_strict_gemm`` runs when
``toxlib.models`` or ``toxlib.scorers`` is imported, before anything computes; a process that ran a matmul before
importing toxlib keeps MKL's default mode, and ``load`` warns (``check_strict_gemm``). ``MKL_CBWR`` set in the
environment is left as it is (for example ``AVX2,STRICT`` to ask every x86 CPU for the same code branch). A torch
without MKL (aarch64, macOS) has no such mode: ``gemm_mode()`` says so, and the float32 batch-invariance tests say
whether its kernels need one.

bf16 matmuls go to oneDNN, which this mode does not touch: on a CPU with AMX its bf16 kernels tile by the number of
rows, so bf16 rows depend on their batch there (see ``bf16_row_invariant_expected``).
"""

from __future__ import annotations

import ctypes
import warnings
from functools import lru_cache
from pathlib import Path

from toxlib.common import settings

# mkl_service.h
CBWR_ALL = -1
CBWR_AUTO = 2
CBWR_STRICT = 0x10000
CBWR_BRANCHES = {1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2", 9: "AVX",
                 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}

_warned = []  # check_strict_gemm warns once per process


@lru_cache(maxsize=1)
def _mkl():
    """The library whose MKL symbols torch uses (libtorch_cpu, where MKL is linked statically), or None."""
    import torch

    lib_dir = Path(torch.__file__).parent / "lib"
    for name in ("libtorch_cpu.so", "libtorch_cpu.dylib", "torch_cpu.dll"):
        path = lib_dir / name
        if path.exists():
            try:
                lib = ctypes.CDLL(str(path))
                lib.mkl_serv_cbwr_get, lib.mkl_serv_cbwr_set  # noqa: B018  (both must exist)
                return lib
            except (OSError, AttributeError):
                return None
    return None


def use_strict_gemm() -> int | None:
    """Ask MKL for its strict reproducible mode (AUTO branch) unless ``MKL_CBWR`` is set; call before any matmul.
    Returns MKL's answer (0: done or already so; -8, MKL_CBWR_ERR_MODE_CHANGE_FAILURE: too late, MKL already ran) or
    None (no MKL, or the environment decides)."""
    lib = _mkl()
    if lib is None or settings.raw("MKL_CBWR"):
        return None
    return 0 if strict_gemm() else lib.mkl_serv_cbwr_set(CBWR_AUTO | CBWR_STRICT)


def strict_gemm() -> bool:
    """True when MKL runs in strict CNR mode (a row's float32 matmul bits do not depend on the row count)."""
    lib = _mkl()
    return lib is not None and bool(lib.mkl_serv_cbwr_get(CBWR_ALL) & CBWR_STRICT)


def gemm_mode() -> str:
    """MKL's reproducibility mode as "MKL CNR AUTO,STRICT (AVX512_E1 branch)", or why there is none."""
    lib = _mkl()
    if lib is None:
        return "no MKL in this torch build"
    mode = lib.mkl_serv_cbwr_get(CBWR_ALL)
    branch = CBWR_BRANCHES.get(mode & 0xFFFF, str(mode & 0xFFFF))
    auto = CBWR_BRANCHES.get(lib.mkl_serv_cbwr_get_auto_branch(), "?")
    return f"MKL CNR {branch}{',STRICT' if mode & CBWR_STRICT else ''} ({auto} branch)"


def check_strict_gemm() -> None:
    """Warn once when float32 CPU matmuls are not row invariant although they could be (MKL present, not strict)."""
    if _mkl() is not None and not strict_gemm() and not _warned:
        _warned.append(True)
        warnings.warn(
            "MKL is not in its strict reproducible mode (" + gemm_mode() + "), so a float32 row's values can depend "
            "on how many rows share its batch. Import toxlib before running any torch matmul in the process, or "
            "start Python with MKL_CBWR=AUTO,STRICT.", RuntimeWarning, stacklevel=3)


@lru_cache(maxsize=1)
def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo ({} where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    first = text.split("\n\n", 1)[0]
    return {key.strip(): value.strip() for key, _, value in (ln.partition(":") for ln in first.splitlines())}


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (/proc/cpuinfo on Linux; empty elsewhere)."""
    info = _cpuinfo()
    return frozenset((info.get("flags") or info.get("Features") or "").split())


def cpu_vendor_family() -> tuple[str, str]:
    """("AuthenticAMD", "25"): the CPU's vendor and family as /proc/cpuinfo names them (empty strings elsewhere)."""
    info = _cpuinfo()
    return info.get("vendor_id", ""), info.get("cpu family", "")


def cpu_model() -> str:
    """The CPU's model name ("AMD EPYC 9R14", "Intel(R) Xeon(R) Processor", ...), or the platform's answer."""
    import platform

    return _cpuinfo().get("model name") or platform.processor() or platform.machine()


def kernel_features() -> dict[str, bool]:
    """The instruction sets that change which kernels torch, oneDNN and MKL run: {"AVX-512", "AVX512-BF16",
    "AMX"} -> present (as torch sees them)."""
    import torch

    cpu = torch.cpu
    flags = cpu_flags()

    def seen(probe: str, flag: str) -> bool:
        fn = getattr(cpu, probe, None)
        return bool(fn()) if fn is not None else flag in flags

    return {"AVX-512": seen("_is_avx512_supported", "avx512f"),
            "AVX512-BF16": seen("_is_avx512_bf16_supported", "avx512_bf16"),
            "AMX": seen("_is_amx_tile_supported", "amx_tile")}


def describe_cpu() -> str:
    """One line for run records and provenance: "Intel(R) Xeon(R) Processor; AVX-512 yes, AVX512-BF16 yes, AMX no;
    MKL CNR AUTO,STRICT (AVX512_E1 branch)"."""
    features = ", ".join(f"{name} {'yes' if on else 'no'}" for name, on in kernel_features().items())
    return f"{cpu_model()}; {features}; {gemm_mode()}"


def bf16_row_invariant_expected() -> bool:
    """Whether bf16 rows are expected to be independent of their batch on this CPU: true where oneDNN's bf16
    kernels do not tile by the row count (no AMX; measured on an AMD EPYC with AVX512-BF16 and an Intel Xeon whose
    AMX is hidden), false with AMX (measured on an Intel Xeon with AMX: 8 of the bf16 invariance tests failed)."""
    return not kernel_features()["AMX"]


def rows_are_batch_invariant(device, dtype) -> bool:
    """Whether a row's matmul bits on ``device`` in ``dtype`` do not depend on the rows beside it: float32 on a CPU
    in MKL's strict mode, float64 with its linear layers on one thread in whole row blocks
    (``toxlib.models.float64``), bf16 on a CPU without AMX; never on a GPU (kernels chosen per shape)."""
    import torch

    if torch.device(device).type != "cpu":
        return False
    if dtype in (torch.float32, torch.float64):  # float64: measured in the strict mode only
        return strict_gemm()
    return dtype == torch.bfloat16 and bf16_row_invariant_expected()
