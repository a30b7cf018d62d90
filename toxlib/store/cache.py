"""Append-only, resumable stores for generated texts (and, keyed separately, for scores).

Storage: one SQLite file per store under ``toxlib.store.paths.cache_dir()`` (``generations.sqlite``). Why SQLite rather
than JSONL or Parquet shards: each finished batch is written in one transaction, so a process killed at any
moment (kill -9 included) leaves every batch either fully stored or absent, never half-written; lookups by key
stay fast at the papers' scale (millions of rows) without loading the file; several notebooks may write at
once (WAL journal, a busy timeout); and it is in the standard library. Rows are only ever inserted
(``INSERT OR IGNORE``), never updated or deleted, so a finished batch cannot be damaged by a later run.

Stores: ``GenerationStore`` (generations.sqlite), ``LMScoreStore`` (lm_scores.sqlite: per-sentence negative
log-likelihoods keyed by (model key, sha256(text)), where the model key names the weights, dtype and method) and
``ScoreStore`` (scores.sqlite: toxicity scores keyed by ("<scorer>@<version>", sha256(text))).

The sample record (``toxlib.store.record_reader``, ``data/record/``) comes first: a lookup answers from it for the
keys it holds, and from the SQLite file for the rest; a row of the record wins over a cached row of the same key.
Rows are only ever added to the user's cache, never to the record.

Every row names the toxlib that computed it (``made_by``: commit, ``+dirty`` for uncommitted library changes;
NULL in rows cached before this column existed); keys never include it, so a new commit reuses the rows.

Keys: a run key hashes everything that determines the texts except the prompt (model name and weights id, dtype,
decoding config, steering config; see ``toxlib.generate.config.run_key``); a row is (run, sha256(prompt),
sample_idx). Scores get their own table keyed by (scorer, version, sha256(text)), so changing the scorer never
touches generated texts.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sqlite3
import time
import warnings
from pathlib import Path

from toxlib.common.provenance import library_commit
from toxlib.store import paths
from toxlib.store.record_reader import open_record, text_sha
from toxlib.store.record_usage import note_usage

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY, config TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS generations (
    run TEXT NOT NULL, prompt_sha TEXT NOT NULL, sample_idx INTEGER NOT NULL,
    prompt TEXT NOT NULL, continuation TEXT NOT NULL, n_new_tokens INTEGER NOT NULL, stopped INTEGER NOT NULL,
    created REAL NOT NULL, made_by TEXT,
    PRIMARY KEY (run, prompt_sha, sample_idx)) WITHOUT ROWID;
"""


