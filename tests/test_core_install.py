"""``pip install toxlib`` without extras can score and generate: run in a fresh interpreter where every module the
extras bring ([book], [serve], [ray], [dev], [lab] and the notebook stack under them) fails to import, as it would
in a virtual environment without them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what the extras install and the core must not need (import names)
EXTRA_MODULES = ("papermill", "nbformat", "ipykernel", "IPython", "jupyter_book", "jupyter_client", "jupyter_core",
                 "myst_nb", "sphinx", "sphinx_exercise", "sphinx_mathjax_offline", "starlette", "uvicorn", "ray",
                 "pytest", "playwright", "jupyterlab")

BLOCKER = """
import importlib.abc, sys
BLOCKED = set({blocked!r})

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (an extra, absent in this test)", name=name)
        return None

sys.meta_path.insert(0, Absent())
"""


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    env_code = BLOCKER.format(blocked=EXTRA_MODULES) + code
    env = {"TOXLIB_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    import os

    return subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, **env}, timeout=600)


def test_the_blocker_blocks():
    done = subprocess.run([sys.executable, "-c", BLOCKER.format(blocked=EXTRA_MODULES) + "import papermill"],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "an extra, absent in this test" in done.stderr


def test_the_core_dependencies_hold_no_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in project["dependencies"]}
    for extra in ("book", "serve", "ray", "dev", "lab"):
        names = {r.split(">")[0].split("=")[0].split("<")[0].strip().lower()
                 for r in project["optional-dependencies"][extra]}
        assert not core & names, f"{sorted(core & names)} are both core and [{extra}]"


@pytest.mark.models
def test_score_generate_and_the_metrics_work_without_any_extra(tmp_path):
    code = """
from toxlib.scorers import score
from toxlib.generate import DecodingConfig, generate
from toxlib.metrics import toxicity, uncertainty
from toxlib.models import load
from toxlib.models.tiny import tiny_causal_lm
table = score(["you are lovely", "you are an idiot"], cache=False, progress=False)
assert table["toxicity"].iloc[1] > table["toxicity"].iloc[0], table
lm = load(str(tiny_causal_lm("tiny")))
out = generate(lm, ["Hello"], DecodingConfig(num_samples=2, max_new_tokens=3), cache=False,
               progress=False)
assert len(out) == 2, out
print("ok")
"""
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
