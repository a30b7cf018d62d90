"""A chapter's data sources (``toxlib.chapters.compute.compute_chapter``): the files it read itself, a chapter computed
inside it keeping its own reads, and a warning naming a file its declaration does not."""

from __future__ import annotations

import warnings

import pytest

from toxlib.chapters import compute
from toxlib.chapters.spec import Chapter
from toxlib.data import sources
from toxlib.publish.chapter_result import ChapterResult


def _read(name: str) -> None:
    sources.ENSURED.append(name)  # what sources.ensure notes, without fetching a file


def _inner(values, models):
    _read("toxigen")
    return ChapterResult("inner", values)


def _outer(values, models):
    _read("rtp_sample")
    inner = compute.compute_chapter(INNER)
    _read("rtp_sample")
    return ChapterResult("outer", {"inner": inner.sources})


INNER = Chapter("inner", "Inner", "", (), compute="inner", sources=("toxigen",))
OUTER = Chapter("outer", "Outer", "", (), compute="outer", sources=("rtp_sample",))


@pytest.fixture()
def functions(monkeypatch):
    monkeypatch.setattr(compute, "compute_function", lambda chapter: {"inner": _inner, "outer": _outer}[chapter.stem])


def test_a_chapter_computed_inside_another_keeps_its_reads(functions):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # each reads only what it declares: no warning
        result = compute.compute_chapter(OUTER)
    assert result.sources == ["rtp_sample"] and result.values == {"inner": ["toxigen"]}


def test_a_read_the_declaration_does_not_name_is_warned_about_in_the_chapter_that_read_it(functions, monkeypatch):
    monkeypatch.setitem(globals(), "INNER", Chapter("inner", "Inner", "", (), compute="inner"))
    with pytest.warns(UserWarning) as caught:
        result = compute.compute_chapter(OUTER)
    assert [str(w.message).split(",")[0] for w in caught] == ["chapter inner read the data file(s) toxigen"]
    assert result.sources == ["rtp_sample"]
