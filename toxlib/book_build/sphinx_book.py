"""The book's own Sphinx extension (named in _config.yml's ``extra_extensions``): each page loads every script once.

On Sphinx 7, an inline script an extension adds after the HTML builder started (sphinx-thebe's configuration,
sphinx-togglebutton's selector) reaches a page twice: once through the builder, once through the registry, with
``None`` and ``""`` as its file name. A second ``const THEBE_JS_URL`` is a syntax error in the reader's console, on
every page. ``one_copy_each`` keeps the first of every (file, attributes) pair in the page's script list.
"""

from __future__ import annotations


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


def setup(app):
    # after every other handler (the default priority is 500), so scripts added for one page are seen too
    app.connect("html-page-context", one_copy_each, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
