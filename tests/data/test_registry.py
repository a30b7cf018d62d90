"""The data registry and fetching on pooch: pinned entries, mirror copies, downloads over HTTP (a local server), a
stored file checked before every use, and every failure path."""

from __future__ import annotations

import csv
import hashlib
import http.server
import io
import re
import socket
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from toxlib.common.errors import ChecksumMismatchError, DataUnavailableError, UnknownNameError
from toxlib.data.sources import Registry, fetch, registry


def test_every_entry_is_pinned_and_checksummed():
    reg = registry()
    assert len(reg.names()) >= 20
    for name in reg.names():
        s = reg[name]
        assert re.fullmatch(r"[0-9a-f]{40}", s.commit), name
        assert s.commit in s.url, f"{name}: URL not pinned to its commit"
        assert re.fullmatch(r"[0-9a-f]{64}", s.sha256), name
        assert s.license and s.citation, name
        assert bool(s.drop_columns) == bool(s.stored_sha256), f"{name}: columns dropped need the stored sha256"


@pytest.mark.data
def test_registry_agrees_with_mirror_manifest(mirror):
    manifest = {r["mirror_path"]: r for r in csv.DictReader(open(mirror / "MANIFEST.tsv"), delimiter="\t")}
    for name in registry().names():
        s = registry()[name]
        assert s.path in manifest, f"{name}: {s.path} not in the mirror manifest"
        assert manifest[s.path]["sha256"] == s.sha256
        assert manifest[s.path]["raw_url"] == s.url


def test_unknown_source_lists_known_names():
    with pytest.raises(UnknownNameError, match="known sources: .*sass_benchmark"):
        registry()["no_such_file"]


@pytest.mark.data
def test_fetch_from_mirror_writes_verified_copy(tmp_path, mirror):
    path = fetch("sass_benchmark", mirror=mirror, data_dir=tmp_path)
    assert path == tmp_path / registry()["sass_benchmark"].path
    assert hashlib.sha256(path.read_bytes()).hexdigest() == registry()["sass_benchmark"].sha256


@pytest.mark.data
def test_a_file_stored_with_columns_dropped_has_the_registrys_stored_sha256(tmp_path, mirror):
    leaky = [name for name in registry().names() if registry()[name].drop_columns]
    assert leaky
    for name in leaky:
        stored = fetch(name, mirror=mirror, data_dir=tmp_path)
        assert hashlib.sha256(stored.read_bytes()).hexdigest() == registry()[name].stored_sha256
        assert not set(registry()[name].drop_columns) & set(stored.read_text().splitlines()[0].split(","))


def _fake_registry(tmp_path: Path, data: bytes, url: str = "http://127.0.0.1:9/x.csv", **extra) -> Registry:
    base = registry()["sass_benchmark"]
    src = replace(base, name="fake", path="owner/repo/x.csv", url=url, sha256=hashlib.sha256(data).hexdigest(), **extra)
    return Registry([src])


def test_checksum_mismatch_names_file_and_both_hashes(tmp_path):
    good = b"category\ttag\ttext\nA\tfiltered\thello\n"
    reg = _fake_registry(tmp_path, good)
    (tmp_path / "mirror/owner/repo").mkdir(parents=True)
    (tmp_path / "mirror/owner/repo/x.csv").write_bytes(good + b"tampered\n")
    with pytest.raises(ChecksumMismatchError) as err:
        fetch("fake", mirror=tmp_path / "mirror", reg=reg, data_dir=tmp_path / "data")
    message = str(err.value)
    assert "'fake'" in message and "owner/repo/x.csv" in message
    assert reg["fake"].sha256 in message
    assert hashlib.sha256(good + b"tampered\n").hexdigest() in message
    assert not (tmp_path / "data/owner/repo/x.csv").exists(), "a mismatching file must not be stored"


def test_missing_in_mirror_says_where_it_looked(tmp_path):
    reg = _fake_registry(tmp_path, b"x")
    with pytest.raises(DataUnavailableError, match="not in the mirror .*owner/repo/x.csv"):
        fetch("fake", mirror=tmp_path, reg=reg, data_dir=tmp_path / "data")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_without_mirror_names_fetch_command_and_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("TOXLIB_DATA_MIRROR", raising=False)
    reg = _fake_registry(tmp_path, b"x", url=f"http://127.0.0.1:{_closed_port()}/x.csv")
    with pytest.raises(DataUnavailableError) as err:
        fetch("fake", reg=reg, data_dir=tmp_path / "data", retries=1, backoff=0.01)
    assert "python -m toxlib data fetch fake" in str(err.value)
    assert "TOXLIB_DATA_MIRROR" in str(err.value)


