"""Where notebooks put what they show: tables (CSV) and figures (PNG) under results_dir()/<notebook-stem>/, a
table shown and written in one call (``publish``), a figure saved and pasted into a numbered figure
(``publish_figure``) or shown in place under its caption (``show_figure``). Claims have their own module
(``toxlib.publish.claims``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toxlib.publish.figures import DPI, FigureOutput
from toxlib.publish.shown_path import ShownPath
from toxlib.publish.tables import show
from toxlib.store import paths


def chapter_dir(stem: str, root: Path | None = None) -> Path:
    """The folder of chapter ``stem``'s files under ``root`` (default ``paths.results_dir()``), made if missing."""
    out = (Path(root) if root is not None else paths.results_dir()) / stem
    out.mkdir(parents=True, exist_ok=True)
    return out


#: floats in written tables keep this many significant digits: the last bits of a float64 statistic (a SIMD sum's
#: order) and of a float32 score (another CPU's kernels) differ between machines, and must not reach the tables
SIGNIFICANT_DIGITS = 6


def _float_text(x: float) -> str:
    """A float as written: a whole number in full (a count stored as float beside a NaN), else to
    ``SIGNIFICANT_DIGITS`` significant digits."""
    if x == x and abs(x) < 1e15 and float(x).is_integer():
        return str(int(x))
    return f"{x:.{SIGNIFICANT_DIGITS}g}"


def write_table(stem: str, name: str, table: pd.DataFrame, compress: bool = False, root: Path | None = None) -> Path:
    """Write ``table`` to <results>/<stem>/<name>.csv (index dropped; <name>.csv.gz with ``compress``, for tables
    of tens of thousands of rows; floats to ``SIGNIFICANT_DIGITS`` significant digits; ``root``: another folder
    than the results folder) and return the path (shown relative to the repository)."""
    path = chapter_dir(stem, root) / f"{name}.csv{'.gz' if compress else ''}"
    table.to_csv(path, index=False, float_format=_float_text,
                 **({"compression": {"method": "gzip", "mtime": 0}} if compress else {}))
    return ShownPath(path)


def csv_href(stem: str, name: str, compress: bool = False) -> str:
    """The address of table ``name`` of chapter ``stem`` relative to a chapter's page: pages sit one folder deep
    (``notebooks/``, ``book/``), and the book build copies the results' CSVs to ``data/results/`` beside them, where
    they also are in a checkout."""
    return f"../data/results/{stem}/{name}.csv{'.gz' if compress else ''}"


def publish(stem: str, name: str, table: pd.DataFrame, caption: str, digits: int = 3, columns: list | None = None,
            compress: bool = False, headers: dict | None = None, turn: str | None = None, code: tuple = ()) -> None:
    """Write ``table`` to <results>/<stem>/<name>.csv (as ``write_table``, every column) and display it in the
    notebook (as ``toxlib.publish.tables.show``: captioned, floats rounded to ``digits``, readers' headers, with
    ``headers`` overriding them per column, a link to the CSV; only ``columns`` when given; turned, rows as columns,
    with ``turn``; the ``code`` columns' texts as code), in one call so neither half can be forgotten. Displays
    through IPython, so it works inside loops and functions too; returns nothing, so a cell ending in it shows the
    table once."""
    from IPython.display import display  # optional: IPython comes with the [book] extra (a notebook's kernel)

    write_table(stem, name, table, compress=compress)
    display(show(table if columns is None else table[columns], caption, digits, csv=csv_href(stem, name, compress),
                 headers=headers, turn=turn, code=code))


def save_figure(stem: str, name: str, fig, root: Path | None = None) -> Path:
    """Save a matplotlib figure to <results>/<stem>/<name>.png (``root``: another folder than the results folder);
    the path returned shows relative to the repository (a cell ending in this call stores no absolute path of the
    machine)."""
    path = chapter_dir(stem, root) / f"{name}.png"
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return ShownPath(path)


def figure_title(fig) -> str | None:
    """The figure's title as a reader reads it (its suptitle, else its first axes title; ``escape.figure``
    undone), or None."""
    titles = [title for title in [fig.get_suptitle()] if title]
    titles += [ax.get_title() for ax in fig.axes if ax.get_title()]
    return titles[0].replace(r"\$", "$") if titles else None


def show_figure(stem: str, name: str, fig, caption: str | None = None) -> Path:
    """Save ``fig`` as ``save_figure`` does and display it in place with ``caption`` under it (default: its title)
    and an alternative text saying what it shows (``toxlib.publish.figures``); the figure is closed. For figures a
    chapter shows in a loop or from a library function; a figure the chapter's text refers to by number is
    ``publish_figure``'s. Returns the PNG's path."""
    import matplotlib.pyplot as plt  # matplotlib comes with the [book] extra, like the figures
    from IPython.display import display  # optional: IPython comes with the [book] extra (a notebook's kernel)

    path = save_figure(stem, name, fig)
    display(FigureOutput(fig, caption if caption is not None else figure_title(fig) or ""))
    plt.close(fig)
    return path


def figure_key(stem: str, name: str) -> str:
    """The glue key of figure ``name`` of chapter ``stem``; its caption is glued under ``<key>-caption``."""
    return f"{stem}-fig-{name}"


def publish_figure(stem: str, name: str, fig) -> Path:
    """Save ``fig`` as ``save_figure`` does and glue it (not displayed) under ``figure_key(stem, name)``, as the PNG
    with an alternative text that says what it shows (``toxlib.publish.figures.FigureOutput``), with its title
    (which names the model, scorer and sample) glued as ``<key>-caption``, for a numbered figure in the chapter's
    markdown:

        ```{glue:figure} <key>
        :name: fig-<stem>-<name>

        {glue:text}`<key>-caption`. What the figure shows.
        ```
    The figure is closed, so the cell shows nothing else. Returns the PNG's path."""
    import matplotlib.pyplot as plt  # matplotlib comes with the [book] extra, like the figures
    from myst_nb import glue  # optional: the [book] extra

    title = figure_title(fig)
    if not title:
        raise ValueError(f"figure {name!r} of {stem!r} has no title to caption it with: set one with ax.set_title")
    path = save_figure(stem, name, fig)
    glue(figure_key(stem, name), FigureOutput(fig), display=False)
    glue(f"{figure_key(stem, name)}-caption", title, display=False)
    plt.close(fig)
    return path
