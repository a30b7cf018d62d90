"""The generation store: keys, resumption, and a real subprocess killed with SIGKILL mid-run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

import toxlib.generate.api as api
from toxlib.generate import DecodingConfig, generate
from toxlib.steer import LogitsSteering
from toxlib.store.cache import GenerationStore

CONFIG = DecodingConfig(num_samples=3, max_new_tokens=6, seed=4)
PROMPTS = [f"prompt number {i} says" for i in range(40)]


def passthrough() -> LogitsSteering:
    """Same name and config as the child's slow steering, without the sleep: the same cache key."""
    return LogitsSteering("slow", [lambda ids, scores: scores])


@pytest.fixture()
def decoded_prompts(monkeypatch):
    """Counts the prompts that actually reach the decoder."""
    seen = []
    real = api.decode_batch

    def counting(model, prompt_ids, *args, **kw):
        seen.extend(prompt_ids)
        return real(model, prompt_ids, *args, **kw)

    monkeypatch.setattr(api, "decode_batch", counting)
    return seen


def test_store_inserts_atomically_and_keeps_the_first_value(tmp_path):
    with GenerationStore(tmp_path / "g.sqlite") as store:
        store.add("run", [("p", 0, "first", 3, False), ("p", 1, "other", 2, True)])
        store.add("run", [("p", 0, "second", 9, True)])
        assert store.lookup("run", ["p", "q"]) == {("p", 0): ("first", 3, False), ("p", 1): ("other", 2, True)}
        with pytest.raises(sqlite3.IntegrityError):  # a failing row rolls the whole batch back
            store._write("INSERT INTO generations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         [("run", "x", 0, "x", "a", 1, 0, 0.0, "c"), ("run", "x", 0, "x", "b", 1, 0, 0.0, "c")])
        assert store.count("run") == 2
        assert store.integrity_check() == "ok"


def test_cached_rows_are_not_generated_again(tiny_lm, tmp_path, decoded_prompts):
    store = GenerationStore(tmp_path / "g.sqlite")
    first = generate(tiny_lm, PROMPTS[:6], CONFIG, cache=store, progress=False, batch_rows=6)
    assert len(decoded_prompts) == 6
    again = generate(tiny_lm, PROMPTS[:8], CONFIG, cache=store, progress=False, batch_rows=6)
    assert len(decoded_prompts) == 8  # only the two new prompts were decoded
    assert again.iloc[:18].equals(first)
    generate(tiny_lm, PROMPTS[:6], CONFIG.with_(seed=5), cache=store, progress=False)
    generate(tiny_lm, PROMPTS[:6], CONFIG, cache=store, progress=False, steering=passthrough())
    assert len(decoded_prompts) == 20  # another seed or steering is another run


CHILD = textwrap.dedent('''
    import sys, time
    from toxlib.store.cache import GenerationStore
    from toxlib.generate import DecodingConfig, generate
    from toxlib.models import load
    from toxlib.steer import LogitsSteering

    slow = LogitsSteering("slow", [lambda ids, scores: (time.sleep(0.03), scores)[1]])
    lm = load(sys.argv[1], device="cpu")
    prompts = [f"prompt number {i} says" for i in range(40)]
    generate(lm, prompts, DecodingConfig(num_samples=3, max_new_tokens=6, seed=4), steering=slow,
             cache=GenerationStore(sys.argv[2]), batch_rows=6, progress=False)
    print("finished", flush=True)
''')


def _rows(path) -> int:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM generations").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_kill_9_mid_run_then_resume(tiny_model_dirs, tiny_lm, tmp_path, decoded_prompts):
    db = tmp_path / "killed.sqlite"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(tiny_model_dirs["llama"]), str(db)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 180
    while _rows(db) < 12 and time.time() < deadline and child.poll() is None:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()[-2000:]

    stored = _rows(db)
    assert 12 <= stored < 120 and stored % 6 == 0  # whole batches (2 prompts x 3 samples) only
    with GenerationStore(db) as store:
        assert store.integrity_check() == "ok"
        resumed = generate(tiny_lm, PROMPTS, CONFIG, steering=passthrough(), cache=store, batch_rows=6,
                           progress=False)
        assert store.count() == 120
    assert len(decoded_prompts) == 40 - stored // 3  # finished prompts were not decoded again

    clean = generate(tiny_lm, PROMPTS, CONFIG, steering=passthrough(), cache=False, batch_rows=6, progress=False)
    assert resumed.equals(clean)


def test_written_atomically_renames_on_success_and_leaves_nothing_on_failure(tmp_path):
    from toxlib.store.paths import written_atomically

    target = tmp_path / "deep" / "table.json"
    with pytest.raises(RuntimeError), written_atomically(target) as partial:
        partial.write_text("half")
        raise RuntimeError("killed mid-write")
    assert not target.exists() and list(target.parent.iterdir()) == []
    with written_atomically(target) as partial:
        partial.write_text("whole")
    assert target.read_text() == "whole" and [p.name for p in target.parent.iterdir()] == ["table.json"]


def test_every_cached_row_names_the_commit_that_computed_it_and_old_caches_gain_the_column(tmp_path):
    from toxlib.common.provenance import library_commit
    from toxlib.store.cache import LMScoreStore, ScoreStore

    old = tmp_path / "generations.sqlite"  # a cache written before rows named their commit
    con = sqlite3.connect(old)
    con.executescript("""
        CREATE TABLE runs (run TEXT PRIMARY KEY, config TEXT NOT NULL, created REAL NOT NULL);
        CREATE TABLE generations (run TEXT NOT NULL, prompt_sha TEXT NOT NULL, sample_idx INTEGER NOT NULL,
            prompt TEXT NOT NULL, continuation TEXT NOT NULL, n_new_tokens INTEGER NOT NULL,
            stopped INTEGER NOT NULL, created REAL NOT NULL, PRIMARY KEY (run, prompt_sha, sample_idx)) WITHOUT ROWID;
        INSERT INTO generations VALUES ('run', 'old-sha', 0, 'old prompt', 'old text', 2, 0, 0.0);""")
    con.commit()
    con.close()
    with GenerationStore(old) as store:
        store.add("run", [("new prompt", 0, "new text", 2, False)])
        assert store.lookup("run", ["new prompt"]) == {("new prompt", 0): ("new text", 2, False)}
    with ScoreStore(tmp_path / "s.sqlite") as scores, LMScoreStore(tmp_path / "n.sqlite") as nlls:
        scores.add("scorer@1", [("a text", {"toxicity": 0.5}, None)])
        nlls.add("model|float32|nll", [("a text", 3, 1.5)])
    made_by = {}
    for name, table in (("generations.sqlite", "generations"), ("s.sqlite", "scores"), ("n.sqlite", "lm_scores")):
        con = sqlite3.connect(tmp_path / name)
        made_by[table] = sorted(con.execute(f"SELECT made_by FROM {table}").fetchall(), key=lambda row: row[0] or "")
        con.close()
    commit = library_commit()
    assert commit and commit != "unknown"
    assert made_by == {"generations": [(None,), (commit,)], "scores": [(commit,)], "lm_scores": [(commit,)]}
