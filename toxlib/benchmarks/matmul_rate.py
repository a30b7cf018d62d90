"""The denominator of every speed benchmark: the machine's matmul rate, measured around the workload, and the
roofline it gives.

The roofline: a path that only did its matmuls, at the best rate this machine's matmul reached, would make
``matmul GFLOP/s / flops per token`` tokens/s, with flops per token = 2 x (non-embedding parameters + LM head)
(``flops_per_token``; attention over these short texts adds about 1%). The rate (``Denominator``) is the best of
several repeats at the square shape (``square_size``: 2048 on a CPU, 8192 on a GPU) and at the workload's own shape
(rows x hidden by hidden x MLP width), measured before and after the workload; all are reported.

In: a dtype, a model's ``architecture()`` dict, the workload's rows and the device. Out: GFLOP/s figures, the
roofline in tokens/s, percentages of it (``percent``), and ``above_roofline``: the keys of a result whose
percentage is above 100 (a denominator measured low: another process, a frequency change), which makes a ``bench``
command exit non-zero.
"""

from __future__ import annotations

import time

import torch

SQUARE = 2048  # the square shape on a CPU; a GPU needs 8192 to reach its matrix units' rate (``square_size``)


def square_size(device: torch.device | str = "cpu") -> int:
    """Side of the square matmul that measures the machine's rate: 2048 on a CPU, 8192 on a GPU."""
    return 8192 if torch.device(device).type == "cuda" else SQUARE


def percent(part: float, whole: float) -> float:
    """100 * part / whole to 3 significant digits (not decimals: a tiny model on a fast machine is 0.0123%, not
    0.0%)."""
    return float(f"{100 * part / whole:.3g}")


def flops_per_token(arch: dict) -> float:
    """Matmul flops to produce one new token: 2 x (non-embedding params + vocab x hidden for the LM head).
    Attention over the short context (< 100 tokens here) adds under 1% and is left out."""
    return 2.0 * (arch["non_embedding_params"] + arch["vocab_size"] * arch["hidden_size"])


def best_matmul_gflops(dtype: torch.dtype, m: int, k: int, n: int, repeats: int = 7,
                       device: torch.device | str = "cpu") -> float:
    """Best GFLOP/s over ``repeats`` timed (m, k) @ (k, n) products in ``dtype`` on ``device`` (one untimed
    warm-up). On a GPU each repeat times 20 products between two synchronisations, since one small product takes
    microseconds and the launch and the host clock would otherwise dominate."""
    device = torch.device(device)
    cuda = device.type == "cuda"
    a, b = torch.randn(m, k, dtype=dtype, device=device), torch.randn(k, n, dtype=dtype, device=device)
    products = 20 if cuda else 1
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    a @ b
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(products):
            a @ b
        sync()
        best = min(best, (time.perf_counter() - start) / products)
    return 2 * m * k * n / best / 1e9


def matmul_rates(dtype: torch.dtype, arch: dict, rows: int, device: torch.device | str = "cpu") -> dict:
    """{"square": GFLOP/s at ``square_size(device)`` cubed, "workload": GFLOP/s at (rows, hidden) @ (hidden, MLP
    width)}, on ``device``."""
    width = arch.get("intermediate_size") or 4 * arch["hidden_size"]
    side = square_size(device)
    return {"square": best_matmul_gflops(dtype, side, side, side, device=device),
            "workload": best_matmul_gflops(dtype, rows, arch["hidden_size"], width, device=device)}


class Denominator:
    """The matmul rate, measured around a workload: call ``measure()`` before and after; ``gflops`` is the best
    rate seen at either shape, ``report()`` every figure (JSON-ready, rounded)."""

    def __init__(self, dtype: torch.dtype, arch: dict, rows: int, device: torch.device | str = "cpu"):
        self.dtype, self.arch, self.rows, self.device = dtype, arch, rows, torch.device(device)
        self.seen: list[dict] = []

    def measure(self) -> None:
        self.seen.append(matmul_rates(self.dtype, self.arch, self.rows, self.device))

    @property
    def gflops(self) -> float:
        return max(max(r.values()) for r in self.seen)

    def roofline_tok_s(self) -> float:
        return self.gflops * 1e9 / flops_per_token(self.arch)

    def report(self) -> dict:
        return {"matmul_gflops": round(self.gflops, 1),
                "matmul_square_gflops": round(max(r["square"] for r in self.seen), 1),
                "matmul_workload_gflops": round(max(r["workload"] for r in self.seen), 1),
                "matmul_square_side": square_size(self.device),
                "matmul_workload_shape": [self.rows, self.arch["hidden_size"],
                                          self.arch.get("intermediate_size") or 4 * self.arch["hidden_size"]],
                "roofline_tok_s": round(self.roofline_tok_s(), 1)}


#: the roofline percentages a benchmark's result may hold
PERCENT_KEYS = ("roofline_pct", "work_roofline_pct")


def above_roofline(result: dict, pct_keys: tuple[str, ...] = PERCENT_KEYS) -> list[str]:
    """The keys of ``pct_keys`` whose percentage in ``result`` is above 100: a measurement error (the matmul rate
    was measured low: another process, a frequency change), never a speed."""
    return [k for k in pct_keys if result.get(k) is not None and result[k] > 100]
