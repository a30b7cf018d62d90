"""The book speaks to readers: no page talks about the project's own work process ("the issue", "issue 12", "this
machine") or shows a path of the machine that built it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "book").glob("*.md")) + sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
    (ROOT / "book").glob("*.ipynb"))
#: words of the project's work process, and the paths of this project's machines
INTERNAL = re.compile(r"\bthe issue\b|\bissue \d+|\bthis machine\b|\.\./shared\b|/work/|/root/|/home/\w+", re.I)


def page_text(path: Path) -> str:
    """What a reader can see of a page: a markdown file, or a notebook's markdown, code and text outputs."""
    if path.suffix == ".md":
        return path.read_text()
    parts = []
    for cell in json.loads(path.read_text())["cells"]:
        parts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            for kind in ("text/plain", "text/html", "text/markdown"):
                parts.append("".join(out.get("data", {}).get(kind, "")))
    return "\n".join(parts)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_speaks_of_the_work_process_or_shows_a_machine_path(path):
    found = sorted({m.group(0) for m in INTERNAL.finditer(page_text(path))})
    assert found == [], f"{path.name}: {found}"


@pytest.mark.parametrize("path", [p for p in PAGES if p.suffix == ".ipynb"], ids=lambda p: p.name)
def test_no_notebook_shows_a_warning_or_a_progress_bar(path):
    streams = [out for cell in json.loads(path.read_text())["cells"] for out in cell.get("outputs", [])
               if out.get("output_type") == "stream" and out.get("name") == "stderr"
               or "application/vnd.jupyter.widget-view+json" in out.get("data", {})]  # a tqdm widget
    streams = [{"text": out.get("text", "a progress widget")} for out in streams]
    assert streams == [], f"{path.name}: {[''.join(out['text'])[:200] for out in streams]}"


def test_the_pattern_catches_what_it_is_for():
    for text in ("the issue's targets", "see issue 30", "on this machine", "../shared/data", "/work/main/x"):
        assert INTERNAL.search(text), text
    assert not INTERNAL.search("the issues of bias; tissue; this machinery")


#: the methods page is a reference, not a log: at most about this many words (words as whitespace-separated tokens)
METHODS_WORDS = 3000


def test_the_methods_page_stays_a_reference():
    words = len((ROOT / "book" / "methods.md").read_text().split())
    assert words <= METHODS_WORDS * 1.02, f"methods.md: {words} words; a reference keeps to about {METHODS_WORDS}"
