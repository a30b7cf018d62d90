"""How much of a chapter's work for one model the sample record already holds, so the estimate charges only the rest.

The record keeps every row the book's default build used (``data/record/keys.csv``: per key its chapters and the
model its config names), and a smaller run takes the first rows of the same seeded draws. So when the record holds
rows of chapter ``stem`` made with model ``model``, the book's default run of that model is held in full, and a run
at other sizes is held up to that: ``share = min(1, work(book defaults) / work(run))``, in the chapter's own work
units (``ReportNeeds.work``). A model the record has no rows of, in that chapter, has share 0. The share assumes
the run differs from the book's defaults in sizes only (the budgets' profiles do); rows of the user's cache are
not counted (they cost nothing either; the estimate says so).
"""

from __future__ import annotations

from functools import lru_cache

from toxlib.chapters import chapter
from toxlib.store.record_reader import key_chapters, open_record, read_keys, record_dir


@lru_cache(maxsize=1)
def _models_by_chapter() -> dict[str, frozenset[str]]:
    """{chapter: the models whose rows the record holds for it} from the record's keys (empty without a record)."""
    if open_record() is None:
        return {}
    out: dict[str, set[str]] = {}
    for entry in read_keys(record_dir()):
        model = (entry.get("config") or {}).get("model")
        if model:
            for stem in key_chapters(entry):
                out.setdefault(stem, set()).add(model)
    return {stem: frozenset(models) for stem, models in out.items()}


def record_share(stem: str, model: str, values: dict) -> float:
    """The share (0 to 1) of chapter ``stem``'s work for ``model`` at parameter ``values`` (every parameter) whose
    rows the sample record holds; see the module docstring."""
    if model not in _models_by_chapter().get(stem, frozenset()):
        return 0.0
    needs = chapter(stem).report
    book = needs.work(chapter(stem).defaults())
    run = needs.work(values)
    done, asked = book.total(), run.total()  # one scale: the book's run has the same kinds in the same proportions
    return 1.0 if asked <= 0 else min(1.0, done / asked)
