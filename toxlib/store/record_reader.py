"""The sample record: the rows the book's default build computed, shipped in ``data/record/`` and read, read-only,
before the user's caches.

Why it exists: a sampled number (a generation, its toxicity score, a sentence's NLL) costs CPU time and, in bf16,
depends on the CPU; the record keeps the rows the book's tables come from, computed once in float32, so a reader's
build shows the book's numbers without recomputing them, and ``python -m toxlib record audit`` re-checks a slice.

Layout (gzip CSV with a zero time stamp and sorted rows, so the same rows always give the same bytes):

  texts.csv.gz                      text: every prompt, continuation and scored text, stored once, sorted; the
                                    other files name a text by its sha256, which a reader computes (storing the
                                    hashes too took 60% of this file's bytes: 11.3 MB against 4.6 MB)
  generations/<file>.csv.gz         prompt_sha, sample_idx, continuation_sha, n_new_tokens, stopped (0/1)
  lm_scores/<file>.csv.gz           text_sha, n_tokens, nll_sum
  scores/<file>.csv.gz              text_sha, scores (JSON {attribute: value or null}), error ("" for none)
  keys.csv                          kind, key, file, rows, chapters ("; "-joined notebook stems that used the key),
                                    config (JSON), made_by (JSON list of provenance dicts)
  artefacts/<name>                  small trained files a chapter loads by a key of their training inputs (the PPLM
                                    discriminator, the vocabulary-shift weights), so a build uses the recorded ones
                                    and their rows instead of retraining them on another CPU; for the DAPT/ATCON
                                    adaptations, too large to keep, their training metadata (adapted/<name>.json);
                                    and deterministic tables a build would spend minutes recomputing, as gzip CSV
                                    (frames/<kind>-<key>.csv.gz: the generation chapter's nucleus statistics)
  SHA256SUMS                        the sha256 of every file above (``sha256sum -c SHA256SUMS`` checks them too)

Every file is checked against SHA256SUMS each time a process first reads it (the whole record hashes in about
0.02 s), so a file edited after the record was written, whatever its size and time stamp, is refused with
``RecordIntegrityError`` instead of being read. ``audits.csv`` (the audit history, appended by each audit) is the one
file outside SHA256SUMS: no number is read from it.

A key is what the cache keys a row by (a generation run's ``stable_hash``, an NLL model key, "<scorer>@<version>");
``file`` is ``sha256(key)[:16]``: no file path enters a key. Floats are written with Python's ``repr``, which reads
back to the same bits.

Switches: ``TOXLIB_RECORD=off`` (``--no-record`` on the CLI) ignores the record, so everything is recomputed or read
from the user's caches; ``TOXLIB_RECORD_DIR`` reads another folder. ``TOXLIB_RECORD_USAGE=<file>`` names, in a
SQLite file, every row a store returned or stored (kind, key, text sha, sample index, and whether it came from the
record, the cache, or was computed), so ``python -m toxlib record write`` keeps exactly the rows a build used.

Written by hand because no library keeps a read-only, content-addressed layer in front of a SQLite cache; the
files themselves are plain CSV that pandas or any spreadsheet reads.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import threading
import warnings
from pathlib import Path

from toxlib.common import settings
from toxlib.common.digest import file_sha256
from toxlib.common.errors import ToxlibError
from toxlib.common.provenance import uncommitted_in
from toxlib.store import paths

ROW_KINDS = ("generations", "lm_scores", "scores")
ROW_COLUMNS = {
    "generations": ["prompt_sha", "sample_idx", "continuation_sha", "n_new_tokens", "stopped"],
    "lm_scores": ["text_sha", "n_tokens", "nll_sum"],
    "scores": ["text_sha", "scores", "error"],
}
KEY_COLUMNS = ["kind", "key", "file", "rows", "chapters", "config", "made_by"]
csv.field_size_limit(2**31 - 1)


def record_dir() -> Path:
    """``TOXLIB_RECORD_DIR``, or ``<project>/data/record``."""
    return settings.path("TOXLIB_RECORD_DIR") or paths.companion_root() / "data" / "record"


def record_enabled() -> bool:
    """False when ``TOXLIB_RECORD`` is "off", "0", "false" or "no"."""
    return settings.flag("TOXLIB_RECORD")


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_of(key: str) -> str:
    """The file stem that holds a key's rows: sha256(key)[:16]."""
    return text_sha(key)[:16]


