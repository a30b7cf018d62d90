"""The book's table of contents (``_toc.yml``), made from the chapters' declarations and the prose pages.

Jupyter Book reads ``_toc.yml`` as a file, so the file stays; what it lists is not kept by hand. Each chapter's
declaration (``toxlib.chapters``) says its part and its place (``part``, ``order``, ``page``); the pages of prose
that are no chapter say theirs here (``PROSE``). ``toc_text()`` is the file's text; ``python -m toxlib book``
writes it before it builds (``write_toc``), so a chapter added by its declaration alone is in the book, and a test
holds the committed file to it.
"""

from __future__ import annotations

from pathlib import Path

from toxlib.chapters import PARTS, chapters

ROOT_PAGE = "book/intro"
#: the pages of prose: (part, page without extension, order among the part's pages and chapters)
PROSE = (("Using this book", "book/rerun", 5), ("Using this book", "book/instructors", 20),
         ("Using this book", "book/methods", 30), ("Using this book", "book/settings", 40),
         ("Using this book", "book/perspective_endpoint", 50), ("Using this book", "book/replacing_perspective", 60),
         ("Using this book", "book/paper_scale", 70), ("Using this book", "book/contributing", 80),
         ("Summary", "book/bibliography", 910),
         ("Summary", "book/cite", 920))
#: what each part adds to its caption line: the chapters are numbered, so their figures and exercises are too
NUMBERED = {"Chapters": ('    numbered: 1  # "6. SASS ...": figures and exercises numbered per chapter (Fig. 6.1, '
                         'Exercise 6.2)\n')}


def toc_pages() -> dict[str, list[str]]:
    """{part: its pages without extension, in order}: the prose pages and the chapters' notebooks merged by
    order."""
    entries = [(part, order, page) for part, page, order in PROSE]
    entries += [(c.part, c.order, str(Path(c.page).with_suffix(""))) for c in chapters()]
    return {part: [page for _, _, page in sorted(e for e in entries if e[0] == part)] for part in PARTS}


def toc_text() -> str:
    """The text of ``_toc.yml``."""
    lines = ["format: jb-book\n", f"root: {ROOT_PAGE}\n", "parts:\n"]
    for part, pages in toc_pages().items():
        if not pages:
            continue
        lines.append(f"  - caption: {part}\n")
        lines.append(NUMBERED.get(part, ""))
        lines.append("    chapters:\n")
        lines += [f"      - file: {page}\n" for page in pages]
    return "".join(lines)


def missing_pages(root: Path) -> list[str]:
    """The pages ``toc_text()`` lists that ``root`` holds neither as .md nor as .ipynb."""
    pages = [ROOT_PAGE, *(page for part in toc_pages().values() for page in part)]
    return [page for page in pages if not any((Path(root) / f"{page}{ext}").exists() for ext in (".md", ".ipynb"))]


def write_toc(root: Path) -> bool:
    """Write ``<root>/_toc.yml`` from ``toc_text()`` where it differs and ``root`` holds every page it lists (a
    folder that lacks one is another book, whose own file stays); returns whether it was written."""
    path = Path(root) / "_toc.yml"
    if missing_pages(root):
        return False
    text = toc_text()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True
