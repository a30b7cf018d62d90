"""A file's sha256, the one helper every package that checks or names a file by its bytes uses.

``file_sha256(path)``: in, a path to a readable file; out, the sha256 of its bytes as 64 lowercase hex digits. The
file is read in 1 MiB blocks, so a multi-gigabyte model file never sits in memory whole.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

BLOCK = 1 << 20  # bytes read at a time


def file_sha256(path: str | Path) -> str:
    """sha256 (64 hex digits) of the bytes of the file at ``path``, read in ``BLOCK``-byte blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()
