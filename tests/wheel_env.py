"""A fresh virtual environment holding toxlib installed from its built wheel, offline and in seconds, for the tests
that use toxlib as a user who installed it would (``test_wheel_install.py``, ``test_wheel_report.py``).

How the fresh environment gets its dependencies offline, in seconds rather than the minutes a full install of torch
and transformers takes: the wheel's own requirements for the chosen extras are resolved, transitively, against the
distributions installed in the test's environment (each version checked against the specifier that asks for it),
plus the packages bootstrap.sh installs with ``--no-deps`` that the test names. Only that closure is made visible to
the fresh environment, by symbolic links in one folder named in a ``.pth`` file; the test environment's other
packages, and its editable toxlib, are not. So a requirement missing from ``pyproject.toml`` fails the test (its
import fails), a file missing from the wheel fails it, and so does any use of the checkout. The wheel itself is
installed by pip (``--no-deps``) and checked by ``pip check``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what a wheel is built from besides the package: setup.py copies the companion files from the notebooks and data
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "notebooks", "data/sources.yaml", "data/results",
           "benchmarks/runs")


def outside_env() -> dict:
    """The environment without what points Python at the checkout (PYTHONPATH, toxlib's own variables)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("TOXLIB_")}


def build_wheel(out: Path) -> Path:
    """The wheel of a clean copy of the checkout's package and the files its build step copies in (no build/ folder
    left from an earlier build can add stale files), built offline with the environment's setuptools."""
    source = out / "source"
    shutil.copytree(ROOT / "toxlib", source / "toxlib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in SOURCES:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "-w", str(out / "dist"), str(source)], capture_output=True, text=True, timeout=300,
                          env=outside_env())
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = (out / "dist").glob("toxlib-*.whl")
    return wheel


def wheel_requirements(wheel: Path, extras: tuple[str, ...]) -> list:
    """The wheel's Requires-Dist that apply with ``extras`` (packaging Requirements)."""
    from packaging.requirements import Requirement

    with zipfile.ZipFile(wheel) as archive:
        meta_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(meta_name).decode())
    return [r for r in map(Requirement, metadata.get_all("Requires-Dist") or []) if applies(r, extras)]


def applies(requirement, extras) -> bool:
    return requirement.marker is None or any(requirement.marker.evaluate({"extra": e}) for e in ("", *extras))


def closure(requirements: list) -> dict:
    """{canonical name: Distribution} of the requirements and everything they require, from this environment; a
    missing distribution or a version outside its specifier fails the test."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found, todo = {}, list(requirements)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        try:
            dist = found.get(name) or distribution(requirement.name)
        except PackageNotFoundError:
            pytest.fail(f"{requirement} is required but not installed in the test environment")
        assert requirement.specifier.contains(dist.version, prereleases=True), \
            f"{requirement} is required, but {dist.version} is installed"
        if name in found:
            continue
        found[name] = dist
        todo += [r for r in map(Requirement, dist.requires or []) if applies(r, tuple(requirement.extras))]
    return found


def link_closure(dists: dict, folder: Path) -> None:
    """Symbolic links in ``folder`` to every top-level file and folder (packages, .libs, .dist-info) of ``dists``."""
    folder.mkdir()
    for dist in dists.values():
        assert dist.files is not None, f"{dist.metadata['Name']} lists no files (RECORD): cannot expose it"
        for top in {Path(str(f)).parts[0] for f in dist.files if not str(f).startswith("..")}:
            target = Path(dist.locate_file(top))
            if top != "__pycache__" and target.exists() and not (folder / top).exists():
                (folder / top).symlink_to(target)


def no_deps_packages(*prefixes: str) -> list:
    """The Requirements of pyproject's ``install-no-deps`` whose names start with one of ``prefixes``."""
    from packaging.requirements import Requirement

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["install-no-deps"]
    return [Requirement(r) for r in listed if r.startswith(prefixes)]


def fresh_environment(wheel: Path, folder: Path, extras: tuple[str, ...], no_deps: list) -> Path:
    """A virtual environment in ``folder/venv`` with ``wheel`` installed and the closure of its requirements for
    ``extras`` plus the ``no_deps`` packages (Requirements) visible; ``pip check`` must pass except for the
    requirements the ``no_deps`` packages declare. Returns the environment's python."""
    dists = closure(wheel_requirements(wheel, extras))
    assert "toxlib" not in dists
    dists.update({r.name: distribution(r.name) for r in no_deps})
    link_closure(dists, folder / "deps")
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120,
                   env=outside_env())
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, env=outside_env()).stdout.strip())
    (site / "toxlib-test-deps.pth").write_text(f"{folder / 'deps'}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True, capture_output=True,
                   timeout=300, env=outside_env())
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=300, env=outside_env())
    # the no-deps packages' own requirements are the ones --no-deps leaves out on purpose
    problems = [line for line in check.stdout.splitlines()
                if not line.lower().startswith(tuple(r.name.lower() for r in no_deps))]
    assert problems in ([], ["No broken requirements found."]) and not check.stderr, check.stdout + check.stderr
    return python


def user_env(venv: Path, home: Path, **extra: str) -> dict:
    """What a user's shell would give a command of the fresh environment: its bin on PATH, a home of its own
    (so caches go to ``home/.cache``), offline, nothing of the checkout's environment but the cores this pytest
    worker has (``TOXLIB_THREADS`` and ``OMP_NUM_THREADS`` where the test command set them: a command at every
    core of a machine another worker shares contends with it and runs several times slower)."""
    threads = {k: os.environ[k] for k in ("TOXLIB_THREADS", "OMP_NUM_THREADS") if k in os.environ}
    return {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "NO_PROXY": "127.0.0.1", "LANG": "C.UTF-8", **threads, **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
