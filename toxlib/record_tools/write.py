"""Write the sample record from a build's usage log: ``python -m toxlib record write LOG [--prune]``.

Input: the SQLite usage log a build wrote with ``TOXLIB_RECORD_USAGE=LOG`` (``toxlib.store.record_usage.note_usage``:
which rows of which keys it used, and whether each came from the record, the user's cache or was computed), the
user's caches (``toxlib.store.paths.cache_dir()``) and the record already in ``data/record/``.
Output: the record's files (layout in ``toxlib.store.record_reader``, SHA256SUMS included): every used row, its texts
once, and per key its config and provenance (``made_by``: the commit, machine, CPU and library releases that
computed its rows, with the date; rows read from a user cache made earlier are labelled so, with the commit the
cache row names, "unknown" for rows cached before rows named their commit; rows recomputed with the record off
replace the held ones, and, where the key keeps earlier entries or a row changed, their entry says how many rows
they replaced and how many of those changed: a note on that write, against the record as it was before it).
Trained files the log names (``toxlib.store.record_usage.note_artefact``) are copied into ``artefacts/``.
With ``--prune`` keys, rows and trained files the log does not name are dropped (after a full build: the rows no
chapter uses); without it they are kept (after one chapter's build: the rest of the record stays).
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import shutil
import sqlite3
from collections import defaultdict
from pathlib import Path

from toxlib.book_build.machine import kernel_facts
from toxlib.common.errors import ToxlibError
from toxlib.store import paths
from toxlib.store.record_reader import (
    KEY_COLUMNS,
    ROW_COLUMNS,
    ROW_KINDS,
    Record,
    file_of,
    key_chapters,
    record_dir,
    text_sha,
    write_csv_gz,
    write_sums,
)
from toxlib.store.record_usage import USAGE_SCHEMA


def read_usage(log: str | Path) -> tuple[dict, dict, dict, dict, dict, dict]:
    """({(kind, key): {(sha, idx): source}}, {sha: text}, {(kind, key): config}, {(kind, key): {chapter}},
    {chapter: build facts}, {artefact name: its path}) from a usage log."""
    if not Path(log).exists():
        raise ToxlibError(f"no usage log at {log}: build with TOXLIB_RECORD_USAGE={log} first, e.g. "
                          f"TOXLIB_RECORD_USAGE={log} bash scripts/build_book.sh")
    con = sqlite3.connect(log)
    try:
        con.executescript(USAGE_SCHEMA)  # a log from an older toxlib may lack a table: read it as empty
        used = defaultdict(dict)
        for kind, key, sha, idx, source in con.execute("SELECT kind, key, sha, sample_idx, source FROM used"):
            used[(kind, key)][(sha, idx)] = source
        texts = dict(con.execute("SELECT sha, text FROM texts"))
        configs = {(k, key): json.loads(c) for k, key, c in con.execute("SELECT kind, key, config FROM configs")}
        chapters = defaultdict(set)
        for kind, key, chapter in con.execute("SELECT kind, key, chapter FROM chapters"):
            chapters[(kind, key)].add(chapter)
        builds = {chapter: json.loads(f) for chapter, f in con.execute("SELECT chapter, facts FROM builds")}
        artefacts = dict(con.execute("SELECT name, path FROM artefacts"))
    finally:
        con.close()
    return dict(used), texts, configs, dict(chapters), builds, artefacts


def _cache_rows(kind: str, key: str, cache: Path) -> tuple[dict, dict]:
    """The user's cached rows of one key as {(sha, idx): values} in the record's column order (continuation text
    instead of its hash for generations), and {(sha, idx): the commit that computed the row, or None where the cache
    predates that column}; ({}, {}) when the cache file is absent."""
    files = {"generations": "generations.sqlite", "lm_scores": "lm_scores.sqlite", "scores": "scores.sqlite"}
    path = cache / files[kind]
    if not path.exists():
        return {}, {}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        columns = {row[1] for row in con.execute(f"PRAGMA table_info({kind})")}
        made_by = "made_by" if "made_by" in columns else "NULL"
        if kind == "generations":
            query = (f"SELECT prompt_sha, sample_idx, {made_by}, continuation, n_new_tokens, stopped "
                     "FROM generations WHERE run = ?")
            rows = [((sha, idx), who, (cont, n, int(stop))) for sha, idx, who, cont, n, stop
                    in con.execute(query, (key,))]
        elif kind == "lm_scores":
            query = f"SELECT text_sha, {made_by}, n_tokens, nll_sum FROM lm_scores WHERE model_key = ?"
            rows = [((sha, 0), who, (n, nll)) for sha, who, n, nll in con.execute(query, (key,))]
        else:
            query = f"SELECT text_sha, {made_by}, scores, error FROM scores WHERE scorer = ?"
            rows = [((sha, 0), who, (json.loads(v), e)) for sha, who, v, e in con.execute(query, (key,))]
    finally:
        con.close()
    return {k: values for k, _, values in rows}, {k: who for k, who, _ in rows}


def _record_rows(record: Record, kind: str, key: str) -> dict:
    """A key's rows in the record, in the shape ``_cache_rows`` gives."""
    rows = record.rows(kind, key)
    if kind == "generations":
        return {k: (cont, n, int(stop)) for k, (cont, n, stop) in rows.items()}
    return {(sha, 0): v for sha, v in rows.items()}