SUMS = "SHA256SUMS"
#: files of a record folder outside SHA256SUMS: the sums themselves and the audit history
UNSUMMED = {SUMS, "audits.csv"}


class RecordChangedWarning(UserWarning):
    """The sample record differs from the commit of its checkout (``Record.changed_files``)."""


class RecordIntegrityError(ToxlibError):
    """A record file does not match SHA256SUMS (edited or damaged after the record was written), has no sum, is
    missing, cannot be read, or holds another number of rows than keys.csv says."""


#: the fix every RecordIntegrityError names
RESTORE = ("Restore the record (git checkout -- data/record) or build without it (--no-record, or "
           "TOXLIB_RECORD=off)")


def read_sums(folder: Path) -> dict[str, str]:
    """{path relative to the folder: sha256} from ``folder/SHA256SUMS``; {} when there is none."""
    path = folder / SUMS
    if not path.exists():
        return {}
    sums = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        sums[name] = digest
    return sums


def write_sums(folder: Path) -> None:
    """Write ``folder/SHA256SUMS`` for every file under it but ``UNSUMMED`` (sorted, ``sha256sum`` format)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.relative_to(folder).as_posix() not in UNSUMMED)
    lines = [f"{file_sha256(p)}  {p.relative_to(folder).as_posix()}" for p in files]
    with paths.written_atomically(folder / SUMS) as partial:
        Path(partial).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def checked_bytes(folder: Path, path: Path, sums: dict[str, str]) -> bytes:
    """The bytes of a record file after checking them against ``sums`` (``read_sums``); RecordIntegrityError, naming
    the file and the fixes, when they differ or the file has no sum."""
    try:
        data = path.read_bytes()
    except OSError as exc:  # deleted, unreadable, a folder
        raise RecordIntegrityError(f"the sample record's file {path} cannot be read ({exc.strerror or exc}). "
                                   f"{RESTORE}") from None
    name = path.relative_to(folder).as_posix()
    if sums.get(name) != hashlib.sha256(data).hexdigest():
        problem = "has no checksum in" if name not in sums else "does not match its checksum in"
        raise RecordIntegrityError(
            f"the sample record's file {path} {problem} {folder / SUMS}: it was edited or damaged after the record "
            f"was written. {RESTORE}")
    return data


def read_csv_gz(path: Path, data: bytes | None = None) -> list[dict]:
    """The rows of a gzip CSV as dicts of strings (from ``data``, its bytes, when given); RecordIntegrityError,
    naming the file and the fix, when it is not gzip-compressed UTF-8 CSV."""
    try:
        raw = gzip.decompress(data if data is not None else path.read_bytes()).decode("utf-8")
        return list(csv.DictReader(io.StringIO(raw, newline="")))
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:  # gzip.BadGzipFile is an OSError
        raise RecordIntegrityError(f"the sample record's file {path} cannot be read ({type(exc).__name__}: {exc}). "
                                   f"{RESTORE}") from None


def write_csv_gz(path: Path, columns: list[str], rows: list[list]) -> None:
    """Write rows (sorted) as gzip CSV with a zero time stamp, atomically (a temporary file renamed over ``path``)."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)  # a lone \r is not quoted otherwise
    writer.writerow(columns)
    writer.writerows(sorted(rows, key=lambda r: [str(v) for v in r]))
    with paths.written_atomically(path) as partial:
        partial.write_bytes(gzip_bytes(buffer.getvalue().encode("utf-8")))


def gzip_bytes(data: bytes) -> bytes:
    """``data`` gzipped with no time stamp or file name in the header, so the same data gives the same bytes
    wherever the same zlib compresses it (the record's files, ``toxlib.store.artefacts.artefact_frame``'s)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as zipped:
        zipped.write(data)
    return buffer.getvalue()


def key_chapters(entry: dict) -> list[str]:
    """The notebook stems that used a key, from its keys.csv entry's ``"; "``-joined ``chapters`` field ([] if none)."""
    return [c for c in (entry.get("chapters") or "").split("; ") if c]


def read_keys(folder: Path, data: bytes | None = None) -> list[dict]:
    """keys.csv as dicts (config and made_by parsed from JSON, rows as int); [] when the record has none. ``data``:
    the file's bytes, already read (and checked)."""
    path = folder / "keys.csv"
    if data is None and not path.exists():
        return []
    text = (data if data is not None else path.read_bytes()).decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for row in rows:
        row["rows"] = int(row["rows"])
        row["config"] = json.loads(row["config"]) if row["config"] else None
        row["made_by"] = json.loads(row["made_by"]) if row["made_by"] else []
    return rows


