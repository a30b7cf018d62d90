"""Showing a table in a notebook: a captioned, rounded, index-free HTML table (pandas Styler)."""

from __future__ import annotations

import pandas as pd

#: how a missing value (NaN: a value the paper does not print, a statistic with no data, a failed score) is shown
MISSING = "–"


def csv_link(href: str | None) -> str:
    """The caption's download link to the table's CSV (``href`` relative to the page), or "" when there is none."""
    return f' <a class="csv-link" href="{href}" download>CSV</a>' if href else ""


def show(table: pd.DataFrame, caption: str, digits: int = 3, csv: str | None = None):
    """A Styler of ``table`` with ``caption`` above it: floats rounded to ``digits``, except a float column whose
    values are all whole numbers (counts stored as floats beside a missing value), shown without decimals; a
    missing value shown as ``MISSING``. The written CSV keeps every value as it is; ``csv``, its address relative
    to the page (``toxlib.report.results.csv_href``), is linked at the caption's end.

    The caption should say which model, scorer, data subset and sample size the numbers come from.
    """
    if table.empty:
        raise ValueError(f"refusing to show an empty table ({caption!r}): an upstream step produced no rows")
    floats = table.select_dtypes("float").columns
    whole = [c for c in floats if table[c].dropna().map(lambda v: float(v).is_integer()).all()]
    numbers = table.select_dtypes("number").columns
    texts = table.columns.difference(numbers)
    return (
        table.style.hide(axis="index")
        .set_properties(subset=list(texts), **{"text-align": "left", "min-width": "6em", "max-width": "30em"})
        .set_properties(subset=list(numbers), **{"text-align": "right"})
        .format({c: "{:.0f}" if c in whole else f"{{:.{digits}f}}" for c in floats}, na_rep=MISSING)
        .set_caption(caption + csv_link(csv))
        .set_table_styles(
            [
                {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold;"},
                {"selector": "td, th", "props": "padding: 2px 10px; vertical-align: top;"},
            ]
        )
    )
