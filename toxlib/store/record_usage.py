"""What a build used of the sample record, and where its rows came from.

``note_usage`` counts the rows a store served in this process (``SERVED``: from the record, the user's cache, or
computed) and, when ``TOXLIB_RECORD_USAGE=<file>`` names a SQLite usage log, names each row there with the chapter
that used it (``TOXLIB_RECORD_CHAPTER``, set by the book's runner), so ``python -m toxlib record write`` keeps exactly
the rows a build used; ``note_build`` and ``note_artefact`` add the chapter's run record and the trained files it
loaded (``recorded_artefact`` finds the record's copy). ``served_summary`` is the run record's line on where the rows
came from, with the record's last audit (``last_audit``). Reading the record itself: ``toxlib.store.record_reader``.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import warnings
from collections import Counter
from pathlib import Path

from toxlib.common import settings
from toxlib.store.record_reader import (
    checked_bytes,
    key_chapters,
    open_record,
    read_sums,
    record_dir,
    record_enabled,
    text_sha,
)

#: rows the caches answered or stored in this process: {(source, kind): rows}, source "record", "cache" or
#: "computed"; and the record's keys that answered (for their provenance)
SERVED: Counter = Counter()
SERVED_KEYS: set = set()
#: the first failure to write the rows log (``TOXLIB_ROWS_LOG``) in this process: said once
_ROWS_LOG_FAILED: list = []


def served_counts() -> dict[str, int]:
    """{"record": rows, "cache": rows, "computed": rows} the caches answered or stored in this process."""
    return {source: sum(n for (s, _), n in SERVED.items() if s == source) for source in ("record", "cache",
                                                                                       "computed")}


def served_summary() -> str:
    """One line for a chapter's run record: how many rows came from the sample record (and which commits and CPUs
    made them), from the user's cache, and were computed, in this process."""
    if not SERVED:
        return "no generation, score or NLL rows"
    total = served_counts()
    made = ""
    record = open_record()
    if record is not None and SERVED_KEYS:
        entries = [m for k in sorted(SERVED_KEYS) for m in record.keys.get(k, {}).get("made_by", [])]
        commits = sorted({str(m.get("commit", "unknown")) for m in entries})
        cpus = sorted({str(m.get("cpu", m.get("machine", "unknown"))).split(";")[0] for m in entries})
        made = f" (made at commit {', '.join(commits)} on {', '.join(cpus)})"
    # the chapter running (set by the book's runner); else every chapter that uses a served key
    if settings.text("TOXLIB_RECORD_CHAPTER"):
        chapters = {settings.text("TOXLIB_RECORD_CHAPTER")}
    elif record is not None:
        chapters = {c for k in SERVED_KEYS for c in key_chapters(record.keys.get(k, {}))}
    else:
        chapters = set()
    audit = last_audit(record.folder, chapters) if record is not None and total["record"] else ""
    changed = record.changed_files() if record is not None and total["record"] else []
    edited = (f" (the record differs from its commit in {len(changed)} file(s): {', '.join(changed[:4])}"
              + (" ..." if len(changed) > 4 else "") + ")" if changed else "")
    return (f"{total['record']:,} rows from the sample record{made}{edited}, {total['cache']:,} from the user's "
            f"cache, {total['computed']:,} computed" + (f"; {audit}" if audit else ""))