class Record:
    """A read-only view of a record folder. Files are read on first use and kept in memory (the record is tens
    of MB at most); lookups take texts and return the stored values, as the caches' ``lookup`` do."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.sums = read_sums(self.folder)
        keys = self.folder / "keys.csv"
        data = checked_bytes(self.folder, keys, self.sums) if keys.exists() else None
        self.keys = {(row["kind"], row["key"]): row for row in read_keys(self.folder, data)}
        self._texts: dict[str, str] | None = None
        self._rows: dict[tuple[str, str], dict] = {}
        self._changed: list[str] | None = None
        self._lock = threading.Lock()

    def _checked(self, path: Path) -> bytes:
        return checked_bytes(self.folder, path, self.sums)

    def changed_files(self) -> list[str]:
        """The record's files that differ from the commit of the checkout holding it (paths relative to that
        checkout; ``toxlib.common.provenance.uncommitted_in``; the audit history aside): rows read from such a
        file are not the committed record's, whatever SHA256SUMS says. Asked once (one ``git`` call)."""
        with self._lock:
            if self._changed is None:
                self._changed = uncommitted_in(self.folder, ignore=("audits.csv",))
            return self._changed

    def holds(self, kind: str, key: str) -> bool:
        return (kind, key) in self.keys

    def texts(self) -> dict[str, str]:
        """{sha256: text} of every text the record holds ({} for a record without keys)."""
        with self._lock:
            if self._texts is None:
                path = self.folder / "texts.csv.gz"
                if not self.keys and not path.exists():
                    self._texts = {}
                else:
                    rows = read_csv_gz(path, self._checked(path))
                    if rows and "text" not in rows[0]:
                        raise RecordIntegrityError(f"the sample record's file {path} has no text column. {RESTORE}")
                    self._texts = {text_sha(r["text"]): r["text"] for r in rows}
            return self._texts

    def rows(self, kind: str, key: str) -> dict:
        """The parsed rows of one key: generations {(prompt_sha, idx): (continuation, n_new, stopped)}, lm_scores
        {sha: (n_tokens, nll_sum)}, scores {sha: ({attribute: value or None}, error or None)}; {} if not held."""
        held = self._held(kind, key)
        if kind != "scores":
            return held
        return {sha: _decoded((kind, key), row) for sha, row in held.items()}

    def _held(self, kind: str, key: str) -> dict:
        """The rows of one key as ``rows`` gives them, but a score row's attributes still as their JSON text: a
        score key holds every text its scorer scored for the book (tens of thousands), and a lookup asks for a few
        of them, so each is decoded when asked for (``lookup``), not all when the file is read."""
        if not self.holds(kind, key):
            return {}
        with self._lock:
            cached = self._rows.get((kind, key))
        if cached is not None:
            return cached
        entry = self.keys[(kind, key)]
        path = self.folder / kind / f"{entry['file']}.csv.gz"
        raw = read_csv_gz(path, self._checked(path))
        try:
            if kind == "generations":
                texts = self.texts()
                parsed = {(r["prompt_sha"], int(r["sample_idx"])): (texts[r["continuation_sha"]],
                                                                    int(r["n_new_tokens"]), r["stopped"] == "1")
                          for r in raw}
            elif kind == "lm_scores":
                parsed = {r["text_sha"]: (int(r["n_tokens"]), float(r["nll_sum"])) for r in raw}
            else:
                parsed = {r["text_sha"]: (r["scores"], r["error"] or None) for r in raw}
        except (KeyError, ValueError, TypeError) as exc:  # a missing column or text, a value that does not parse
            raise RecordIntegrityError(f"the sample record's file {path} holds a row that cannot be read "
                                       f"({type(exc).__name__}: {exc}). {RESTORE}") from None
        if len(raw) != entry["rows"] or len(parsed) != entry["rows"]:
            raise RecordIntegrityError(
                f"the sample record's file {path} holds {len(raw):,} rows ({len(parsed):,} distinct), but keys.csv "
                f"says key {key!r} has {entry['rows']:,}. {RESTORE}")
        with self._lock:
            self._rows[(kind, key)] = parsed
        return parsed

    def lookup(self, kind: str, key: str, texts: list[str]) -> dict:
        """The held rows of ``key`` for these texts, keyed as the caches key their answers: generations
        {(prompt, idx): row}, the others {text: row} (a score row's attributes decoded here)."""
        held = self._held(kind, key)
        if not held:
            return {}
        if kind == "generations":
            by_sha = {text_sha(t): t for t in texts}
            return {(by_sha[sha], idx): row for (sha, idx), row in held.items() if sha in by_sha}
        found = {t: held[sha] for t in texts if (sha := text_sha(t)) in held}
        if kind == "scores":
            return {t: _decoded((kind, key), row) for t, row in found.items()}
        return found


