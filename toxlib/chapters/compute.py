"""Computing a chapter from its declaration, in this process: what a notebook's first cell and the report card call.

    from toxlib.chapters.compute import compute_chapter, in_notebook
    result = compute_chapter("sass", {"lm_comments": 30}, profile="smoke")   # a ChapterResult; nothing written
    result = in_notebook("sass", globals())                           # a notebook: its parameters, published

``compute_chapter`` checks the values against the declaration (the profile's, with ``values`` over them), makes the
chapter's ``executor`` the default of every stage and its ``model_names`` the short names models load under, and
calls the function the declaration names (``Chapter.compute``) with the checked values and a
``toxlib.models.source.Models``: the caller's (a report hands over its one loaded model), or a new one on
``device``. The data files the chapter read itself are noted in the result (``sources``; a chapter computed inside
another, as the Your model page's report computes the report's chapters, keeps its reads); one its declaration does
not name is warned about. ``in_notebook`` reads the parameters as the notebook holds them after its parameters cell
(checked as ``run`` checks them), computes, and publishes the result (its files under ``results_dir()``, its glue
keys).
"""

from __future__ import annotations

import pkgutil
import warnings
from collections.abc import Mapping

from toxlib import executors
from toxlib.chapters import STEMS
from toxlib.chapters import chapter as declared_chapter
from toxlib.chapters.spec import Chapter
from toxlib.common.errors import UnknownNameError
from toxlib.data import sources
from toxlib.models.names import name_models
from toxlib.models.source import Models
from toxlib.publish.chapter_result import ChapterResult

#: per chapter computing now (innermost last): the spans of ``sources.ENSURED`` that chapters computed inside it read
_INNER_READS: list[list[range]] = []


def declaration(name: str | Chapter) -> Chapter:
    """The declaration ``name`` names (a ``Chapter`` as it is); UnknownNameError for a name no chapter has."""
    if isinstance(name, Chapter):
        return name
    found = declared_chapter(name)
    if found is None:
        raise UnknownNameError(f"no chapter is called {name!r}; chapters: {', '.join(STEMS)}")
    return found


def compute_function(chapter: Chapter):
    """The function ``chapter.compute`` names ("module:function"), imported now. UnknownNameError when the
    declaration names none, or one that cannot be imported."""
    if not chapter.compute or ":" not in chapter.compute:
        raise UnknownNameError(f"chapter {chapter.stem} names no compute function (its declaration's compute must "
                               "be 'module:function')")
    try:
        return pkgutil.resolve_name(chapter.compute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UnknownNameError(f"chapter {chapter.stem}'s compute function {chapter.compute} cannot be imported "
                               f"({type(exc).__name__}: {exc})") from exc


def compute_chapter(name: str | Chapter, values: Mapping | None = None, profile: str = "default",
            models: Models | None = None, device: str | None = None) -> ChapterResult:
    """Chapter ``name`` computed at ``profile`` with ``values`` over it (see the module docstring); ``models``: the
    models to use (default: a new ``Models`` with the chapter's ``model_names`` on ``device``). Nothing is written:
    the caller writes or publishes the result."""
    chapter = declaration(name)
    checked = chapter.values(profile, values)
    if "executor" in checked:
        executors.set_default_executor(checked["executor"])
    names = checked.get("model_names")
    if "model_names" in checked:
        name_models(names)  # also for the stages that load a model by name away from ``models`` (Ray actors)
    models = models if models is not None else Models(names=names, device=device)
    first = len(sources.ENSURED)
    _INNER_READS.append([])
    try:
        result = compute_function(chapter)(checked, models)
    finally:
        inner = _INNER_READS.pop()
    read = range(first, len(sources.ENSURED))
    if _INNER_READS:
        _INNER_READS[-1].append(read)
    if not isinstance(result, ChapterResult):
        raise TypeError(f"{chapter.compute} returned a {type(result).__name__}, not a ChapterResult")
    result.sources = sorted({sources.ENSURED[i] for i in read if not any(i in span for span in inner)})
    undeclared = sorted(set(result.sources) - set(chapter.sources)) if "*" not in chapter.sources else []
    if undeclared:
        warnings.warn(f"chapter {chapter.stem} read the data file(s) {', '.join(undeclared)}, which its declaration's "
                      f"sources do not name: add them to toxlib/chapters/{chapter.stem}.py (its page and checks list "
                      "what a chapter reads)", stacklevel=2)
    return result


def in_notebook(name: str | Chapter, namespace: Mapping) -> ChapterResult:
    """What a chapter's notebook runs after its parameters cell: its parameters as ``namespace`` (the notebook's
    ``globals()``) holds them, checked, computed and published (``ChapterResult.publish``)."""
    chapter = declaration(name)
    result = compute_chapter(chapter, chapter.current(namespace))
    result.publish()
    return result
