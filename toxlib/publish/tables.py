"""Showing a table in a notebook: a captioned, rounded, index-free HTML table whose every text is escaped.

``show`` returns a ``Table``: in a notebook and in the book it renders as

    <figure class="tx-table">
      <figcaption>caption … CSV</figcaption>
      <div class="tx-scroll" role="region" tabindex="0"><table>…</table></div>
    </figure>

so the caption stays outside the box that scrolls sideways when a table is wider than the page (the book's
stylesheet keeps the first column in view while it scrolls). Headers are for readers (``toxlib.publish.headers``):
a column with the paper's value beside it (``x`` and ``x_paper``) shares a two-level header. Cell texts, headers and
the caption are escaped (``toxlib.publish.escape``): a generated ``<h1>`` shows as those four characters.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from toxlib.publish import escape
from toxlib.publish.headers import grouped

#: how a missing value (NaN: a value the paper does not print, a statistic with no data, a failed score) is shown
MISSING = "–"
#: a text column whose values are all at most this long is kept on one line
SHORT_TEXT = 16
#: how a true / false cell reads (Python's True / False are code, not words)
YES_NO = {True: "yes", False: "no"}
#: names that fill a table's cells on their own (a Perspective attribute, a consistency-checklist test, a data
#: split) and how a reader reads them; the CSV keeps the names (tests/publish/test_tables.py: every attribute and
#: test with an underscore is here)
CELL_WORDS = {"severe_toxicity": "severe toxicity", "sexually_explicit": "sexually explicit",
              "identity_attack": "identity attack", "importance_as_applied": "importance (as applied)",
              "transferability_as_applied": "transferability (as applied)", "held_out": "held out"}


def _rounded(digits: int):
    """The formatter of a float column: ``digits`` decimals, thousands separated, a true minus sign, and a nonzero
    value that would read as zero at that many (a p-value of 6e-10 as "0.000") in two significant digits instead
    ("6.4e-10")."""
    smallest = 0.5 * 10 ** -digits

    def text(value) -> str:
        if value and abs(value) < smallest:
            shown = f"{value:.1e}"
            return "−" + shown[1:] if shown.startswith("-") else shown
        return fixed_text(value, digits)
    return text


def fixed_text(value: float, places: int, signed: bool = False) -> str:
    """``value`` with ``places`` decimals, thousands separated and a true minus sign ("−1,234.5"); with ``signed``,
    a plus sign before a positive value too ("+0.048"). How every number of a table or claim is written."""
    text = f"{value:+,.{places}f}" if signed else f"{value:,.{places}f}"
    return text.replace("-", "−")


def _whole(value) -> str:
    """The formatter of a column of whole numbers ("−1,200")."""
    return fixed_text(value, 0)


def _is_flag(column: pd.Series) -> bool:
    """A column of booleans (a bool dtype, or objects that are all bools once missing values are left out)."""
    if column.dtype == bool:
        return True
    values = column.dropna()
    return column.dtype == object and len(values) > 0 and values.map(lambda v: isinstance(v, bool)).all()


def csv_link(href: str | None) -> str:
    """The caption's download link to the table's CSV (``href`` relative to the page), or "" when there is none."""
    return f' <a class="csv-link" href="{escape.html(href)}" download>CSV</a>' if href else ""


class Table:
    """A table as the book shows it: ``styler`` (the pandas Styler of the cells and headers, no caption) under
    ``caption_html`` (escaped caption and CSV link); ``kind`` adds the class ``tx-<kind>`` to its scroll box.
    ``to_html()`` gives the figure; a notebook displays it through ``_repr_html_``."""

    def __init__(self, styler, caption_html: str, label: str, kind: str = ""):
        self.styler = styler
        self.caption_html = caption_html
        self.label = label
        self.kind = kind  # "claims": a claims table, whose header row stays in view on a wide screen (tables.css)

    def to_html(self) -> str:
        kind = f" tx-{self.kind}" if self.kind else ""
        return (f'<figure class="tx-table">\n<figcaption>{self.caption_html}</figcaption>\n'
                f'<div class="tx-scroll{kind}" role="region" tabindex="0" aria-label="{escape.html(self.label)}">\n'
                f"{self.styler.to_html()}</div>\n</figure>")

    def _repr_html_(self) -> str:
        return self.to_html()


def _uuid(table: pd.DataFrame, caption: str) -> str:
    """A Styler id that depends on the table only, so an unchanged table gives an unchanged notebook output."""
    digest = hashlib.sha256(caption.encode() + pd.util.hash_pandas_object(table.astype(str), index=False).values
                            .tobytes()).hexdigest()
    return digest[:10]


def table_label(caption: str, words: int = 8) -> str:
    """The first ``words`` words of a caption: the accessible name of the table's scroll box."""
    parts = escape.plain(caption).split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def turned(table: pd.DataFrame, header: str = "") -> pd.DataFrame:
    """``table`` turned for reading: its first column's values become the column names, its other columns the
    rows (named in a first column headed ``header``). For a table with few rows and many columns (a value per
    demographic per model), which would otherwise run off the page."""
    first = table.columns[0]
    out = table.set_index(first).T.rename_axis(None, axis=1).reset_index(names=header or " ")
    out.columns = [str(c) for c in out.columns]
    return out.infer_objects()


