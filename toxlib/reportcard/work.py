"""How much computing a chapter asks of one model at given parameters: each model chapter declares it
(``toxlib.chapters.report_needs.ReportNeeds.work``, in the chapter's declaration); this module asks it.

``chapter_work(stem, values)`` returns a ``ChapterWork`` (``toxlib.chapters.report_needs``) from the chapter's
parameter values. The counts follow what each chapter runs (its notebook and ``toxlib.papers``); average lengths
where a text's length is not a parameter (``TYPICAL``) are the sample record's. A test holds the decide budget's
counts against the record's own work.
"""

from __future__ import annotations

from toxlib.chapters import chapter
from toxlib.chapters.report_needs import TYPICAL, ChapterWork

__all__ = ["TYPICAL", "ChapterWork", "chapter_work"]


def chapter_work(stem: str, values: dict) -> ChapterWork:
    """The work chapter ``stem`` asks of its one model at parameter ``values`` (every parameter, as
    ``toxlib.chapters`` gives them). ValueError for a chapter that declares no report."""
    needs = chapter(stem).report
    if needs is None:
        raise ValueError(f"chapter {stem!r} declares no report (its claims concern no language model)")
    return needs.work(values)
