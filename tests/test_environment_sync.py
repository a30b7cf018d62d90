"""environment.yml and pyproject.toml declare the same pins."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEST_EXTRAS = ("book", "serve", "dev", "ray")


def _normalise(req: str) -> str:
    return req.replace(" ", "").lower()


def test_conda_environment_pins_match_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    # the test command's environment: the core and the extras it installs (scripts/run_tests.sh)
    declared = project["dependencies"] + [r for extra in TEST_EXTRAS for r in extras[extra]]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert sorted(map(_normalise, pip_section)) == sorted(map(_normalise, declared))
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert _normalise(python) == "python" + _normalise(project["requires-python"])


def test_no_deps_packages_are_documented_for_conda_users():
    """Packages bootstrap.sh installs with --no-deps must appear in environment.yml's install instructions."""
    no_deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["install-no-deps"]
    env_text = (ROOT / "environment.yml").read_text()
    for req in no_deps:
        assert f"pip install --no-deps {req}" in env_text
    assert "install-no-deps" in (ROOT / "scripts" / "bootstrap.sh").read_text()


def test_the_test_command_installs_the_extras_the_environment_declares():
    script = (ROOT / "scripts" / "run_tests.sh").read_text()
    line = next(ln for ln in script.splitlines() if ln.startswith("TOXLIB_EXTRAS="))
    assert sorted(line.split("=", 1)[1].split("#")[0].strip().split(",")) == sorted(TEST_EXTRAS)
