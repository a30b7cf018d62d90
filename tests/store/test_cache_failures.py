"""A cache never costs a run its results: a store that cannot be opened keeps nothing, a write that fails is dropped,
each with one warning naming the directory and the fix, and the computed rows come back (issue: a full disk ended
``score`` with a raw sqlite3 error and an empty CSV)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid

import pytest

from toxlib.scorers import score
from toxlib.store.cache import ScoreStore


def test_a_cache_that_cannot_be_opened_keeps_nothing_and_says_so(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    with pytest.warns(RuntimeWarning, match=r"could not be opened.*TOXLIB_CACHE_DIR"):
        store = ScoreStore(blocker / "scores.sqlite")
    assert not store.persistent
    table = score(["hello friend", "fuck off"], scorer="profanity-svm", cache=store, progress=False)
    assert table["profanity"].notna().all() and table["error"].isna().all()


class _FullDisk:
    """A connection whose writes fail as SQLite's do on a full disk; reads go through."""

    def __init__(self, con):
        self._con = con

    def execute(self, sql, *args):
        if sql.startswith("BEGIN"):
            raise sqlite3.OperationalError("database or disk is full")
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)

    def __enter__(self):
        return self._con.__enter__()

    def __exit__(self, *exc):
        return self._con.__exit__(*exc)


def test_a_failed_cache_write_keeps_the_computed_scores(tmp_path):
    store = ScoreStore(tmp_path / "scores.sqlite")
    store._con = _FullDisk(store._con)
    with pytest.warns(RuntimeWarning, match=rf"{tmp_path}.*could not be written.*disk is full"):
        table = score(["hello friend", "fuck off"], scorer="profanity-svm", cache=store, progress=False)
    assert table["profanity"].notna().all() and table.loc[1, "profanity"] > 0.9
    assert not store.persistent


@pytest.fixture()
def full_disk(tmp_path):
    """A 64 KiB tmpfs filled to the last byte (needs root and mount; skipped, saying why, elsewhere)."""
    where = tmp_path / f"full-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip() or done.returncode})")
    try:
        fd = os.open(where / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"x" * 512):
                pass
        except OSError:  # ENOSPC: full
            pass
        finally:
            os.close(fd)
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def test_score_on_a_full_disk_writes_every_score_and_one_warning(full_disk, tmp_path):
    lines = tmp_path / "in.txt"
    lines.write_text("hello friend\nfuck off\n")
    env = {**os.environ, "TOXLIB_CACHE_DIR": str(full_disk / "cache")}
    done = subprocess.run([sys.executable, "-m", "toxlib", "score", str(lines), "--scorer", "profanity-svm"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().splitlines()) == 3  # header and both rows
    assert "Traceback" not in done.stderr and "TOXLIB_CACHE_DIR" in done.stderr
    assert not (full_disk / "cache" / "scores.sqlite").exists() or \
        (full_disk / "cache" / "scores.sqlite").stat().st_size > 0  # no 0-byte file left behind


def test_a_damaged_cache_file_is_named_as_damaged_not_as_a_full_disk(tmp_path):
    """A cache file that is not a database gets the fix for a damaged file (move it aside), not "free disk space"."""
    import warnings

    from toxlib.store.cache import ScoreStore

    path = tmp_path / "scores.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ScoreStore(path).close()
    [warning] = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert "damaged" in str(warning.message) and f"mv {path} {path}.damaged" in str(warning.message)
    assert "disk" not in str(warning.message).lower()