def cache_fix(path: Path, exc: BaseException) -> str:
    """What to do about a cache file that could not be opened or written, from what went wrong: a damaged file
    (move it aside), a full disk (free space), a file or folder that cannot be written, a file another process
    holds locked."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text
                                                   or "corrupt" in text):
        return (f"The file is damaged: move it aside (mv {path} {path}.damaged) and the next run starts a new "
                "cache (its rows are computed again)")
    if getattr(exc, "errno", None) == errno.ENOSPC or "disk is full" in text or "no space" in text:
        return f"The disk is full: free space on the disk holding {path.parent}, or point TOXLIB_CACHE_DIR elsewhere"
    if "locked" in text or "busy" in text:
        return "Another process holds the file locked: let it finish, or give this run TOXLIB_CACHE_DIR of its own"
    return (f"Make {path.parent} writable, or point TOXLIB_CACHE_DIR at a writable directory")


def _cache_warning(path: Path, what: str, exc: BaseException) -> None:
    warnings.warn(f"the cache {path} could not be {what} ({type(exc).__name__}: {exc}); the results of this run are "
                  f"kept and returned, but not cached. {cache_fix(path, exc)}.", RuntimeWarning, stacklevel=3)


class SqliteStore:
    """A SQLite file opened with WAL journaling; ``path=None`` uses ``cache_dir()/<default_name>``.

    A cache never costs a run its results: a file that cannot be opened (a read-only or full disk, a path that is
    not a directory) gives a store that keeps nothing (an in-memory database), and a write that fails (a full disk,
    a database locked past the time-out) is dropped; each says so once, with the directory and the fix
    (a RuntimeWarning), and the computed rows are returned all the same."""

    default_name = "store.sqlite"
    schema = ""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else paths.cache_dir() / self.default_name
        self.persistent = True
        existed = self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(self.path, timeout=120, isolation_level=None)
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=NORMAL")  # durable against a killed process; not power loss
            self._con.executescript(self.schema)
            self._add_made_by()
        except (OSError, sqlite3.Error) as exc:
            _cache_warning(self.path, "opened", exc)
            if not existed:
                with contextlib.suppress(OSError):  # no 0-byte file left behind
                    if self.path.is_file() and self.path.stat().st_size == 0:
                        self.path.unlink()
            self.persistent = False
            self._con = sqlite3.connect(":memory:", isolation_level=None)
            self._con.executescript(self.schema)

    def _add_made_by(self) -> None:
        """Give a row table of a cache written before rows named their commit the ``made_by`` column (NULL for
        the old rows: unknown)."""
        for (table,) in self._con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            columns = [row[1] for row in self._con.execute(f"PRAGMA table_info({table})")]
            if table != "runs" and "created" in columns and "made_by" not in columns:
                try:
                    self._con.execute(f"ALTER TABLE {table} ADD COLUMN made_by TEXT")
                except sqlite3.OperationalError as exc:  # another process added it between the check and here
                    if "duplicate column" not in str(exc):
                        raise

    def close(self) -> None:
        self._con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def integrity_check(self) -> str:
        """SQLite's own consistency check: "ok" when the file is sound."""
        return self._con.execute("PRAGMA integrity_check").fetchone()[0]

    def _select_by_text(self, table: str, key_column: str, key: str, sha_column: str, columns: str,
                        texts: list[str]) -> list[tuple[str, tuple]]:
        """(text, row values) for the stored rows of ``key`` whose text hash is one of ``texts``' hashes."""
        by_sha = {text_sha(t): t for t in texts}
        shas = list(by_sha)
        found = []
        for start in range(0, len(shas), 500):  # SQLite limits the number of bound parameters
            chunk = shas[start:start + 500]
            query = (f"SELECT {sha_column}, {columns} FROM {table} WHERE {key_column} = ? "
                     f"AND {sha_column} IN ({','.join('?' * len(chunk))})")
            found.extend((by_sha[row[0]], row[1:]) for row in self._con.execute(query, [key, *chunk]))
        return found

    def _with_record(self, kind: str, key: str, texts: list[str], from_cache) -> dict:
        """The record's rows of ``key`` for ``texts``, completed by ``from_cache(missing texts)`` from this file;
        the usage log (``TOXLIB_RECORD_USAGE``) is told which rows came from where."""
        record = open_record()
        held = record.lookup(kind, key, texts) if record is not None else {}
        if kind == "generations":
            held_prompts = {prompt for prompt, _ in held}
            missing = [t for t in texts if t not in held_prompts]
        else:
            missing = [t for t in texts if t not in held]
        cached = from_cache(missing) if missing else {}
        for source, rows in (("record", held), ("cache", cached)):
            note_usage(kind, key, [k if isinstance(k, tuple) else (k, 0) for k in rows], source)
        return {**cached, **held}

    def _write(self, sql: str, rows: list[tuple]) -> None:
        """Insert many rows in one transaction: all of them land or none does. A failed write (a full disk, a locked
        database) warns once and is dropped: the caller keeps its rows."""
        if not self.persistent:
            return
        try:
            with self._con:
                self._con.execute("BEGIN IMMEDIATE")
                self._con.executemany(sql, rows)
        except sqlite3.OperationalError as exc:  # the disk or the file, not the rows (an IntegrityError raises)
            self.persistent = False
            _cache_warning(self.path, "written", exc)


