"""A matplotlib figure as the book shows it: the PNG with an alternative text that says what the figure shows, read
from the figure itself (``describe``), and, when it is shown in place rather than pasted into a numbered figure,
its caption under it.

``FigureOutput(fig, caption=None)`` is what a notebook displays (or myst-nb's ``glue`` stores): its text/html is

    <figure class="tx-figure"><img src="data:image/png;base64,…" alt="…"><figcaption>…</figcaption></figure>

(the ``<img>`` alone without a caption), beside image/png for other renderers; every text in it is escaped
(``toxlib.publish.escape``). ``describe(fig)`` is the alternative text: the kind of chart, its title, what each axis
shows (the categories on a categorical axis) and the series in its legend.
"""

from __future__ import annotations

import base64
import io

from toxlib.publish import escape

#: PNG resolution of the book's figures (what ``results.save_figure`` writes)
DPI = 120
#: at most this many categories of an axis are named in a figure's alternative text
NAMED_CATEGORIES = 8


def png_bytes(fig, dpi: int = DPI) -> bytes:
    """The figure as a PNG (tight bounding box), as ``results.save_figure`` writes it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


def _kinds(ax) -> list[str]:
    from matplotlib.collections import PathCollection, PolyCollection
    from matplotlib.container import BarContainer
    from matplotlib.patches import PathPatch

    kinds = []
    if any(isinstance(c, BarContainer) for c in ax.containers):
        kinds.append("bar chart")
    if any(isinstance(p, PathPatch) for p in ax.patches):
        kinds.append("box plot")
    if any(len(line.get_xdata()) > 2 for line in ax.get_lines()) or any(
            isinstance(c, PolyCollection) for c in ax.collections):
        kinds.append("line chart")
    if any(isinstance(c, PathCollection) for c in ax.collections):
        kinds.append("points")
    if not kinds and ax.get_lines():
        kinds.append("chart of points and intervals")
    return kinds or ["chart"]


def _axis(label: str, ticks: list[str]) -> str:
    names = [t for t in ticks if t and not _is_number(t)]
    if not names:
        return label or "unlabelled"
    shown = ", ".join(names[:NAMED_CATEGORIES])
    more = f" and {len(names) - NAMED_CATEGORIES} more" if len(names) > NAMED_CATEGORIES else ""
    categories = f"{len(names)} categories: {shown}{more}"
    return f"{label} ({categories})" if label else categories


def _is_number(text: str) -> bool:
    try:
        float(text.replace("−", "-").replace("%", "").replace(",", ""))
    except ValueError:
        return False
    return True


def _unescaped(text: str) -> str:
    """A matplotlib label as the reader reads it (``escape.figure`` undone)."""
    return text.replace(r"\$", "$").replace("\n", " ")


def describe(fig) -> str:
    """The alternative text of ``fig``: per axes, "<kind> titled '<title>': horizontal axis <label> (<categories>),
    vertical axis <label>; series: <legend entries>." (plain text; escape it for its place)."""
    fig.canvas.draw()  # tick labels exist once the figure is drawn
    title = _unescaped(fig.get_suptitle() or "")
    parts = []
    for ax in fig.axes:
        if not ax.get_visible() or not (ax.has_data() or ax.get_title()):
            continue
        kind = " and ".join(_kinds(ax))
        named = _unescaped(ax.get_title()) or title
        x = _axis(_unescaped(ax.get_xlabel()), [_unescaped(t.get_text()) for t in ax.get_xticklabels()])
        y = _axis(_unescaped(ax.get_ylabel()), [_unescaped(t.get_text()) for t in ax.get_yticklabels()])
        text = f"{kind.capitalize()}{f' titled {named!r}' if named else ''}: horizontal axis {x}; vertical axis {y}"
        legends = [ax.get_legend()] + (list(fig.legends) if len(fig.axes) == 1 else [])
        entries = [_unescaped(t.get_text()) for legend in legends if legend is not None for t in legend.get_texts()
                   if t.get_text()]
        if entries:
            text += f"; series: {', '.join(entries)}"
        parts.append(text + ".")
    return " ".join(parts) if parts else (f"Figure titled {title!r}." if title else "Figure.")


class FigureOutput:
    """What a notebook displays for a figure: the PNG with ``alt`` (default ``describe(fig)``) and, when given,
    ``caption`` (plain text, escaped here) under it. Holds the PNG, not the figure: close the figure after."""

    def __init__(self, fig, caption: str | None = None, alt: str | None = None, dpi: int = DPI):
        self._hold(png_bytes(fig, dpi), caption, alt if alt is not None else describe(fig))

    @classmethod
    def from_png(cls, png: bytes, caption: str | None, alt: str) -> "FigureOutput":
        """A figure already saved as a PNG (``png``: its bytes), shown with ``alt`` and ``caption``."""
        shown = cls.__new__(cls)
        shown._hold(png, caption, alt)
        return shown

    def _hold(self, png: bytes, caption: str | None, alt: str) -> None:
        self.png, self.caption, self.alt = png, caption, alt
        self.width = int.from_bytes(png[16:20], "big")  # the PNG's own width (IHDR), after the tight crop

    def html(self) -> str:
        data = base64.b64encode(self.png).decode()
        img = (f'<img class="tx-figure-img" src="data:image/png;base64,{data}" alt="{escape.html(self.alt)}" '
               f'style="max-width: 100%; width: {self.width}px; height: auto;">')
        if self.caption is None:
            return img
        return f'<figure class="tx-figure">{img}<figcaption>{escape.html(self.caption)}</figcaption></figure>'

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(), "image/png": base64.b64encode(self.png).decode(),
                "text/plain": self.alt}