def _decoded(where: tuple[str, str], row: tuple[str, str | None]) -> tuple[dict, str | None]:
    """A score row (attributes as JSON text, error) with its attributes decoded; RecordIntegrityError naming the key
    when the text is not JSON."""
    try:
        return json.loads(row[0]), row[1]
    except ValueError as exc:
        raise RecordIntegrityError(f"the sample record's {where[0]} key {where[1]!r} holds a row whose scores cannot "
                                   f"be read ({exc}). {RESTORE}") from None


def verify(folder: str | Path) -> dict:
    """Check a whole record folder: every file against SHA256SUMS (missing, without a sum, or with another hash),
    every key's file against keys.csv (present, readable, holding the rows it says), and which files differ from
    the checkout's commit. Returns {"files": files checked, "keys": keys whose rows were read, "rows": rows read,
    "problems": [one line each], "changed": [files differing from the commit]}. Reads every file once."""
    folder = Path(folder)
    sums, problems, bad = read_sums(folder), [], set()
    if not (folder / SUMS).exists():
        problems.append(f"{SUMS} is missing: no file can be checked")
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - UNSUMMED
    for name in sorted(set(sums) - present):
        problems.append(f"{name}: listed in {SUMS} but missing")
        bad.add(name)
    for name in sorted(present):
        digest = file_sha256(folder / name)
        if sums.get(name) != digest:
            problems.append(f"{name}: {'has no checksum' if name not in sums else 'does not match its checksum'}")
            bad.add(name)
    keys = rows = 0
    try:
        record = Record(folder) if "keys.csv" not in bad else None
    except (RecordIntegrityError, KeyError, ValueError) as exc:
        problems.append(f"keys.csv cannot be read ({type(exc).__name__}: {exc})")
        record = None
    for (kind, key), entry in sorted(record.keys.items()) if record is not None else []:
        name = f"{kind}/{entry['file']}.csv.gz"
        if name in bad or (kind == "generations" and "texts.csv.gz" in bad):
            continue
        if name not in present:
            problems.append(f"{name}: keys.csv lists it for key {key!r}, but it is missing")
            continue
        try:
            rows += len(record.rows(kind, key))
            keys += 1
        except RecordIntegrityError as exc:
            problems.append(f"{name}: {str(exc).split(': ', 1)[-1].removesuffix(RESTORE).strip()}")
    return {"files": len(present), "keys": keys, "rows": rows, "problems": problems,
            "changed": record.changed_files() if record is not None else []}


_OPEN: dict[Path, Record] = {}
_OPEN_LOCK = threading.Lock()


def open_record() -> Record | None:
    """The record the caches consult (one per folder per process), or None when it is switched off or the folder
    has no ``keys.csv`` (a checkout without a record, or toxlib installed outside the companion's checkout)."""
    if not record_enabled():
        return None
    try:
        folder = record_dir()
    except Exception:  # toxlib installed outside the checkout: no record to read
        return None
    if not (folder / "keys.csv").exists():
        return None
    with _OPEN_LOCK:
        stamp = (folder / "keys.csv").stat().st_mtime_ns
        record = _OPEN.get(folder)
        if record is None or getattr(record, "_stamp", None) != stamp:
            record = Record(folder)
            record._stamp = stamp
            _OPEN[folder] = record
            changed = record.changed_files()
            if changed:
                warnings.warn(RecordChangedWarning(
                    f"the sample record in {folder} differs from its commit in {len(changed)} file(s) "
                    f"({', '.join(changed[:4])}{' ...' if len(changed) > 4 else ''}): rows read from it are not the "
                    "committed record's, and run records say +dirty. Restore it (git checkout -- data/record) or "
                    "commit the new record"), stacklevel=2)
        return record
