"""Showing a table in a notebook: a captioned, rounded, index-free HTML table (pandas Styler)."""

from __future__ import annotations

import pandas as pd


def show(table: pd.DataFrame, caption: str, digits: int = 3):
    """A Styler of ``table`` with ``caption`` above it, floats rounded to ``digits``, NaN shown as "NaN".

    The caption should say which model, scorer, data subset and sample size the numbers come from.
    """
    if table.empty:
        raise ValueError(f"refusing to show an empty table ({caption!r}): an upstream step produced no rows")
    floats = table.select_dtypes("float").columns
    numbers = table.select_dtypes("number").columns
    texts = table.columns.difference(numbers)
    return (
        table.style.hide(axis="index")
        .set_properties(subset=list(texts), **{"text-align": "left", "min-width": "6em", "max-width": "30em"})
        .set_properties(subset=list(numbers), **{"text-align": "right"})
        .format({c: f"{{:.{digits}f}}" for c in floats}, na_rep="NaN")
        .set_caption(caption)
        .set_table_styles(
            [
                {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold;"},
                {"selector": "td, th", "props": "padding: 2px 10px; vertical-align: top;"},
            ]
        )
    )
