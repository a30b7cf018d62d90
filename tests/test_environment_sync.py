"""environment.yml documents the weights packages installed without their dependencies; the test command installs
the extras the tests need (environment.yml's pins are the lock's: tests/test_lock.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_EXTRAS = ("book", "serve", "dev", "ray")


def test_no_deps_packages_are_documented_for_conda_users():
    """Packages bootstrap.sh installs with --no-deps must appear in environment.yml's install instructions."""
    no_deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["install-no-deps"]
    env_text = (ROOT / "environment.yml").read_text()
    for req in no_deps:
        assert f"pip install --no-deps {req}" in env_text
    assert "--no-deps --require-hashes" in (ROOT / "scripts" / "bootstrap.sh").read_text()
    lock = (ROOT / "requirements" / "lock-all.txt").read_text()
    assert all(f"{req} \\\n    --hash=sha256:" in lock for req in no_deps)


def test_the_test_command_installs_the_extras_the_environment_declares():
    script = (ROOT / "scripts" / "run_tests.sh").read_text()
    line = next(ln for ln in script.splitlines() if ln.startswith("TOXLIB_EXTRAS="))
    assert sorted(line.split("=", 1)[1].split("#")[0].strip().split(",")) == sorted(TEST_EXTRAS)
