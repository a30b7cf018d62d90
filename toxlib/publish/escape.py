"""Text that came from a model or a data set, made safe for each place the book shows it. Every table cell, header,
caption, findings line, figure label and alternative text goes through one of these functions, so a generated
``<script>``, ``<h1>``, ``<bos>`` or ``$x$`` is shown as the characters it is, never run or rendered as markup.

- ``html(text)``: for an HTML element's text or an attribute's value (tables, captions, the findings box, tab
  labels, alt text): ``& < > " '`` as entities. The book pastes generated text into pages only as HTML (a findings
  box is an HTML block inside the chapter's markdown), never as markdown, which would also retype its quotes.
- ``figure(text)``: for a matplotlib label: ``$`` escaped, so a label with two dollar signs is not typeset as math.

Each takes any value (``str()`` of it; None gives "") and returns text for its place only: escape once, at the place
the text is inserted, and insert the result without escaping it again.
"""

from __future__ import annotations

import html as _html


def _text(value) -> str:
    return "" if value is None else str(value)


def html(value) -> str:
    """``value`` as text for HTML (element text or a quoted attribute value)."""
    return _html.escape(_text(value), quote=True)


def figure(value) -> str:
    """``value`` as a literal matplotlib label (mathtext off: every ``$`` escaped)."""
    return _text(value).replace("$", r"\$")
