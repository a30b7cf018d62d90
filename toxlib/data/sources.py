"""The data registry (data/sources.yaml) and fetching: download by URL or copy from a mirror, verify sha256.

A file is fetched once into the local data directory (``toxlib.store.paths.data_dir()``) under its mirror path
``owner/repo/path``. Loaders call :func:`ensure`, which fetches lazily on first use. A file already present is
hashed before every use and refused when its checksum differs (a download cut short, an edit, even one whose size and
modification time were put back with ``touch -r``): all 30 files of the mirror, 12.6 MB, hash in 0.03 s. A stamp
beside each file (``.<name>.verified.json``) keeps the sha256 of the bytes that were verified, the reference for a
file stored with columns dropped (whose bytes differ from the registry's by design).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import requests
import yaml
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from toxlib.common.errors import ChecksumMismatchError, DataFormatError, DataUnavailableError, UnknownNameError
from toxlib.store import paths

FETCH_HINT = (
    "Fetch it with `python -m toxlib data fetch {name}` while online, or copy it from a local mirror laid out as "
    "owner/repo/path: `python -m toxlib data fetch {name} --mirror DIR`, or set TOXLIB_DATA_MIRROR=DIR."
)


@dataclass(frozen=True)
class Source:
    """One data file of the registry.

    path: location under a mirror or the local data dir, ``owner/repo/path``.
    sha256: checksum of accepted bytes; upstream_sha256: the URL's bytes where a mirror copy was scrubbed.
    drop_columns: CSV columns removed before storing (upstream credential leaks).
    """

    name: str
    description: str
    path: str
    repo: str
    commit: str
    url: str
    bytes: int
    sha256: str
    license: str
    citation: str
    upstream_sha256: str | None = None
    drop_columns: tuple[str, ...] = field(default_factory=tuple)

    @property
    def url_sha256(self) -> str:
        return self.upstream_sha256 or self.sha256


class Registry:
    """The sources of one registry file, by name."""

    def __init__(self, sources: list[Source]):
        self.sources = {s.name: s for s in sources}

    @classmethod
    def from_file(cls, path: str | Path) -> "Registry":
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return cls([Source(**{**e, "drop_columns": tuple(e.get("drop_columns", ()))}) for e in raw["sources"]])

    def __getitem__(self, name: str) -> Source:
        try:
            return self.sources[name]
        except KeyError:
            raise UnknownNameError(
                f"unknown data source {name!r}; known sources: {', '.join(sorted(self.sources))}"
            ) from None

    def names(self) -> list[str]:
        return list(self.sources)


_default_registry: Registry | None = None


def registry() -> Registry:
    """The project's registry (data/sources.yaml), read once."""
    global _default_registry
    if _default_registry is None:
        _default_registry = Registry.from_file(paths.registry_file())
    return _default_registry


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def stamp_path(dest: Path) -> Path:
    """The verified-file stamp of a data file: a hidden JSON file beside it."""
    return dest.with_name(f".{dest.name}.verified.json")


def _write_stamp(dest: Path, source: Source, stored_sha256: str) -> None:
    """Record that ``dest`` (as it is now on disk) holds verified bytes of ``source``."""
    st = dest.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": stored_sha256, "registry_sha256": source.sha256}
    _atomic_write(stamp_path(dest), json.dumps(stamp).encode())


