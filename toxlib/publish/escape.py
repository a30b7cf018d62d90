"""Text that came from a model or a data set, made safe for each place the book shows it. Every table cell, header,
caption, findings line, figure label and alternative text goes through one of these functions, so a generated
``<script>``, ``<h1>``, ``<bos>`` or ``$x$`` is shown as the characters it is, never run or rendered as markup.

- ``html(text)``: for an HTML element's text or an attribute's value (tables, captions, the findings box, tab
  labels, alt text): ``& < > " '`` as entities. The book pastes generated text into pages only as HTML (a findings
  box is an HTML block inside the chapter's markdown), never as markdown, which would also retype its quotes.
- ``caption(text)``: a table's caption written by the book (not by a model): as ``html``, then a name between
  backticks (a file, a CSV column, a parameter: letters, digits and ``_.=-``) shown as code, ``<code>name</code>``.
- ``figure(text)``: for a matplotlib label: ``$`` escaped, so a label with two dollar signs is not typeset as math.

Each takes any value (``str()`` of it; None gives "") and returns text for its place only: escape once, at the place
the text is inserted, and insert the result without escaping it again.
"""

from __future__ import annotations

import html as _html
import re

#: a name a caption shows as code: between backticks, letters, digits and _ . = - only (nothing a model wrote)
CODE_NAME = re.compile(r"`([A-Za-z0-9_.=-]+)`")


def _text(value) -> str:
    return "" if value is None else str(value)


def html(value) -> str:
    """``value`` as text for HTML (element text or a quoted attribute value)."""
    return _html.escape(_text(value), quote=True)


def caption(value) -> str:
    """``value`` as ``html`` does, with each `name` between backticks (``CODE_NAME``) as ``<code>name</code>``."""
    return CODE_NAME.sub(r"<code>\1</code>", html(value))


def plain(value) -> str:
    """``value`` with the backticks of ``caption``'s code names dropped: the caption as plain text (a label)."""
    return CODE_NAME.sub(r"\1", _text(value))


def figure(value) -> str:
    """``value`` as a literal matplotlib label (mathtext off: every ``$`` escaped)."""
    return _text(value).replace("$", r"\$")
