"""The book's own Sphinx extension (named in _config.yml's ``extra_extensions``): each page loads every script once,
and the HTML carries the chapters' tables as CSV files, however the book is built (``toxlib book`` or the publishing
workflow's plain ``jupyter-book build .``).

On Sphinx 7, an inline script an extension adds after the HTML builder started (sphinx-thebe's configuration,
sphinx-togglebutton's selector) reaches a page twice: once through the builder, once through the registry, with
``None`` and ``""`` as its file name. A second ``const THEBE_JS_URL`` is a syntax error in the reader's console, on
every page. ``one_copy_each`` keeps the first of every (file, attributes) pair in the page's script list.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from toxlib.common import settings

#: what of the results folder the HTML carries: the tables, where their download links point
#: (``toxlib.publish.results.csv_href``); figures are inside the pages already
TABLE_SUFFIXES = (".csv", ".csv.gz")


def script_key(script) -> tuple:
    """What makes two script entries the same script: the file (None and "" alike: an inline script) and the
    attributes, its inline body included. Accepts Sphinx's ``_JavaScript`` entries and plain strings."""
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return filename, tuple(sorted((k, str(v)) for k, v in attributes.items()))


def one_copy_each(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context`` handler: drop repeated entries from ``context["script_files"]``, keeping the order of
    first appearance."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        key = script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept


def results_folder(srcdir) -> Path:
    """The chapters' results folder the HTML's CSV links point into: ``TOXLIB_RESULTS_DIR`` (a smoke build's), else
    the book source's own ``data/results``."""
    return settings.path("TOXLIB_RESULTS_DIR") or Path(srcdir) / "data" / "results"


def copy_tables(results: Path, html: Path) -> int:
    """Copy every table under ``results`` (``TABLE_SUFFIXES``) to html/data/results/ at the same relative path,
    replacing what an earlier build left there. Returns how many files were copied (0 when there is no folder)."""
    target = html / "data" / "results"
    if target.exists():
        shutil.rmtree(target)
    tables = [p for p in sorted(results.rglob("*")) if p.is_file() and p.name.endswith(TABLE_SUFFIXES)] \
        if results.is_dir() else []
    for table in tables:
        (target / table.relative_to(results)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(table, target / table.relative_to(results))
    return len(tables)


def _copy_after_build(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        copy_tables(results_folder(app.srcdir), Path(app.outdir))


def setup(app):
    # after every other handler (the default priority is 500), so scripts added for one page are seen too
    app.connect("html-page-context", one_copy_each, priority=900)
    app.connect("build-finished", _copy_after_build)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