def verify_present(source: Source, dest: Path) -> None:
    """Check a data file already in the data dir before it is used.

    The file is hashed every time (size and modification time can be restored after an edit; the files are small):
    a match is stamped and accepted; a mismatch raises ChecksumMismatchError naming the file and the command that
    replaces it. A file stored with columns dropped (its bytes differ from the registry's by design) is checked
    against its own stamp.
    """
    try:
        stamp = json.loads(stamp_path(dest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamp = None
    if not isinstance(stamp, dict) or stamp.get("registry_sha256") != source.sha256:
        stamp = None
    expected = stamp.get("sha256") if (stamp and source.drop_columns) else (None if source.drop_columns else
                                                                             source.sha256)
    actual = sha256_of_file(dest)
    if actual == expected and stamp and stamp.get("sha256") == actual:
        return  # verified as stamped: nothing to write
    if actual != expected:
        raise ChecksumMismatchError(
            f"{dest} changed since it was fetched: its sha256 is {actual}, expected "
            f"{expected or 'unknown (no stamp)'} for {source.name!r}. The file is truncated, edited or not the pinned "
            "version; replace it with "
            f"`python -m toxlib data fetch {source.name} --force` (add --mirror DIR offline)."
        )
    _write_stamp(dest, source, actual)


def http_session(retries: int = 3, backoff: float = 0.5) -> requests.Session:
    """A requests session that retries connection errors, 429 and 5xx with exponential back-off."""
    retry = Retry(
        total=retries,
        backoff_factor=backoff,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
    )
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    return session


def download(source: Source, timeout: tuple[float, float] = (5.0, 60.0), retries: int = 3,
             backoff: float = 0.5) -> bytes:
    """The bytes at ``source.url``; raises DataUnavailableError (with the fetch hint) when it cannot be reached."""
    try:
        with http_session(retries=retries, backoff=backoff) as session:
            response = session.get(source.url, timeout=timeout)
            response.raise_for_status()
            return response.content
    except requests.RequestException as exc:
        raise DataUnavailableError(
            f"could not download {source.name!r} from {source.url}: {type(exc).__name__}: {exc}. "
            + FETCH_HINT.format(name=source.name)
        ) from exc


def drop_csv_columns(data: bytes, columns: tuple[str, ...]) -> bytes:
    """Remove the named columns of a CSV file, leaving every other field's text as it was."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    if not rows:
        raise DataFormatError("cannot drop columns from an empty CSV file")
    absent = [c for c in columns if c not in rows[0]]
    if absent:
        # a renamed credential column must not slip through unnoticed
        raise DataFormatError(f"column(s) {absent} to drop are not in the CSV header {rows[0]}; update the registry")
    keep = [i for i, col in enumerate(rows[0]) if col not in columns]
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([row[i] for i in keep if i < len(row)])
    return out.getvalue().encode("utf-8")


def _atomic_write(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        paths.replace_keeping_mode(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch(
    name: str,
    mirror: str | Path | None = None,
    force: bool = False,
    reg: Registry | None = None,
    data_dir: Path | None = None,
    retries: int = 3,
    backoff: float = 0.5,
) -> Path:
    """Make one source present in the local data dir and return its path.

    Copies from ``mirror`` (or $TOXLIB_DATA_MIRROR) when given, else downloads the pinned URL.
    The bytes are checked against the registry's sha256 before anything is written; a file already present is
    checked by ``verify_present`` (ChecksumMismatchError when it changed). retries/backoff: HTTP retries on
    connection errors, 429 and 5xx, with exponential back-off starting at ``backoff`` seconds.
    """
    source = (reg or registry())[name]
    dest = (data_dir or paths.data_dir()) / source.path
    if dest.exists() and not force:
        verify_present(source, dest)
        return dest
    mirror_root = Path(mirror).expanduser() if mirror else paths.mirror_dir()
    if mirror_root is not None:
        origin = mirror_root / source.path
        if not origin.exists():
            raise DataUnavailableError(
                f"{source.name!r} is not in the mirror {mirror_root} (looked for {origin}). "
                "Point --mirror / TOXLIB_DATA_MIRROR at a directory laid out as owner/repo/path, "
                "or unset it to download from the pinned URL."
            )
        data, expected, where = origin.read_bytes(), source.sha256, str(origin)
    else:
        data, expected, where = download(source, retries=retries, backoff=backoff), source.url_sha256, source.url
    actual = sha256_of(data)
    if actual != expected:
        raise ChecksumMismatchError(
            f"checksum mismatch for {source.name!r} ({source.path}) from {where}: expected sha256 {expected}, "
            f"got {actual}. The copy is corrupt or not the pinned version; fetch it again from the pinned URL "
            "or a clean mirror. Nothing was written."
        )
    if source.drop_columns:
        data = drop_csv_columns(data, source.drop_columns)
    _atomic_write(dest, data)
    _write_stamp(dest, source, sha256_of(data))
    return dest


def ensure(name: str) -> Path:
    """Path of a source in the local data dir, fetched on first use (mirror from $TOXLIB_DATA_MIRROR if set)."""
    return fetch(name)
