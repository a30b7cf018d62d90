"""toxlib.models.allocator: with freed memory kept, a decoding step's large tensors reuse mapped pages."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Ten steps that each make and free one decoding step's large tensors (200 rows x 49,152 bf16 logits and their fp32
# copy, 59 MB), after three warm-up steps; prints whether the settings applied and the minor page faults counted.
PROBE = """
import resource, torch
from toxlib.models.allocator import keep_freed_memory
applied = keep_freed_memory()
torch.set_num_threads(1)
def step():
    return torch.ones(200, 49152, dtype=torch.bfloat16).float().sum()
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print(applied, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def probe(setting: str) -> tuple[bool, int]:
    env = {**os.environ, "TOXLIB_KEEP_FREED_MEMORY": setting, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    applied, faults = out.stdout.split()
    return applied == "True", int(faults)


glibc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")


@glibc
def test_kept_memory_serves_every_later_step_without_page_faults():
    applied, faults = probe("1")
    assert applied
    # Fresh pages for ten steps are about 96,000-145,000 faults, and kept memory gives 0 on a quiet machine; a few
    # thousand can come from the kernel reclaiming pages while other processes press on memory (4,800 once, in a
    # full test run), so the bound is a tenth of the fresh-page count.
    assert faults < 10_000


@glibc
def test_turned_off_each_step_faults_fresh_pages():
    applied, faults = probe("0")
    assert not applied
    assert faults > 50_000