class _Server:
    """A local HTTP server whose replies are a queue of (status, body); the last one repeats."""

    def __init__(self, replies):
        self.replies, self.requests = list(replies), 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests += 1
                status, body = outer.replies.pop(0) if len(outer.replies) > 1 else outer.replies[0]
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/file.csv"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_download_retries_server_errors_then_verifies(tmp_path, monkeypatch):
    monkeypatch.delenv("TOXLIB_DATA_MIRROR", raising=False)
    body = b"a,b\n1,2\n"
    server = _Server([(503, b"busy"), (500, b"oops"), (200, body)])
    try:
        reg = _fake_registry(tmp_path, body, url=server.url)
        path = fetch("fake", reg=reg, data_dir=tmp_path / "data", backoff=0.01)
    finally:
        server.close()
    assert path.read_bytes() == body
    assert server.requests == 3


def test_download_gives_up_on_persistent_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("TOXLIB_DATA_MIRROR", raising=False)
    server = _Server([(500, b"down")])
    try:
        reg = _fake_registry(tmp_path, b"whatever", url=server.url)
        with pytest.raises(DataUnavailableError, match="could not download 'fake'"):
            fetch("fake", reg=reg, data_dir=tmp_path / "data", retries=2, backoff=0.01)
    finally:
        server.close()
    assert server.requests == 3  # the first try and two retries


def test_download_of_leaky_file_drops_the_credential_column(tmp_path, monkeypatch):
    monkeypatch.delenv("TOXLIB_DATA_MIRROR", raising=False)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerows([["id", "text", "perspective_error"], ["1", "hi, there", ""], ["2", "x", "key=AIzaFAKEFAKEFAKE"]])
    upstream = out.getvalue().encode()
    server = _Server([(200, upstream)])
    try:
        scrubbed = b'id,text\n1,"hi, there"\n2,x\n'
        reg = _fake_registry(tmp_path, b"mirror copy", url=server.url,
                             upstream_sha256=hashlib.sha256(upstream).hexdigest(), drop_columns=("perspective_error",),
                             stored_sha256=hashlib.sha256(scrubbed).hexdigest())
        stored = fetch("fake", reg=reg, data_dir=tmp_path / "data").read_text()
    finally:
        server.close()
    assert "AIza" not in stored and "perspective_error" not in stored
    assert stored.splitlines() == ["id,text", '1,"hi, there"', "2,x"]


@pytest.mark.data
def test_cli_fetch_from_mirror_and_unknown_name(tmp_path, mirror):
    import os
    import subprocess
    import sys

    env = {**os.environ, "TOXLIB_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "toxlib", "data", "fetch", "sass_benchmark", "toxigen", "--mirror",
                           str(mirror)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / registry()["toxigen"].path).exists()
    bad = subprocess.run([sys.executable, "-m", "toxlib", "data", "fetch", "sass_benchmrk"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2
    assert "unknown data source 'sass_benchmrk'" in bad.stderr and "sass_benchmark" in bad.stderr


@pytest.mark.data
def test_a_present_file_is_hashed_before_every_use(tmp_path, mirror, monkeypatch):
    import os

    import pooch

    path = fetch("sass_benchmark", mirror=mirror, data_dir=tmp_path)
    hashed = []
    real = pooch.core.hash_matches
    monkeypatch.setattr(pooch.core, "hash_matches", lambda p, *a, **k: hashed.append(p) or real(p, *a, **k))
    assert fetch("sass_benchmark", data_dir=tmp_path) == path and hashed == [str(path)]
    fetch("sass_benchmark", data_dir=tmp_path)
    assert hashed == [str(path), str(path)]

    # an edit that keeps the size, with the modification time put back (touch -r): still refused
    st = path.stat()
    raw = bytearray(path.read_bytes())
    raw[-2] = ord("X") if raw[-2] != ord("X") else ord("Y")
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(ChecksumMismatchError, match="changed since it was fetched"):
        fetch("sass_benchmark", data_dir=tmp_path)
    path.write_bytes(bytes(raw))  # and without the touch

    raw = bytearray(path.read_bytes())
    raw[-2] = ord("X") if raw[-2] != ord("X") else ord("Y")  # same size, different bytes
    path.write_bytes(bytes(raw))
    with pytest.raises(ChecksumMismatchError, match=rf"{re.escape(str(path))} changed since it was fetched"):
        fetch("sass_benchmark", data_dir=tmp_path)
    assert fetch("sass_benchmark", mirror=mirror, data_dir=tmp_path, force=True) == path  # the fix it names
    assert hashlib.sha256(path.read_bytes()).hexdigest() == registry()["sass_benchmark"].sha256