def last_audit(folder: str | Path, chapters: set | None = None) -> str:
    """The record's latest audit as a phrase for a run record, from the last line of ``<folder>/audits.csv``
    (written by ``python -m toxlib record audit --history``) whose scope covers one of ``chapters`` (any line when
    None): "the record's last audit (<date>, AMD EPYC; ..., slice 10 per key): 1,200 of 1,204 recomputed rows
    identical", with its scope where it covered only some chapters or kinds and the bf16 rows (not counted) where
    it had any; "" when the folder holds no such audit."""
    path = Path(folder) / "audits.csv"
    if not path.exists():
        return ""
    with path.open(newline="", encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    lines = [line for line in lines if chapters is None or covers(line.get("scope") or "all keys", chapters)]
    if not lines:
        return ""
    last = lines[-1]
    bf16 = last.get("bf16 rows (not counted)") or "0"
    scope = last.get("scope") or "all keys"
    return (f"the record's last audit ({last['date']}, {last['machine']}, commit {last['commit']}, slice "
            f"{last['slice']} per key" + ("" if scope == "all keys" else f", {scope}") + "): "
            f"{int(last['identical']):,} of {int(last['rows']):,} recomputed rows "
            "identical" + (f" (bf16 rows, machine-dependent and not counted: {int(last['bf16 identical']):,} of "
                           f"{int(bf16):,})" if int(bf16) else ""))


def covers(scope: str, chapters: set) -> bool:
    """Whether an audit of this scope (``toxlib.record_tools.audit.scope``: "all keys", or "chapters a, b; kinds ...")
    audited keys of one of ``chapters``."""
    named = [part[len("chapters "):].split(", ") for part in scope.split("; ") if part.startswith("chapters ")]
    return not named or bool(set(named[0]) & set(chapters))


USAGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS used (
    kind TEXT NOT NULL, key TEXT NOT NULL, sha TEXT NOT NULL, sample_idx INTEGER NOT NULL, source TEXT NOT NULL,
    PRIMARY KEY (kind, key, sha, sample_idx)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS texts (sha TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS configs (kind TEXT NOT NULL, key TEXT NOT NULL, config TEXT NOT NULL,
    PRIMARY KEY (kind, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chapters (kind TEXT NOT NULL, key TEXT NOT NULL, chapter TEXT NOT NULL,
    PRIMARY KEY (kind, key, chapter)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS builds (chapter TEXT PRIMARY KEY, facts TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS artefacts (name TEXT PRIMARY KEY, path TEXT NOT NULL) WITHOUT ROWID;
"""


def recorded_artefact(name: str) -> Path | None:
    """The record's copy of a trained file (``artefacts/<name>``, e.g. "detox/pplm-discriminator-<key>.safetensors"),
    or None when the record is off or does not hold it. Logged as used either way (``note_artefact``)."""
    if not record_enabled():
        return None
    try:
        folder = record_dir()
    except Exception:  # outside the checkout
        return None
    path = folder / "artefacts" / name
    if not path.is_file():
        return None
    checked_bytes(folder, path, read_sums(folder))
    return path


def note_artefact(name: str, path: Path) -> None:
    """Name a trained file a build used (and where it lies) in the usage log, so ``record write`` copies it into
    the record's ``artefacts/``. Nothing without a usage log."""
    con = _usage_log()
    if con is None:
        return
    try:
        with con:
            con.execute("INSERT OR REPLACE INTO artefacts VALUES (?, ?)", (name, str(Path(path).resolve())))
    finally:
        con.close()


def _usage_log(variable: str = "TOXLIB_RECORD_USAGE"):
    """A connection to the usage log ``variable`` names, with its tables, or None when it is not set."""
    target = settings.text(variable)
    if not target:
        return None
    con = sqlite3.connect(target, timeout=120, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(USAGE_SCHEMA)
    return con


def note_build(chapter: str, facts: dict) -> None:
    """Keep in the usage log where a chapter ran (commit, machine, CPU, libraries, date: the book's runner passes its
    run record), so the rows it computed carry that provenance into the record. Nothing without a usage log."""
    con = _usage_log()
    if con is None:
        return
    try:
        with con:
            con.execute("INSERT OR REPLACE INTO builds VALUES (?, ?)", (chapter, json.dumps(facts, sort_keys=True)))
    finally:
        con.close()


def note_usage(kind: str, key: str, rows: list[tuple[str, int]], source: str, config: dict | None = None) -> None:
    """Count rows served in this process (``SERVED``, for the run record) and name them in the usage log
    (``TOXLIB_RECORD_USAGE``; not written without it): (text, sample index)
    pairs of ``key`` (the prompt for a generation, the scored text otherwise, with index 0), with where they came
    from ("record", "cache" or "computed") and the chapter that used them (``TOXLIB_RECORD_CHAPTER``, set by the
    book's runner); the texts themselves go into its ``texts`` table, since the score and
    NLL caches keep only hashes. ``TOXLIB_ROWS_LOG`` names a second log of the same form (a report chapter's rows:
    ``toxlib.reportcard.cached``) that holds neither the record's rows nor any text. A row named twice keeps its
    first source. Errors are not swallowed: a build asked to log its rows must not lose them silently."""
    if rows:
        SERVED[(source, kind)] += len(rows)
        if source == "record":
            SERVED_KEYS.add((kind, key))
    if not rows and config is None:
        return
    con = _usage_log()
    if con is not None:
        _log_rows(con, kind, key, rows, source, config, texts=True)
    try:  # only the next estimate reads it: a rows log that cannot be written costs that estimate, not the run
        con = _usage_log("TOXLIB_ROWS_LOG")
        if con is not None:
            _log_rows(con, kind, key, [] if source == "record" else rows, source, config, texts=False)
    except (OSError, sqlite3.Error) as exc:
        if not _ROWS_LOG_FAILED:
            _ROWS_LOG_FAILED.append(exc)
            warnings.warn(f"the rows log {settings.text('TOXLIB_ROWS_LOG')} could not be written "
                          f"({type(exc).__name__}: {exc}); this run goes on, and the next estimate charges the rows "
                          "it computes", RuntimeWarning, stacklevel=2)


def _log_rows(con, kind: str, key: str, rows: list[tuple[str, int]], source: str, config: dict | None,
              texts: bool) -> None:
    """Name ``rows`` in the usage log ``con`` (see ``note_usage``), their texts too when ``texts``, and close it."""
    try:
        shas = {text: text_sha(text) for text, _ in rows}
        with con:
            con.execute("BEGIN IMMEDIATE")
            con.executemany("INSERT OR IGNORE INTO used VALUES (?, ?, ?, ?, ?)",
                            [(kind, key, shas[text], idx, source) for text, idx in rows])
            if texts:
                con.executemany("INSERT OR IGNORE INTO texts VALUES (?, ?)", [(sha, t) for t, sha in shas.items()])
            if config is not None:
                con.execute("INSERT OR IGNORE INTO configs VALUES (?, ?, ?)",
                            (kind, key, json.dumps(config, sort_keys=True, default=str)))
            chapter = settings.text("TOXLIB_RECORD_CHAPTER")
            if chapter and rows:
                con.execute("INSERT OR IGNORE INTO chapters VALUES (?, ?, ?)", (kind, key, chapter))
    finally:
        con.close()