class GenerationStore(SqliteStore):
    """Generated continuations keyed by (run, prompt, sample_idx)."""

    default_name = "generations.sqlite"
    schema = SCHEMA

    def register_run(self, run: str, config: dict) -> None:
        """Record what a run key stands for in the ``runs`` table (provenance for readers of the file; lookups need
        only the key)."""
        self._write("INSERT OR IGNORE INTO runs VALUES (?, ?, ?)",
                    [(run, json.dumps(config, sort_keys=True, default=str), time.time())])
        note_usage("generations", run, [], "computed", config=config)

    def lookup(self, run: str, prompts: list[str]) -> dict[tuple[str, int], tuple[str, int, bool]]:
        """Stored rows of ``run`` for these prompts: {(prompt, sample_idx): (continuation, n_new_tokens, stopped)}."""
        def from_cache(texts):
            rows = self._select_by_text("generations", "run", run, "prompt_sha",
                                        "sample_idx, continuation, n_new_tokens, stopped", texts)
            return {(p, idx): (cont, n_new, bool(stopped)) for p, (idx, cont, n_new, stopped) in rows}

        return self._with_record("generations", run, prompts, from_cache)

    def add(self, run: str, rows: list[tuple[str, int, str, int, bool]]) -> None:
        """Store (prompt, sample_idx, continuation, n_new_tokens, stopped) rows atomically; existing keys are kept."""
        now = time.time()
        self._write("INSERT OR IGNORE INTO generations (run, prompt_sha, sample_idx, prompt, continuation, "
                    "n_new_tokens, stopped, created, made_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(run, text_sha(p), i, p, c, n, int(s), now, library_commit()) for p, i, c, n, s in rows])
        note_usage("generations", run, [(p, i) for p, i, *_ in rows], "computed")

    def count(self, run: str | None = None) -> int:
        if run is None:
            return self._con.execute("SELECT COUNT(*) FROM generations").fetchone()[0]
        return self._con.execute("SELECT COUNT(*) FROM generations WHERE run = ?", (run,)).fetchone()[0]


class LMScoreStore(SqliteStore):
    """Per-sentence language-model scores: (model_key, text) -> (n_tokens, nll_sum)."""

    default_name = "lm_scores.sqlite"
    schema = """
    CREATE TABLE IF NOT EXISTS lm_scores (
        model_key TEXT NOT NULL, text_sha TEXT NOT NULL, n_tokens INTEGER NOT NULL, nll_sum REAL NOT NULL,
        created REAL NOT NULL, made_by TEXT,
        PRIMARY KEY (model_key, text_sha)) WITHOUT ROWID;
    """

    def describe(self, model_key: str, config: dict) -> None:
        """What a key stands for (model name, weights, precision, method): kept for the record's provenance only
        (the usage log's ``configs``); lookups need only the key."""
        note_usage("lm_scores", model_key, [], "computed", config=config)

    def lookup(self, model_key: str, texts: list[str]) -> dict[str, tuple[int, float]]:
        """{text: (n_tokens, nll_sum)} for the stored texts among ``texts``."""
        return self._with_record("lm_scores", model_key, texts, lambda missing: dict(
            self._select_by_text("lm_scores", "model_key", model_key, "text_sha", "n_tokens, nll_sum", missing)))

    def add(self, model_key: str, rows: list[tuple[str, int, float]]) -> None:
        """Store (text, n_tokens, nll_sum) rows atomically; existing keys are kept."""
        now = time.time()
        self._write("INSERT OR IGNORE INTO lm_scores (model_key, text_sha, n_tokens, nll_sum, created, made_by) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(model_key, text_sha(t), n, nll, now, library_commit()) for t, n, nll in rows])
        note_usage("lm_scores", model_key, [(t, 0) for t, *_ in rows], "computed")


class ScoreStore(SqliteStore):
    """Scores keyed by (scorer, version, text): the attribute values as JSON ({attribute: float or null}) and the
    error text for a text that a scorer could not score for good (e.g. an unsupported language). Transient failures
    (time-outs, exhausted retries) are not stored, so a later run tries them again."""

    default_name = "scores.sqlite"
    schema = """
    CREATE TABLE IF NOT EXISTS scores (
        scorer TEXT NOT NULL, text_sha TEXT NOT NULL, scores TEXT NOT NULL, error TEXT, created REAL NOT NULL,
        made_by TEXT,
        PRIMARY KEY (scorer, text_sha)) WITHOUT ROWID;
    """

    def lookup(self, scorer_key: str, texts: list[str]) -> dict[str, tuple[dict, str | None]]:
        """{text: ({attribute: value or None}, error or None)} for the stored texts among ``texts``.
        ``scorer_key`` is "<scorer name>@<version>"."""
        def from_cache(missing):
            rows = self._select_by_text("scores", "scorer", scorer_key, "text_sha", "scores, error", missing)
            return {text: (json.loads(values), error) for text, (values, error) in rows}

        return self._with_record("scores", scorer_key, texts, from_cache)

    def add(self, scorer_key: str, rows: list[tuple[str, dict, str | None]]) -> None:
        """Store (text, {attribute: value or None}, error or None) rows atomically; existing keys are kept."""
        now = time.time()
        self._write("INSERT OR IGNORE INTO scores (scorer, text_sha, scores, error, created, made_by) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(scorer_key, text_sha(t), json.dumps(v, sort_keys=True), e, now, library_commit())
                     for t, v, e in rows])
        note_usage("scores", scorer_key, [(t, 0) for t, *_ in rows], "computed")