def _line(kind: str, sha: str, idx: int, values: tuple, texts: dict) -> list:
    """One CSV row of ``kind``; a generation's continuation goes into ``texts`` and is referenced by its hash."""
    if kind == "generations":
        continuation, n_new, stopped = values
        cont_sha = text_sha(continuation)
        texts[cont_sha] = continuation
        return [sha, idx, cont_sha, n_new, int(stopped)]
    if kind == "lm_scores":
        n_tokens, nll = values
        return [sha, n_tokens, repr(float(nll))]
    scores, error = values
    return [sha, json.dumps(scores, sort_keys=True), error or ""]


def write_record(log: str | Path, folder: str | Path | None = None, prune: bool = False,
                 cache: str | Path | None = None) -> dict:
    """Write the record from a usage log (see the module docstring). Returns {"keys", "rows", "texts", "bytes",
    "dropped_keys"}. Raises ToxlibError, naming the key, when a used row is in neither the record nor the cache."""
    folder = Path(folder) if folder else record_dir()
    cache = Path(cache) if cache else paths.cache_dir()
    used, logged_texts, configs, chapters, builds, artefacts = read_usage(log)
    old = Record(folder)
    here = {**{k: v for k, v in kernel_facts().items() if k != "samples"}, "date": datetime.date.today().isoformat()}
    texts: dict[str, str] = {}
    keys, kept = [], set()
    wanted = dict(used)
    if not prune:
        for (kind, key), row in old.keys.items():
            wanted.setdefault((kind, key), {})
    for (kind, key), rows in sorted(wanted.items()):
        have = _record_rows(old, kind, key)
        cached, commits = (_cache_rows(kind, key, cache) if any(s != "record" for s in rows.values())
                           else ({}, {}))
        lines, sources, cache_commits, computed_commits = [], defaultdict(int), defaultdict(int), defaultdict(int)
        replaced, changed = defaultdict(int), defaultdict(int)  # per made_by commit: record rows recomputed, moved
        names = sorted(rows) if prune or not have else sorted(set(rows) | set(have))
        for sha, idx in names:
            source = rows.get((sha, idx), "record")
            values = have.get((sha, idx)) if source == "record" else cached.get((sha, idx), have.get((sha, idx)))
            if values is None:
                raise ToxlibError(f"the usage log names a {kind} row of key {key[:40]} ({sha[:12]}, {idx}) that is "
                                  f"in neither the record ({folder}) nor the cache ({cache}); rebuild with the same "
                                  "TOXLIB_CACHE_DIR as the logged build")
            lines.append(_line(kind, sha, idx, values, texts))
            texts[sha] = next((t for t in (logged_texts.get(sha), old.texts().get(sha), texts.get(sha))
                               if t is not None), None)
            sources[source] += 1
            if source == "cache":
                cache_commits[commits.get((sha, idx)) or "unknown"] += 1
            elif source == "computed":  # the row's cache entry names the commit that computed it (made_by)
                computed_commits[commits.get((sha, idx))] += 1
            if source == "computed" and (sha, idx) in have:  # a recomputation (record off) replaces a held row
                replaced[commits.get((sha, idx))] += 1
                changed[commits.get((sha, idx))] += _line(kind, sha, idx, have[(sha, idx)], {}) != lines[-1]
        if not lines:
            continue
        made_by = list(old.keys.get((kind, key), {}).get("made_by", [])) if sources.get("record") else []
        # the facts of the chapter's run (the book's runner logs them), else of this process: the same checkout
        facts = next((builds[c] for c in sorted(chapters.get((kind, key), ())) if c in builds), here)
        for commit, count in sorted(computed_commits.items(), key=lambda item: str(item[0])):
            made_by.append({**facts, "rows": count, "how": "computed by the logged build",
                            **({"commit": commit} if commit else {}),
                            # beside kept entries, or where a row moved (not when a whole key is written again)
                            **(_replaced(replaced, changed, commit) if sources.get("record") or any(changed.values())
                               else {})})
        for commit, count in sorted(cache_commits.items()):
            made_by.append({**facts, "rows": count, "commit": commit,
                            "how": "read from the user cache of the machine that wrote the record; computed "
                                   "earlier, at that commit"})
        config = configs.get((kind, key)) or old.keys.get((kind, key), {}).get("config")
        write_csv_gz(folder / kind / f"{file_of(key)}.csv.gz", ROW_COLUMNS[kind], lines)
        old_chapters = set(key_chapters(old.keys.get((kind, key), {}))) if not prune else set()
        named = chapters.get((kind, key), set()) | old_chapters
        keys.append([kind, key, file_of(key), len(lines), "; ".join(sorted(named)),
                     json.dumps(config, sort_keys=True, default=str) if config is not None else "",
                     json.dumps(made_by, sort_keys=True, default=str)])
        kept.add((kind, file_of(key)))
    missing = sorted(sha for sha, text in texts.items() if text is None)
    if missing:
        raise ToxlibError(f"{len(missing)} texts of the used rows are not in the usage log or the record "
                          f"(first {missing[0][:12]}); write from the log of the build that used them")
    write_csv_gz(folder / "texts.csv.gz", ["text"], [[t] for t in texts.values()])
    for name, source in sorted(artefacts.items()):
        target = folder / "artefacts" / name
        if Path(source).resolve() != target.resolve():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    if prune and (folder / "artefacts").exists():
        for path in sorted(p for p in (folder / "artefacts").rglob("*") if p.is_file()):
            if path.relative_to(folder / "artefacts").as_posix() not in artefacts:
                path.unlink()
    _write_keys(folder, keys)
    dropped = 0
    for kind in ROW_KINDS:
        for path in sorted((folder / kind).glob("*.csv.gz")) if (folder / kind).exists() else []:
            if (kind, path.name.removesuffix(".csv.gz")) not in kept:
                path.unlink()
                dropped += 1
    write_sums(folder)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {"keys": len(keys), "rows": sum(k[3] for k in keys), "texts": len(texts), "bytes": size,
            "dropped_keys": dropped}


def _replaced(replaced: dict, changed: dict, commit) -> dict:
    """For a made_by entry of rows computed at ``commit``: how many of them replaced rows the record held before
    (a recomputation with the record off) and how many of those came out different; {} when none did. The earlier
    entries keep their counts: they say what those commits computed, some of which is now replaced."""
    if not replaced.get(commit):
        return {}
    return {"replaced_record_rows": replaced[commit], "of_which_changed": changed.get(commit, 0)}


def _write_keys(folder: Path, keys: list[list]) -> None:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(KEY_COLUMNS)
    writer.writerows(sorted(keys, key=lambda k: (k[0], k[1])))
    with paths.written_atomically(folder / "keys.csv") as partial:
        partial.write_text(buffer.getvalue(), encoding="utf-8")
