"""How much of a report chapter's work the user's cache already holds, so the estimate charges only the rest.

Which rows a chapter asks for is known only once it runs: its keys come from its compute function. So each chapter
a report runs names the rows it asks for, as they are served, in a log of its own beside the cache it fills
(``rows_log``: ``<TOXLIB_CACHE_DIR>/report-rows/<chapter>-<hash>.sqlite``, one per model, values and device; the
usage log's form, ``toxlib.store.record_usage``, through ``TOXLIB_ROWS_LOG``). A run cut short has then named every
row it had reached. Before the next run of the same chapter with the same model (its ``model_identity``), values and
device, in any report folder, ``cached_work`` counts the logged rows the user's cache holds, in the units of
``ChapterWork``:

- a generation row: its key's ``max_new_tokens`` (what the chapter's work charges per row; its own token count
  when the key names none), as Self-Debiasing tokens, PPLM tokens or generated tokens by its key's steering;
- a sentence NLL row: its tokens read; a score row: one text scored.

Rows the sample record served are neither logged nor counted (``toxlib.reportcard.held`` charges them nothing
already); rows the book's own build or a chapter run outside a report put in the cache are not counted either (no
log names them), though the run reads them back all the same. A cache cleared with its folder takes the logs with
it. Written by hand: it joins the log with the cache's SQLite files, which no library knows.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

from toxlib.chapters.report_needs import ChapterWork
from toxlib.store import paths
from toxlib.store.keys import stable_hash

#: per kind: the cache file and table, the columns a log row joins on (key, text hash, and the sample index for
#: generations), and what a row counts (its tokens, or 1 for a score)
CACHE_TABLES = {"generations": ("generations.sqlite", "generations", "t.run = u.key AND t.prompt_sha = u.sha "
                                "AND t.sample_idx = u.sample_idx", "t.n_new_tokens"),
                "lm_scores": ("lm_scores.sqlite", "lm_scores", "t.model_key = u.key AND t.text_sha = u.sha",
                              "t.n_tokens"),
                "scores": ("scores.sqlite", "scores", "t.scorer = u.key AND t.text_sha = u.sha", "1")}
#: generation units by the steering its key names (the rest are ``gen_tokens``)
STEERED_UNITS = {"self-debiasing": "sd_tokens", "pplm": "pplm_tokens"}


def rows_log(stem: str, model: str, values: dict, device: str) -> Path:
    """The log of the rows chapter ``stem`` asks for, in a report of ``model`` (its ``model_identity``) at
    ``values`` on ``device``: ``<cache>/report-rows/<stem>-<hash>.sqlite``, so another model or other values never
    read it."""
    return paths.cache_dir() / "report-rows" / f"{stem}-{stable_hash([model, values, device])[:16]}.sqlite"


def cached_work(log: str | Path, cache: str | Path | None = None) -> tuple[ChapterWork, int]:
    """(the work of the rows ``log`` names that the user's cache (``cache``; default ``paths.cache_dir()``) holds,
    in ``ChapterWork`` units (module docstring), how many such rows). Nothing when the log does not exist or cannot
    be read (a damaged file): the estimate then charges every row."""
    work, rows = ChapterWork(), 0
    if not Path(log).is_file():
        return work, rows
    cache = Path(cache) if cache else paths.cache_dir()
    try:
        with contextlib.closing(sqlite3.connect(_read_only(log), uri=True)) as con:
            configs = {(kind, key): json.loads(text) for kind, key, text in con.execute("SELECT * FROM configs")}
            for kind, (file, table, joined, counted) in CACHE_TABLES.items():
                if not (cache / file).is_file():
                    continue
                con.execute("ATTACH DATABASE ? AS c", (_read_only(cache / file),))
                try:
                    found = con.execute(f"SELECT u.key, COUNT(*), SUM({counted}) FROM used u JOIN c.{table} t ON "
                                        f"{joined} WHERE u.kind = ? AND u.source != 'record' GROUP BY u.key",
                                        (kind,)).fetchall()
                finally:
                    con.execute("DETACH DATABASE c")
                for key, n, units in found:
                    rows += n
                    _add(work, kind, n, units or 0, configs.get((kind, key)) or {})
    except sqlite3.Error:
        return ChapterWork(), 0
    return work, rows


def _read_only(path: str | Path) -> str:
    """A SQLite URI that opens ``path`` read-only, whatever characters its name holds."""
    return f"{Path(path).resolve().as_uri()}?mode=ro"


def _add(work: ChapterWork, kind: str, n: int, units: float, config: dict) -> None:
    """Add ``n`` cached rows of ``kind`` (with ``units``: their tokens, or their count for scores) to ``work``."""
    if kind == "scores":
        work.scored_texts += n
    elif kind == "lm_scores":
        work.read_tokens += units
    else:
        per_row = (config.get("decoding") or {}).get("max_new_tokens")
        field = STEERED_UNITS.get((config.get("steering") or {}).get("name"), "gen_tokens")
        setattr(work, field, getattr(work, field) + (n * per_row if per_row else units))


def left_after(work: ChapterWork, cached: ChapterWork) -> ChapterWork:
    """``work`` less ``cached``, unit by unit, never below nothing."""
    return ChapterWork(**{name: max(0.0, value - getattr(cached, name)) for name, value in vars(work).items()})
