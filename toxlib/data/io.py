"""Readers shared by the loaders: JSON lines and JSON arrays with file/line context in every error."""

from __future__ import annotations

import json
from pathlib import Path

from toxlib.common.errors import DataFormatError


def _malformed(path: Path, lineno: int, what: str, source_name: str, exc: json.JSONDecodeError) -> DataFormatError:
    return DataFormatError(
        f"{path}:{lineno}: {what} in {source_name!r} ({exc.msg} at column {exc.colno}). "
        f"Fetch a clean copy: python -m toxlib data fetch {source_name} --force"
    )


def read_jsonl(path: Path, source_name: str) -> list[dict]:
    """Objects of a JSON-lines file, one per non-blank line.

    Raises DataFormatError naming the file and 1-based line number of the first malformed line;
    no line is skipped silently.
    """
    records = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _malformed(path, lineno, "malformed JSON line", source_name, exc) from None
            if not isinstance(obj, dict):
                raise DataFormatError(
                    f"{path}:{lineno}: expected a JSON object in {source_name!r}, got {type(obj).__name__}")
            records.append(obj)
    return records


def read_json_array(path: Path, source_name: str) -> list[dict]:
    """Objects of a file holding one JSON array; errors give the file, line and column."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise _malformed(path, exc.lineno, "malformed JSON", source_name, exc) from None
    if not isinstance(data, list):
        raise DataFormatError(f"{path}: expected a JSON array in {source_name!r}, got {type(data).__name__}")
    return data


def read_lines(path: Path) -> list[str]:
    """Lines of a text file without their line endings (a final empty line is not a record)."""
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]
