"""The CPU facts that decide a row's bits (``toxlib.models.cpu_kernels``): MKL's strict mode is on after importing
toxlib and makes float32 matmul rows independent of the row count; the bf16 expectation by CPU features matches a
measurement on this CPU; the CPU is described by model and kernel-changing features.

Run with ``MKL_CBWR=AUTO`` (MKL's default, non-strict mode) on an Intel Xeon with AVX-512 and the first two tests
fail: MKL then picks its kernel by the number of rows.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import toxlib.models  # noqa: F401  (sets MKL's mode, as any use of toxlib's models does)
from toxlib.models import cpu_kernels
from toxlib.models.batching import MIN_ROWS

#: (in, out) features of every matmul of the two bundled models: SmolLM2 and Gemma-3 projections, MLPs, heads
SHAPES = [(576, 576), (576, 192), (576, 1536), (1536, 576), (576, 49152), (640, 1024), (640, 256), (640, 2048),
          (2048, 640)]
ROW_COUNTS = [1, 2, 3, 4, 5, 8, 15, 16, 17, 31, 56, 57, 100, 192, 193, 256, 257, 300]


def differing_row_counts(shape) -> list[int]:
    """The row counts of ``ROW_COUNTS`` at which a float32 linear layer of ``shape`` gives a row other bits than
    in a 512-row matmul."""
    k, n = shape
    g = torch.Generator().manual_seed(k * n)
    weight, x = torch.randn(n, k, generator=g) * 0.05, torch.randn(512, k, generator=g)
    with torch.inference_mode():
        reference = torch.nn.functional.linear(x, weight)
        return [m for m in ROW_COUNTS if not torch.equal(torch.nn.functional.linear(x[:m], weight), reference[:m])]
needs_mkl = pytest.mark.skipif(cpu_kernels._mkl() is None, reason="this torch build has no MKL (no strict mode)")


@needs_mkl
def test_importing_toxlib_models_puts_mkl_in_strict_mode():
    assert cpu_kernels.strict_gemm(), cpu_kernels.gemm_mode()
    assert ",STRICT" in cpu_kernels.gemm_mode()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_float32_matmul_rows_do_not_depend_on_the_row_count_from_min_rows_up(shape, record_property):
    """Every row count the engine lets a matmul have (``MIN_ROWS`` and up) gives each row the bits it gets in a
    512-row matmul. Set ``MIN_ROWS`` below what this CPU needs and this fails: an AMD EPYC gives other bits at 1-3
    rows in any MKL mode; without strict mode (MKL_CBWR=AUTO) an Intel Xeon with AVX-512 also at 2-15, and for the
    down projections at 57-192 or 57-256 rows. The row counts below ``MIN_ROWS`` that differ here are recorded."""
    differ = differing_row_counts(shape)
    record_property("float32_rows_differ_at", f"{[m for m in differ if m < MIN_ROWS]} on {cpu_kernels.describe_cpu()}")
    assert [m for m in differ if m >= MIN_ROWS] == [], (
        f"float32 rows differ at these row counts on {cpu_kernels.describe_cpu()}: raise MIN_ROWS in "
        "toxlib.models.batching above them (or find the mode that removes them)")


def test_min_rows_is_the_threshold_this_cpu_needs_or_more(capsys):
    """Prints the smallest row count from which every shape agrees on this CPU (the measurement behind MIN_ROWS)."""
    differ = [m for shape in SHAPES for m in differing_row_counts(shape)]
    needed = max(differ, default=0) + 1
    with capsys.disabled():
        print(f"\nfloat32 rows agree from {needed} rows on {cpu_kernels.describe_cpu()}; MIN_ROWS = {MIN_ROWS}")
    assert needed <= MIN_ROWS


def bf16_rows_invariant(lm) -> bool:
    """Whether every batch of 2-50 rows gives each row the bits it gets among 64, for a decoding step (length 1)
    and a prefill (length 12): the shapes where AMX's kernels were seen to differ. One row is left out: the engine
    never decodes a lone row, because a one-row bf16 step takes other kernels on an AMD EPYC too
    (``toxlib.models.batching``)."""
    with torch.inference_mode():
        for length in (1, 12):
            ids = torch.randint(100, 40000, (64, length), generator=torch.Generator().manual_seed(length))
            full = lm.model(input_ids=ids).logits
            if not all(torch.equal(lm.model(input_ids=ids[:rows]).logits, full[:rows])
                       for rows in (2, 3, 5, 8, 15, 16, 33, 50)):
                return False
    return True


@pytest.mark.models
def test_bf16_row_invariance_is_what_the_cpu_features_predict(record_property):
    """Measured on this CPU, recorded with its features; fails where the AMX rule is wrong, either way."""
    from toxlib.models import load

    measured = bf16_rows_invariant(load("smollm2-135m", dtype="bfloat16"))
    record_property("bf16_row_invariant", f"{measured} on {cpu_kernels.describe_cpu()}")
    print(f"bf16 rows batch invariant: {measured} on {cpu_kernels.describe_cpu()}")
    assert measured == cpu_kernels.bf16_row_invariant_expected(), (
        f"bf16 rows {'are' if measured else 'are not'} batch invariant on {cpu_kernels.describe_cpu()}, against "
        "what bf16_row_invariant_expected() says: correct the rule in toxlib.models.cpu_kernels")


def test_the_cpu_is_described_by_model_and_kernel_features():
    text = cpu_kernels.describe_cpu()
    assert cpu_kernels.cpu_model() in text
    for feature in ("AVX-512", "AVX512-BF16", "AMX"):
        assert f"{feature} yes" in text or f"{feature} no" in text
    assert "MKL" in text


def test_rows_are_batch_invariant_only_on_a_cpu():
    assert not cpu_kernels.rows_are_batch_invariant("cuda", torch.float32)
    assert cpu_kernels.rows_are_batch_invariant("cpu", torch.float32) == cpu_kernels.strict_gemm()
    assert not cpu_kernels.rows_are_batch_invariant("cpu", torch.float16)
    # float64: whole row blocks on one thread (toxlib.models.float64), measured in MKL's strict mode
    assert cpu_kernels.rows_are_batch_invariant("cpu", torch.float64) == cpu_kernels.strict_gemm()
    assert not cpu_kernels.rows_are_batch_invariant("cuda", torch.float64)


@needs_mkl
def test_a_matmul_before_toxlib_leaves_mkl_as_it_was_and_loading_warns(tmp_path):
    """MKL fixes its mode at its first matmul: toxlib cannot change it afterwards, and says so."""
    code = ("import torch, warnings\n"
            "torch.ones(8, 8) @ torch.ones(8, 8)\n"
            "from toxlib.models import cpu_kernels\n"
            "assert not cpu_kernels.strict_gemm()\n"
            "with warnings.catch_warnings(record=True) as seen:\n"
            "    warnings.simplefilter('always')\n"
            "    cpu_kernels.check_strict_gemm()\n"
            "print(seen[0].message)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={
        **{k: v for k, v in __import__("os").environ.items() if k != "MKL_CBWR"}})
    assert done.returncode == 0, done.stderr
    assert "not in its strict reproducible mode" in done.stdout and "MKL_CBWR=AUTO,STRICT" in done.stdout
