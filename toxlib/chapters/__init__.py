"""The chapters of the book, each declared once and found by discovery: the registry.

A chapter is a ``Chapter`` (``spec``) named ``CHAPTER`` in a module of this package (``toxlib/chapters/<stem>.py``,
the module named as its notebook's stem), or in any installed package that names it under the entry-point group
``toxlib.chapters`` (``[project.entry-points."toxlib.chapters"] toy = "mypackage.chapter:CHAPTER"``), as pytest finds
its plugins. No list of chapters is kept by hand anywhere: the book's table of contents (``toxlib.book_build.toc``),
the scorecard, the report card, the run and book commands and the checks of sources, citations and package data
all ask here, in the declarations' ``order``.

    from toxlib.chapters import chapter, chapters, STEMS
    chapter("rtp_prompted").values("smoke", {"k": "3"})   # every parameter, parsed and checked
    [c.stem for c in chapters()]                        # every chapter, in reading order (== STEMS)

``run`` and ``book`` check a run's values against the declaration before a notebook starts and refuse a notebook
whose parameters cell is not the declaration's (``python -m toxlib chapters --write-cells`` writes it); a notebook
that is no chapter of the book (a reader's own) is run with its cell's parameters, checked for type only, unless its
metadata names a declaration of its own ("module:ATTRIBUTE"). A declaration names its compute function, imported
only when the chapter is computed (``toxlib.chapters.compute``); declarations stay light (no torch). A new chapter:
``python -m toxlib new-chapter NAME`` (the book's page "Adding a paper").

Computing a chapter is ``toxlib.chapters.compute`` (imported only by what computes one: notebooks, the report card):
it checks the values, then calls the function the declaration names (``Chapter.compute``, "module:function", in the
paper's folder or ``toxlib.studies``), which returns a ``toxlib.publish.chapter_result.ChapterResult``.

May import: common, scorers, executors, models, publish, data (scorers inside a check only: the names of the known
scorers, it imports torch; the rest in ``compute`` only: it sets the executor, hands the models over and types the
result).
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

from toxlib.chapters.spec import PARTS, PROFILES, Chapter

#: the entry-point group through which another package declares chapters
ENTRY_POINTS = "toxlib.chapters"
#: the modules of this package that declare no chapter (the declarations' vocabulary, and the computing of one,
#: which imports torch): not imported by discovery
NOT_CHAPTERS = frozenset({"spec", "report_needs", "compute"})
_found: list[dict[str, Chapter]] = []  # the discovered chapters, once every declaration has been read


def _declared_here() -> tuple[dict[str, Chapter], bool]:
    """({stem: Chapter} of this package's modules, whether every declaration was read): a module still being
    imported (a declaration whose check asks for the chapters while it loads) is left out, and the answer is not
    kept."""
    found, complete = {}, True
    for info in pkgutil.iter_modules(__path__):
        if info.name in NOT_CHAPTERS:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        declared = getattr(module, "CHAPTER", None)
        if declared is None:
            complete &= not getattr(module.__spec__, "_initializing", False)
            continue
        if not isinstance(declared, Chapter):
            raise TypeError(f"toxlib/chapters/{info.name}.py: CHAPTER is a {type(declared).__name__}, not a Chapter")
        if declared.stem != info.name:
            raise ValueError(f"toxlib/chapters/{info.name}.py declares chapter {declared.stem!r}: a chapter's module "
                             "is named as its notebook's stem")
        found[declared.stem] = declared
    return found, complete


def _declared_elsewhere() -> dict[str, Chapter]:
    """{stem: Chapter} that installed packages name under ``ENTRY_POINTS``."""
    found = {}
    for point in entry_points(group=ENTRY_POINTS):
        declared = point.load()
        if not isinstance(declared, Chapter):
            raise TypeError(f"entry point {point.name} = {point.value} (group {ENTRY_POINTS}) is a "
                            f"{type(declared).__name__}, not a toxlib.chapters.spec.Chapter")
        found[declared.stem] = declared
    return found


def discovered() -> dict[str, Chapter]:
    """Every chapter, {stem: Chapter}, in reading order (``order``, then stem). ValueError when two declarations
    share a stem."""
    if _found:
        return _found[0]
    here, complete = _declared_here()
    elsewhere = _declared_elsewhere()
    shared = sorted(set(here) & set(elsewhere))
    if shared:
        raise ValueError(f"chapter(s) {', '.join(shared)} are declared both in toxlib/chapters/ and by an installed "
                         f"package's {ENTRY_POINTS} entry point: rename one")
    ordered = dict(sorted({**here, **elsewhere}.items(), key=lambda item: (item[1].order, item[0])))
    if complete:
        _found.append(ordered)
    return ordered


def forget() -> None:
    """Discover the chapters afresh at the next question (after a declaration was added, or a test's was)."""
    _found.clear()


def __getattr__(name: str):
    if name == "STEMS":  # every chapter's stem, in reading order: discovered, never listed
        return tuple(discovered())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def chapter(name: str) -> Chapter | None:
    """The declaration called ``name``: a chapter of the book (its notebook's file name without .ipynb), or
    "module:ATTRIBUTE" naming a ``Chapter`` of one's own (a notebook outside the book declared the same way). None
    for any other name; ImportError or TypeError for a "module:ATTRIBUTE" that is not one."""
    found = discovered()
    if name in found:
        return found[name]
    if ":" not in name:
        return None
    declared = pkgutil.resolve_name(name)
    if not isinstance(declared, Chapter):
        raise TypeError(f"{name} is a {type(declared).__name__}, not a toxlib.chapters.spec.Chapter")
    return declared


def chapters() -> list[Chapter]:
    """Every chapter's declaration, in reading order."""
    return list(discovered().values())


def model_chapters() -> tuple[str, ...]:
    """The chapters whose claims concern a language model (their declaration has a ``report``: what a report card
    needs of them), in reading order: the chapters a report card runs."""
    return tuple(stem for stem, declared in discovered().items() if declared.report is not None)


def scored_chapters() -> tuple[str, ...]:
    """The model chapters whose claims rest on toxicity scores of the model's own text (``report.scored``)."""
    return tuple(stem for stem in model_chapters() if chapter(stem).report.scored)


__all__ = ["ENTRY_POINTS", "PARTS", "PROFILES", "STEMS", "Chapter", "chapter", "chapters", "discovered", "forget",
           "model_chapters", "scored_chapters"]
