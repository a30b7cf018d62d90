"""The chapters are discovered, not listed: the registry (``toxlib.chapters``) finds every declaration of the package
and of installed packages' entry points, and what names the chapters elsewhere is made from the declarations (the
table of contents, the report's figures) or checked against them here, each check naming the missing piece."""

from __future__ import annotations

import re
import sys
import tomllib
import types
from fnmatch import fnmatch
from pathlib import Path

import pytest
import yaml

import toxlib.chapters as registry
from toxlib.book_build.toc import missing_pages, toc_pages, toc_text, write_toc
from toxlib.chapters import STEMS, chapter, chapters, model_chapters
from toxlib.chapters.spec import COUNT, Chapter, Parameter
from toxlib.store import paths

ROOT = paths.project_root()


def test_every_declaration_of_the_package_is_found_in_reading_order():
    modules = {p.stem for p in (ROOT / "toxlib" / "chapters").glob("*.py")} - registry.NOT_CHAPTERS - {"__init__"}
    assert set(STEMS) == modules
    assert [c.stem for c in chapters()] == list(STEMS)
    orders = [c.order for c in chapters()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders), "give each chapter its own order"


def test_a_chapter_of_another_package_is_found_through_its_entry_point(monkeypatch):
    toy = Chapter("toy_elsewhere", "A chapter of another package", "Parameters (papermill).",
                  (Parameter("n", 3, COUNT, "a count"),), order=450, compute="toy_elsewhere:compute")
    module = types.ModuleType("toy_elsewhere")
    module.CHAPTER = toy
    monkeypatch.setitem(sys.modules, "toy_elsewhere", module)

    class Point:
        name, value = "toy_elsewhere", "toy_elsewhere:CHAPTER"

        def load(self):
            return module.CHAPTER

    monkeypatch.setattr(registry, "entry_points", lambda group: [Point()] if group == registry.ENTRY_POINTS else [])
    registry.forget()
    try:
        assert chapter("toy_elsewhere") is toy
        assert registry.STEMS.index("toy_elsewhere") == registry.STEMS.index("debias_consistency") + 1  # by order
        assert "notebooks/toy_elsewhere" in toc_text()
        module.CHAPTER = chapter("sass")  # a stem declared twice is refused, naming it
        registry.forget()
        with pytest.raises(ValueError, match="sass are declared both"):
            registry.discovered()
    finally:
        registry.forget()


def test_the_table_of_contents_is_the_declarations():
    assert (ROOT / "_toc.yml").read_text() == toc_text(), (
        "_toc.yml differs from the chapters' declarations: `python -m toxlib book` writes it "
        "(toxlib.book_build.toc)")
    for declared in chapters():
        assert (ROOT / declared.page).is_file(), f"{declared.stem}: its declared page {declared.page} is missing"


def _bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,]+),", (ROOT / "references.bib").read_text(), re.MULTILINE))


def test_the_table_of_contents_is_written_only_into_a_book_that_holds_its_pages(tmp_path):
    (tmp_path / "_toc.yml").write_text("another book's\n")
    assert not write_toc(tmp_path) and (tmp_path / "_toc.yml").read_text() == "another book's\n"
    pages = ["book/intro", *(page for part in toc_pages().values() for page in part)]
    assert missing_pages(tmp_path) == pages
    for page in pages:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{page}.md").touch()
    assert write_toc(tmp_path) and (tmp_path / "_toc.yml").read_text() == toc_text()
    assert not write_toc(tmp_path)  # unchanged: not written again


def test_every_chapter_cites_a_known_paper_and_the_book_pages_name_it():
    keys, cite, intro = _bib_keys(), (ROOT / "book" / "cite.md").read_text(), (ROOT / "book" / "intro.md").read_text()
    problems = []
    for declared in chapters():
        link = f"{{doc}}`../{Path(declared.page).with_suffix('')}`"
        for key in declared.cites:
            if key not in keys:
                problems.append(f"{declared.stem} cites {key}, which references.bib lacks")
            rows = [line for line in cite.splitlines() if f"{{cite:t}}`{key}`" in line]
            if not any(link in row for row in rows):
                problems.append(f"book/cite.md: the row of {key} does not link {declared.stem} ({link})")
            if f"../{Path(declared.page).with_suffix('')}" not in intro:
                problems.append(f"book/intro.md does not link {declared.stem}")
    assert problems == []


def test_every_data_file_is_read_by_a_chapter_that_declares_it():
    names = {s["name"] for s in yaml.safe_load((ROOT / "data" / "sources.yaml").read_text())["sources"]}
    declared = {name for c in chapters() for name in c.sources}
    unknown = sorted(declared - names - {"*"})
    assert unknown == [], f"chapters declare sources data/sources.yaml lacks: {unknown}"
    if "*" not in declared:
        assert names <= declared, f"data/sources.yaml holds files no chapter declares: {sorted(names - declared)}"
    narrower = sorted(declared - {"*"})
    assert narrower, "at least one chapter names the files it reads"


def test_the_wheel_carries_the_book_tables_the_report_figures_read():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["wheel-companion"]
    manifest = (ROOT / "MANIFEST.in").read_text()
    problems = []
    for stem in model_chapters():
        needs = chapter(stem).report
        assert needs.figures or not needs.book_tables, f"{stem}: book_tables without figures that read them"
        for table in needs.book_tables:
            path = f"data/results/{stem}/{table}.csv"
            if not any(fnmatch(path, p) for p in patterns):
                problems.append(f"pyproject.toml's wheel-companion lacks {path}")
            if path not in manifest:
                problems.append(f"MANIFEST.in lacks {path}")
            if not (ROOT / path).is_file():
                problems.append(f"{path} is missing: the book's run of {stem} writes it")
    assert problems == []


def test_the_methods_page_times_every_chapter():
    methods = (ROOT / "book" / "methods.md").read_text()
    missing = [c.stem for c in chapters() if c.part == "Chapters" and f"| `{c.stem}` |" not in methods]
    assert missing == [], f"book/methods.md's table of chapter times lacks {missing}"


#: the one module that may name the chapters: the registry (its docstring's examples)
REGISTRY = ROOT / "toxlib" / "chapters" / "__init__.py"


def named_chapters(text: str, stems) -> list[str]:
    """The chapters a text names: as a string literal, a notebook's file name, or, for a stem with an underscore, as
    a word (a stem without one, such as "sass", is also a common word)."""
    found = []
    for stem in stems:
        patterns = [rf"[\"']{stem}[\"']", rf"{re.escape(stem)}\.ipynb"] + ([rf"(?<![\w]){stem}(?![\w])"]
                                                                            if "_" in stem else [])
        if any(re.search(p, text) for p in patterns):
            found.append(stem)
    return found


def test_no_file_but_the_registry_lists_four_chapters():
    listing = {}
    for path in sorted([*(ROOT / "toxlib").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        if path == REGISTRY:
            continue
        named = named_chapters(path.read_text(), STEMS)
        if len(named) >= 4:
            listing[str(path.relative_to(ROOT))] = named
    assert listing == {}, f"files that list chapters by hand (ask toxlib.chapters instead): {listing}"


def test_the_listing_check_can_fail():
    assert named_chapters('"sass" and rtp_prompted, in debias_consistency.ipynb; a sass comment', STEMS) == [
        "rtp_prompted", "sass", "debias_consistency"]
