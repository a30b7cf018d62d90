"""The data registry (data/sources.yaml) and fetching, on pooch: a file is fetched once into the local data directory
(``toxlib.store.paths.data_dir()``; ``TOXLIB_DATA_DIR`` moves it) under its mirror path ``owner/repo/path``.

``fetch`` hands pooch (``pooch.create``) the registry's sha256 of the file as stored; pooch checks a fetched file
against it before moving it into place and hashes a present file before every use (all 30 files, 12.6 MB, hash in
about 0.03 s), refusing one that changed (a download cut short, an edit, even one whose size and modification time
were put back) with ``ChecksumMismatchError`` instead of fetching it again behind the reader's back. Where the bytes
come from is ``Origin``, the downloader pooch calls: a copy from a mirror laid out as ``owner/repo/path``
(``--mirror`` or ``TOXLIB_DATA_MIRROR``), or the pinned URL read with requests and urllib3 retries. For a file whose
upstream bytes carry credentials (``drop_columns``) the origin's bytes are checked first (the mirror's against
``sha256``, the URL's against ``upstream_sha256``) and the columns dropped before anything is written, so the file
stored is ``stored_sha256``'s, whichever the origin. ``tests/data/test_registry.py`` tries each case offline (a
local mirror, a local HTTP server).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import pooch
import requests
import yaml
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from toxlib.common.digest import file_sha256
from toxlib.common.errors import ChecksumMismatchError, DataFormatError, DataUnavailableError, UnknownNameError
from toxlib.store import paths

pooch.get_logger().setLevel("WARNING")  # no line per fetch in a chapter's output; errors are raised, not logged

FETCH_HINT = (
    "Fetch it with `python -m toxlib data fetch {name}` while online, or copy it from a local mirror laid out as "
    "owner/repo/path: `python -m toxlib data fetch {name} --mirror DIR`, or set TOXLIB_DATA_MIRROR=DIR."
)


@dataclass(frozen=True)
class Source:
    """One data file of the registry.

    path: location under a mirror or the local data dir, ``owner/repo/path``.
    sha256: checksum of the accepted bytes (a mirror's, or the URL's when upstream_sha256 is absent);
    upstream_sha256: the URL's bytes where a mirror copy was scrubbed; drop_columns: CSV columns removed before
    storing (upstream credential leaks); stored_sha256: the stored file's bytes when columns are dropped.
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
    stored_sha256: str | None = None

    @property
    def url_sha256(self) -> str:
        return self.upstream_sha256 or self.sha256

    @property
    def kept_sha256(self) -> str:
        """The sha256 of the file as stored in the data directory."""
        return self.stored_sha256 or self.sha256


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


class Origin:
    """The downloader pooch calls for ``source``: the accepted bytes from ``mirror`` (a folder laid out as
    owner/repo/path) when given, else from the pinned URL (``retries`` HTTP retries with exponential back-off from
    ``backoff`` seconds), checked against the registry, with ``drop_columns`` dropped, written at pooch's temporary
    path with the mode a new file gets (the umask's default, not the temporary's 0600)."""

    def __init__(self, source: Source, mirror: Path | None, retries: int = 3, backoff: float = 0.5):
        self.source, self.mirror, self.retries, self.backoff = source, mirror, retries, backoff

    def __call__(self, url: str, output_file: str, _pooch) -> None:
        source = self.source
        if self.mirror is not None:
            origin = self.mirror / source.path
            if not origin.exists():
                raise DataUnavailableError(
                    f"{source.name!r} is not in the mirror {self.mirror} (looked for {origin}). "
                    "Point --mirror / TOXLIB_DATA_MIRROR at a directory laid out as owner/repo/path, "
                    "or unset it to download from the pinned URL."
                )
            data, expected, where = origin.read_bytes(), source.sha256, str(origin)
        else:
            data, expected, where = download(source, retries=self.retries, backoff=self.backoff), \
                source.url_sha256, url
        actual = sha256_of(data)
        if actual != expected:
            raise ChecksumMismatchError(
                f"checksum mismatch for {source.name!r} ({source.path}) from {where}: expected sha256 {expected}, "
                f"got {actual}. The copy is corrupt or not the pinned version; fetch it again from the pinned URL "
                "or a clean mirror. Nothing was written."
            )
        if source.drop_columns:
            data = drop_csv_columns(data, source.drop_columns)
        Path(output_file).write_bytes(data)
        os.chmod(output_file, paths.new_file_mode())


def fetch(
    name: str,
    mirror: str | Path | None = None,
    force: bool = False,
    reg: Registry | None = None,
    data_dir: Path | None = None,
    retries: int = 3,
    backoff: float = 0.5,
) -> Path:
    """Make one source present in the local data dir (``data_dir``, default ``paths.data_dir()``) and return its
    path.

    Copies from ``mirror`` (or $TOXLIB_DATA_MIRROR) when given, else downloads the pinned URL (``Origin``); pooch
    checks the stored bytes against the registry before they are moved into place, so nothing that differs is ever
    written. A file already present is hashed and refused with ChecksumMismatchError when it changed; ``force``
    fetches it again. retries/backoff: HTTP retries on connection errors, 429 and 5xx, with exponential back-off
    starting at ``backoff`` seconds.
    """
    source = (reg or registry())[name]
    root = Path(data_dir) if data_dir else paths.data_dir()
    dest = root / source.path
    if force:
        dest.unlink(missing_ok=True)
    mirror_root = Path(mirror).expanduser() if mirror else paths.mirror_dir()
    store = pooch.create(path=root, base_url="", registry={source.path: f"sha256:{source.kept_sha256}"},
                         urls={source.path: source.url}, allow_updates=False)
    present = dest.exists()
    try:
        return Path(store.fetch(source.path, downloader=Origin(source, mirror_root, retries, backoff)))
    except ValueError:  # pooch: the stored bytes are not the registry's
        if present:
            raise ChecksumMismatchError(
                f"{dest} changed since it was fetched: its sha256 is {file_sha256(dest)}, expected "
                f"{source.kept_sha256} for {source.name!r}. The file is truncated, edited or not the pinned "
                f"version; replace it with `python -m toxlib data fetch {source.name} --force` (add --mirror DIR "
                "offline)."
            ) from None
        raise ChecksumMismatchError(
            f"the file stored for {source.name!r} ({source.path}) with columns {list(source.drop_columns)} dropped "
            f"is not the registry's (stored_sha256 {source.kept_sha256}); the upstream file's layout changed. "
            "Nothing was written."
        ) from None


#: the names of every source ``ensure`` was asked for in this process, in order (``toxlib.chapters.compute`` compares
#: a chapter's with its declaration's ``sources``)
ENSURED: list[str] = []


def ensure(name: str) -> Path:
    """Path of a source in the local data dir, fetched on first use (mirror from $TOXLIB_DATA_MIRROR if set); the
    name is noted in ``ENSURED``."""
    path = fetch(name)
    ENSURED.append(name)
    return path
