"""The README's reading path ("follow one number") names files and functions that exist, so a newcomer who follows
it from rtp_prompted's Table 2 to the record's rows opens the right files; and the README stays short."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return names | {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def test_every_file_and_function_of_the_reading_path_exists():
    rows = [line for line in _section("How the code is laid out").splitlines() if line.startswith("| ")][1:]
    assert len(rows) >= 6
    missing = []
    for row in rows:
        folder = next(iter(re.findall(r"`(toxlib/[\w/]+/|notebooks/[\w.]+|data/record/)`", row)), None)
        assert folder and (ROOT / folder).exists(), row
        for file, names in re.findall(r"`([\w/]+\.py): ([\w, .]+)`", row):
            path = ROOT / file if file.startswith("toxlib/") else ROOT / folder / file
            if not path.is_file():
                missing.append(str(path.relative_to(ROOT)))
                continue
            missing += [f"{file}: {n}" for n in re.split(r",\s*", names) if n.split(".")[0] not in _defined(path)]
    assert missing == []


def test_the_readme_is_short():
    assert len(README.split()) <= 1250
