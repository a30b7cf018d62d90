"""Each chapter of the book declared once: its parameters (default, check, help) and its profiles, one module per
chapter named as its notebook (``toxlib/chapters/rtp_prompted.py`` for ``notebooks/rtp_prompted.ipynb``); the
declaration's vocabulary is ``spec``.

    from toxlib.chapters import chapter
    chapter("rtp_prompted").values("smoke", {"k": "3"})   # every parameter, parsed and checked

``run`` and ``book`` check a run's values against the declaration before a notebook starts and refuse a notebook
whose parameters cell is not the declaration's (``python -m toxlib chapters --write-cells`` writes it); a notebook
that is no chapter of the book (a reader's own) is run with its cell's parameters, checked for type only, unless its
metadata names a declaration of its own ("module:ATTRIBUTE").

Computing a chapter is ``toxlib.chapters.compute`` (imported only by what computes one: notebooks, the report card):
it checks the values, then calls the function the declaration names (``Chapter.compute``, "module:function", in the
paper's folder or ``toxlib.studies``), which returns a ``toxlib.publish.chapter_result.ChapterResult``.

May import: common, scorers, executors, models, publish (scorers inside a check only: the names of the known
scorers, it imports torch; the rest in ``compute`` only: it sets the executor, hands the models over and types the
result).
"""

from __future__ import annotations

import importlib

from toxlib.chapters.spec import PROFILES, Chapter

#: the chapters in the book's reading order (the "Your model" page first, the scorecard last)
STEMS = ("your_model", "datasets", "generation", "scorers", "rtp_unprompted", "rtp_prompted", "rtp_detox", "sass",
         "debias_consistency", "safety_score", "scorecard")


def chapter(name: str) -> Chapter | None:
    """The declaration called ``name``: a chapter of the book (its notebook's file name without .ipynb, one of
    ``STEMS``), or "module:ATTRIBUTE" naming a ``Chapter`` of one's own (a notebook outside the book declared the
    same way). None for any other name; ImportError or TypeError for a "module:ATTRIBUTE" that is not one."""
    if name in STEMS:
        return importlib.import_module(f"toxlib.chapters.{name}").CHAPTER
    if ":" not in name:
        return None
    module, _, attribute = name.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    if not isinstance(found, Chapter):
        raise TypeError(f"{name} is a {type(found).__name__}, not a toxlib.chapters.spec.Chapter")
    return found


def chapters() -> list[Chapter]:
    """Every chapter's declaration, in ``STEMS`` order."""
    return [chapter(stem) for stem in STEMS]


def model_chapters() -> tuple[str, ...]:
    """The chapters whose claims concern a language model (their declaration has a ``report``: what a report card
    needs of them), in ``STEMS`` order: the chapters a report card runs. A declaration still being imported (the
    "Your model" page's, whose check of its ``chapters`` parameter asks this) is skipped: it declares no report."""
    out = []
    for stem in STEMS:
        declared = getattr(importlib.import_module(f"toxlib.chapters.{stem}"), "CHAPTER", None)
        if declared is not None and declared.report is not None:
            out.append(stem)
    return tuple(out)


def scored_chapters() -> tuple[str, ...]:
    """The model chapters whose claims rest on toxicity scores of the model's own text (``report.scored``)."""
    return tuple(stem for stem in model_chapters() if chapter(stem).report.scored)


__all__ = ["PROFILES", "STEMS", "Chapter", "chapter", "chapters", "model_chapters", "scored_chapters"]
