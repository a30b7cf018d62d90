"""The artefact cache (``toxlib.store.artefacts``): the sample record's copy first, then the user's cache, else
made once into a temporary file or folder renamed into place; a failed make leaves nothing; names come from what
decides the artefact. Trained files with a real record: tests/record_tools/test_record.py."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from toxlib.common import memo
from toxlib.store import artefacts
from toxlib.store.keys import stable_hash


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOXLIB_RECORD_DIR", str(tmp_path / "record"))
    monkeypatch.delenv("TOXLIB_RECORD_USAGE", raising=False)
    monkeypatch.delenv("TOXLIB_RECORD", raising=False)
    return tmp_path / "cache"


def test_a_name_is_kind_label_and_the_keys_hash():
    key = {"weights": "sha256:ab", "settings": {"steps": 3}}
    assert artefacts.artefact_name("detox", "vocab-shift", key, ".safetensors") == \
        f"detox/vocab-shift-{stable_hash(key)[:16]}.safetensors"


def test_a_file_is_made_once_then_read(cache):
    made = []

    def make(partial):
        made.append(partial)
        partial.write_text("v")

    first = artefacts.artefact_file("kind/x.txt", make)
    assert first == cache / "kind/x.txt" and first.read_text() == "v"
    assert artefacts.artefact_file("kind/x.txt", make) == first and len(made) == 1
    assert made[0] != first  # written beside it, then renamed


def test_a_failed_make_leaves_nothing(cache):
    def broken(partial):
        partial.write_text("half")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        artefacts.artefact_file("kind/y.txt", broken)
    assert not (cache / "kind").exists() or list((cache / "kind").iterdir()) == []


def test_a_recorded_artefact_comes_from_the_record_and_is_named_in_the_usage_log(cache, tmp_path, monkeypatch):
    record = tmp_path / "record"
    (record / "artefacts/kind").mkdir(parents=True)
    (record / "artefacts/kind/z.bin").write_bytes(b"the book's")
    digest = hashlib.sha256(b"the book's").hexdigest()
    (record / "SHA256SUMS").write_text(f"{digest}  artefacts/kind/z.bin\n")
    monkeypatch.setenv("TOXLIB_RECORD_USAGE", str(tmp_path / "usage.sqlite"))
    path = artefacts.artefact_file("kind/z.bin", lambda p: pytest.fail("made although the record holds it"),
                                   recorded=True)
    assert path == record / "artefacts/kind/z.bin"
    used = sqlite3.connect(tmp_path / "usage.sqlite").execute("SELECT name FROM artefacts").fetchall()
    assert used == [("kind/z.bin",)]
    assert artefacts.artefact_file("kind/z.bin", lambda p: p.write_bytes(b"mine")).read_bytes() == b"mine"  # not
    # asked for as recorded: the cache's


def test_json_values_are_kept_and_a_damaged_one_computed_again(cache):
    calls = []
    assert artefacts.artefact_json("kind/v.json", lambda: calls.append(1) or {"a": 0.1}) == {"a": 0.1}
    assert artefacts.artefact_json("kind/v.json", lambda: calls.append(1) or {"a": 2}) == {"a": 0.1}
    (cache / "kind/v.json").write_text("{not json")
    assert artefacts.artefact_json("kind/v.json", lambda: calls.append(1) or {"a": 3}) == {"a": 3}
    assert len(calls) == 2


def _table(value):
    import pandas as pd

    return pd.DataFrame({"model": ["m", "m"], "step": [value, value + 1], "size": [0.1 * value, 1 / 3],
                         "same": [True, False]})


def test_a_frame_is_computed_once_per_name_and_reads_back_as_computed(cache):
    import pandas as pd

    calls = []
    name = artefacts.artefact_name("frames", "demo", {"a": 1}, ".csv.gz")
    first = artefacts.artefact_frame(name, lambda: calls.append(1) or _table(1))
    again = artefacts.artefact_frame(name, lambda: calls.append(99) or _table(99))
    other = artefacts.artefact_frame(artefacts.artefact_name("frames", "demo", {"a": 2}, ".csv.gz"),
                                     lambda: calls.append(2) or _table(2))
    pd.testing.assert_frame_equal(first, _table(1), check_exact=True)  # the same types and bits, floats included
    pd.testing.assert_frame_equal(again, first)
    assert calls == [1, 2] and other["step"].tolist() == [2, 3]
    assert sorted(p.name.endswith(".csv.gz") for p in (cache / "frames").iterdir()) == [True, True]  # no partial


def test_a_frame_gives_the_same_bytes_every_time_and_a_damaged_one_is_computed_again(cache, tmp_path, monkeypatch):
    first = artefacts.artefact_frame("frames/t.csv.gz", lambda: _table(1))
    data = (cache / "frames/t.csv.gz").read_bytes()
    # gzip's header: no time stamp (bytes 4-7), no file name (flag byte 3), as the record's files
    assert data[4:8] == b"\0\0\0\0" and data[3] & 0x08 == 0
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "elsewhere"))
    artefacts.artefact_frame("frames/t.csv.gz", lambda: _table(1))
    assert (tmp_path / "elsewhere/frames/t.csv.gz").read_bytes() == data
    (tmp_path / "elsewhere/frames/t.csv.gz").write_bytes(data[:20])  # a damaged disk: cut short
    assert artefacts.artefact_frame("frames/t.csv.gz", lambda: _table(5))["step"].tolist() == [5, 6]
    assert first["step"].tolist() == [1, 2]


@pytest.mark.parametrize("at", range(10, 60, 7))
def test_a_frame_with_a_flipped_byte_is_computed_again(cache, at):
    artefacts.artefact_frame("frames/f.csv.gz", lambda: _table(1))
    path = cache / "frames/f.csv.gz"
    data = bytearray(path.read_bytes())
    data[at % len(data)] ^= 0xFF  # a damaged disk: one byte inside the compressed body or its check
    path.write_bytes(bytes(data))
    again = artefacts.artefact_frame("frames/f.csv.gz", lambda: _table(3))
    assert again["step"].tolist() in ([1, 2], [3, 4])  # read (the flip left a readable table) or made again


def test_a_file_that_cannot_be_read_is_an_error_not_damage(cache, monkeypatch):
    from pathlib import Path

    artefacts.artefact_json("kind/locked.json", lambda: {"a": 1})
    path = cache / "kind/locked.json"
    real = Path.read_text

    def refused(self, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", refused)
    with pytest.raises(PermissionError):
        artefacts.artefact_json("kind/locked.json", lambda: {"a": 2})
    assert json.loads(real(path)) == {"a": 1}  # neither deleted nor made again as if it were damaged


def test_a_kept_memo_is_read_from_the_record_first_and_named_in_the_usage_log(cache, tmp_path, monkeypatch):
    record = tmp_path / "record"
    (record / "artefacts/intervals").mkdir(parents=True)
    data = json.dumps([0.1, 0.2, "BCa"]).encode()
    (record / "artefacts/intervals/k.json").write_bytes(data)
    (record / "SHA256SUMS").write_text(f"{hashlib.sha256(data).hexdigest()}  artefacts/intervals/k.json\n")
    monkeypatch.setenv("TOXLIB_RECORD_USAGE", str(tmp_path / "usage.sqlite"))
    assert memo.kept("intervals/k.json", lambda: pytest.fail("computed although recorded")) == [0.1, 0.2, "BCa"]
    assert not (cache / "intervals").exists()
    used = sqlite3.connect(tmp_path / "usage.sqlite").execute("SELECT name FROM artefacts").fetchall()
    assert used == [("intervals/k.json",)]
    assert memo.kept("intervals/other.json", lambda: [0.3, 0.4, "BCa"]) == [0.3, 0.4, "BCa"]  # not held: cached
    assert (cache / "intervals/other.json").exists()
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    assert memo.kept("intervals/k.json", lambda: [0.5, 0.6, "BCa"]) == [0.5, 0.6, "BCa"]  # record off: recomputed


def test_a_recorded_frame_is_read_from_the_record(cache, tmp_path, monkeypatch):
    record = tmp_path / "record"
    artefacts.artefact_frame("frames/r.csv.gz", lambda: _table(7))  # made in a cache, then put in the record
    (record / "artefacts/frames").mkdir(parents=True)
    data = (cache / "frames/r.csv.gz").read_bytes()
    (record / "artefacts/frames/r.csv.gz").write_bytes(data)
    (record / "SHA256SUMS").write_text(f"{hashlib.sha256(data).hexdigest()}  artefacts/frames/r.csv.gz\n")
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "empty"))
    read = artefacts.artefact_frame("frames/r.csv.gz", lambda: pytest.fail("computed although recorded"),
                                    recorded=True)
    assert read["step"].tolist() == [7, 8] and not (tmp_path / "empty").exists()


def test_a_folder_counts_as_made_only_with_its_done_file(cache):
    def make(folder):
        (folder / "weights").write_text("w")
        (folder / "done.json").write_text(json.dumps({"ok": True}))

    (cache / "models/m").mkdir(parents=True)  # left by something else: not trusted
    (cache / "models/m/stray").write_text("?")
    folder = artefacts.artefact_folder("models/m", make, done_file="done.json")
    assert sorted(p.name for p in folder.iterdir()) == ["done.json", "weights"]
    assert artefacts.artefact_folder("models/m", lambda f: pytest.fail("made twice"), done_file="done.json") == folder
    assert sorted(p.name for p in folder.parent.iterdir()) == [".m.lock", "m"]  # no temporary folder left


def test_processes_asking_for_one_folder_at_once_make_it_once(tmp_path):
    """As two chapters (or a book and a report) that first load a bundled model at the same time: one converts it,
    the other waits for it."""
    import subprocess
    import sys
    import textwrap

    log, root = tmp_path / "made.log", tmp_path / "models"
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from toxlib.store import artefacts

        def make(folder):
            with open({str(log)!r}, "a") as out:
                out.write("made\\n")
            time.sleep(1.5)  # a conversion: long enough for the other process to arrive
            (folder / "done.json").write_text("{{}}")

        print(artefacts.artefact_folder("m", make, done_file="done.json", root=Path({str(root)!r})))
    """)
    makers = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True) for _ in range(2)]
    said = [maker.communicate(timeout=120) for maker in makers]
    assert [maker.returncode for maker in makers] == [0, 0], said
    assert [out.strip() for out, _ in said] == [str(root / "m")] * 2 and log.read_text() == "made\n"
    assert sum(f"waiting for another process that is making {root / 'm'}" in err for _, err in said) == 1
    assert sorted(p.name for p in root.iterdir()) == [".m.lock", "m"]  # no temporary folder left


def test_a_made_folder_gets_the_umask_default_mode_not_the_temporary_folders(cache):
    """A converted bundled model or an adapted model is readable as any new folder would be (mkdtemp's is 0700)."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        folder = artefacts.artefact_folder("models/moded", lambda f: (f / "w").write_text("w"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755


def test_importing_the_store_makes_it_the_memos_keeper(cache):
    assert memo.kept("kind/memo.json", lambda: [1, 2]) == [1, 2]
    assert json.loads((cache / "kind/memo.json").read_text()) == [1, 2]
