"""Where things are in the built book, for links between pages: a chapter's title and page, a claim's row.

Pages sit one folder deep (``notebooks/<stem>.html``; the scorecard, the report card page and the prose pages in
``book/``: each chapter's declaration gives its ``page``), so a link from any page to a chapter is
``../<its page's folder>/<stem>.html``. A claim's row in its chapter's claims table carries the
id ``claim-<stem>-<row>`` (``row``: its position in the chapter's claims.csv, from 0), which the findings box at the
top of the chapter and the scorecard link to.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from toxlib.chapters import STEMS, chapter


def chapter_title(stem: str) -> str:
    """The chapter's title as its declaration gives it (``toxlib.chapters``); the stem itself for a name that is
    no chapter of the book."""
    declared = chapter(stem) if stem in STEMS else None
    return declared.title if declared is not None else stem


def chapter_href(stem: str) -> str:
    """The address of chapter ``stem``'s page from any page of the book (a name that is no chapter: as a chapter
    of ``notebooks/`` would be)."""
    declared = chapter(stem) if stem in STEMS else None
    page = PurePosixPath(declared.page if declared is not None else f"notebooks/{stem}.ipynb")
    return f"../{page.with_suffix('.html')}"


def claim_anchor(stem: str, row: int) -> str:
    """The id of the ``row``-th claim of chapter ``stem`` (0 first) in its chapter's claims table."""
    return f"claim-{stem}-{int(row)}"
