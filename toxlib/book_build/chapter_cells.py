"""The notebooks' side of the chapter declarations (``toxlib.chapters``): each chapter's parameters cell written from
its declaration, and its metadata naming it (``toxlib.chapter``).

``write_cells(root)`` rewrites every chapter notebook of the checkout whose cell or metadata differs (source only:
outputs, other cells and other metadata are kept) and returns the notebooks it changed; ``cell_differences(root)``
lists, without writing, what it would change. ``python -m toxlib chapters --write-cells`` calls the first.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from toxlib.chapters import chapter, chapters

#: notebook metadata an older toxlib kept per chapter, now held by the declaration
RETIRED_METADATA = ("checks", "profiles", "paper_profile_note", "aggregate")


def chapter_notebook(root: Path, stem: str) -> Path:
    """Where chapter ``stem``'s notebook lies in the checkout at ``root``: its declaration's ``page``
    (FileNotFoundError naming it when there is no such file, or no such chapter)."""
    declared = chapter(stem)
    if declared is None:
        raise FileNotFoundError(f"no chapter {stem!r} is declared, so it has no notebook")
    path = Path(root) / declared.page
    if not path.exists():
        raise FileNotFoundError(f"chapter {stem!r} declares its notebook at {declared.page}, which {root} lacks")
    return path


def _wanted(nb: nbformat.NotebookNode, stem: str) -> tuple[bool, bool]:
    """(whether the parameters cell is the declaration's, whether the metadata is)."""
    source = chapter(stem).cell_source()
    cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)
    meta = nb.metadata.get("toxlib", {})
    return (cell is not None and cell.source == source,
            meta.get("chapter") == stem and not set(RETIRED_METADATA) & set(meta))


def cell_differences(root: Path) -> list[str]:
    """One line per chapter notebook whose parameters cell or metadata is not the declaration's ([] when none)."""
    found = []
    for declared in chapters():
        path = chapter_notebook(root, declared.stem)
        cell_ok, meta_ok = _wanted(nbformat.read(str(path), as_version=4), declared.stem)
        if not cell_ok:
            found.append(f"{path.relative_to(root)}: its parameters cell is not toxlib/chapters/{declared.stem}.py's")
        if not meta_ok:
            found.append(f"{path.relative_to(root)}: its metadata does not name chapter {declared.stem!r} alone")
    return found


def write_cells(root: Path) -> list[Path]:
    """Write each chapter notebook's parameters cell and metadata from its declaration where they differ; returns
    the notebooks written."""
    written = []
    for declared in chapters():
        path = chapter_notebook(root, declared.stem)
        nb = nbformat.read(str(path), as_version=4)
        if all(_wanted(nb, declared.stem)):
            continue
        cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)
        if cell is None:
            raise ValueError(f"{path} has no cell tagged 'parameters' to write; tag the cell that should hold them")
        cell.source = declared.cell_source()
        meta = nb.metadata.setdefault("toxlib", {})
        for key in RETIRED_METADATA:
            meta.pop(key, None)
        meta["chapter"] = declared.stem
        nbformat.write(nb, str(path))
        written.append(path)
    return written
