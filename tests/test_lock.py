"""The lock files (requirements/lock-*.txt, made by scripts/lock.sh): the environment the tests run in holds exactly
the locked releases, the two locks agree, every locked release is one pyproject.toml's ranges allow, and
environment.yml pins the same releases. The sample record's rows are a fact about these releases as much as about
the CPU, so a drift is a failure, not a warning."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ \\\n]+)", re.M)


def locked(name: str) -> dict[str, str]:
    """{canonical name: version} of requirements/lock-<name>.txt."""
    text = (ROOT / "requirements" / f"lock-{name}.txt").read_text()
    return {canonicalize_name(n): v for n, v in PIN.findall(text)}


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_the_installed_releases_are_the_locked_ones():
    """The test command installs requirements/lock-all.txt: every package it names is installed at exactly that
    release (torch by its public release: the CPU and CUDA builds of one release both satisfy it)."""
    wrong = []
    for name, version in locked("all").items():
        found = _installed_version(name)
        public = Version(found).public if found else None
        if public != Version(version).public:
            wrong.append(f"{name}: locked {version}, installed {found or 'nothing'}")
    assert not wrong, ("the environment differs from requirements/lock-all.txt (rm -r .venv and run the command "
                       "again):\n" + "\n".join(wrong))


def test_every_hash_line_belongs_to_a_pinned_requirement_and_every_pin_has_a_hash():
    for name in ("all", "book"):
        entries = re.split(r"\n(?=[A-Za-z])", (ROOT / "requirements" / f"lock-{name}.txt").read_text())
        for entry in entries:
            if PIN.match(entry):
                assert "--hash=sha256:" in entry, f"lock-{name}.txt: {entry.splitlines()[0]} has no hash"


def test_the_book_lock_is_the_test_lock_less_the_test_extras():
    book, every = locked("book"), locked("all")
    assert set(book) < set(every)
    assert {n: v for n, v in every.items() if n in book} == book


@pytest.mark.parametrize("lock", ["all", "book"])
def test_each_locked_release_is_one_pyproject_allows(lock):
    """pyproject.toml edited without running scripts/lock.sh fails here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    wanted = ["book"] if lock == "book" else ["book", "serve", "dev", "ray"]
    requirements = [Requirement(r) for r in project["project"]["dependencies"] + [r for e in wanted for r in extras[e]]]
    requirements += [Requirement(r) for r in project["tool"]["toxlib"]["install-no-deps"]]
    requirements.append(Requirement(f"torch=={project['tool']['toxlib']['torch']}"))
    pins = locked(lock)
    missing = [str(r) for r in requirements if canonicalize_name(r.name) not in pins]
    outside = [f"{r}: locked {pins[canonicalize_name(r.name)]}" for r in requirements
               if canonicalize_name(r.name) in pins
               and not r.specifier.contains(Version(pins[canonicalize_name(r.name)]).public, prereleases=True)]
    assert not missing and not outside, f"run scripts/lock.sh: missing {missing}, outside the ranges {outside}"


def test_the_conda_environment_pins_the_locked_releases():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    no_deps = {canonicalize_name(Requirement(r).name)
               for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["install-no-deps"]}
    expected = {n: v for n, v in locked("all").items() if n not in no_deps}
    assert {canonicalize_name(p.split("==")[0]): p.split("==")[1] for p in pip_section} == expected