def styled(table: pd.DataFrame, digits: int = 3, headers: dict | None = None, uuid: str = "",
           code: tuple = ()):
    """The Styler ``show`` puts in its figure: columns in display order with readers' headers (``headers``
    overrides per column), floats rounded to ``digits`` (a float column of whole numbers without decimals; a
    nonzero value that would round to zero in scientific notation, ``_rounded``), numbers thousands separated with a
    true minus sign, booleans as "yes" / "no", a cell
    that is a name of ``CELL_WORDS`` in its words, a missing value as ``MISSING``, text cells and headers escaped,
    text left and numbers right, no index; its element ids start with ``uuid`` (default: one made from the cells,
    the same in every run). The text cells of the ``code`` columns (names a reader types: a data set's registry
    name) show as code, ``<code>name</code>``, escaped."""
    order, labels = grouped(list(table.columns), headers)
    frame = table[order].copy()
    for c in [c for c in frame.columns if _is_flag(frame[c])]:
        frame[c] = frame[c].map(YES_NO, na_action="ignore").astype(object)
    for c in [c for c in frame.columns if frame[c].dtype == object]:
        frame[c] = frame[c].map(lambda v: CELL_WORDS.get(v, v) if isinstance(v, str) else v)
    floats = frame.select_dtypes("float").columns
    whole = [c for c in floats if frame[c].dropna().map(lambda v: float(v).is_integer()).all()]
    numbers = list(frame.select_dtypes("number").columns)
    texts = [c for c in frame.columns if c not in numbers]
    formats = {c: _whole if c in whole else _rounded(digits) for c in floats}
    formats.update({c: _whole for c in frame.select_dtypes("integer").columns})
    position = {c: i for i, c in enumerate(frame.columns)}
    frame.columns = pd.MultiIndex.from_tuples(labels) if isinstance(labels[0], tuple) else labels
    key = {c: frame.columns[position[c]] for c in position}
    styles = [{"selector": f"td.col{position[c]}", "props": "text-align: right; white-space: nowrap;"}
              for c in numbers]
    # a long text (a generated continuation, a description) wraps in a column wide enough to read it; a short one
    # (a label, "17.0%* (↓ 38%)") takes the width it needs, and wraps only where the page is too narrow for it
    short = {c for c in texts if frame.iloc[:, position[c]].astype(str).str.len().max() <= SHORT_TEXT}
    styles += [{"selector": f"td.col{position[c]}", "props": "text-align: left;" + ("" if c in short else
                                                                                     " min-width: 7em;")}
               for c in texts]
    return (
        frame.style.hide(axis="index")
        .format({key[c]: f for c, f in formats.items()}, na_rep=MISSING)
        .format(escape="html", subset=[key[c] for c in texts if c not in code], na_rep=MISSING)
        .format(_as_code, subset=[key[c] for c in texts if c in code], na_rep=MISSING)
        .format_index(escape="html", axis=1, level=list(range(frame.columns.nlevels)))
        .set_table_styles(styles)
        .set_uuid(uuid or _uuid(table, ""))
    )


def _as_code(value) -> str:
    return f"<code>{escape.html(value)}</code>"


def show(table: pd.DataFrame, caption: str, digits: int = 3, csv: str | None = None,
         headers: dict | None = None, turn: str | None = None, code: tuple = ()) -> Table:
    """A ``Table`` of ``table`` under ``caption`` (escaped; ``csv``, the table's address relative to the page,
    ``toxlib.publish.results.csv_href``, linked at its end): see ``styled`` for the cells and headers; with
    ``turn``, the table shown ``turned`` (``turn``: the new first column's header); the ``code`` columns' texts as
    code. The written CSV keeps every value as it is.

    The caption should say which model, scorer, data subset and sample size the numbers come from.
    """
    if table.empty:
        raise ValueError(f"refusing to show an empty table ({caption!r}): an upstream step produced no rows")
    if turn is not None:
        table = turned(table, turn)
    return Table(styled(table, digits, headers, _uuid(table, caption), code), escape.caption(caption) + csv_link(csv),
                 table_label(caption))
