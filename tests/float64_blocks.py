"""The float64 tests' expectation by CPU: ``toxlib.models.float64``'s whole 8-row blocks were measured on an AMD EPYC
without AVX-512 only (4-row blocks there). On a CPU with AVX-512 (an Intel Xeon with AMX among them), MKL's float64
kernels may block rows otherwise, so the batch-invariance assertions there are expected to fail (xfail, reported
with the CPU, never skipped) until measured; ``scripts/float64_rows.py`` measures it."""

from __future__ import annotations

import pytest

from toxlib.models.cpu_kernels import describe_cpu, kernel_features

#: A marker for a float64 batch-invariance test, or None where the row blocks were measured.
FLOAT64_BLOCKS_UNMEASURED = pytest.mark.xfail(
    reason=f"float64 row blocks not measured on this CPU ({describe_cpu()}): 8-row blocks were measured only "
           "without AVX-512; run scripts/float64_rows.py here", strict=False) if kernel_features()["AVX-512"] else None
