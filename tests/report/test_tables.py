"""How a table looks in the book (toxlib.report.tables.show): rounded floats, counts without decimals, a dash for a
missing value."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from toxlib.report.tables import MISSING, show


def _cells(styler) -> list[str]:
    return re.findall(r"<td[^>]*>([^<]*)</td>", styler.to_html())


def test_counts_stored_as_floats_show_without_decimals_and_missing_values_as_a_dash():
    table = pd.DataFrame({"n": [503.0, np.nan], "share": [0.5, 1.0], "r": np.array([0.25, 2.0], dtype="float32"),
                          "name": ["a", "b"]})
    assert _cells(show(table, "caption")) == ["503", "0.500", "0.250", "a", MISSING, "1.000", "2.000", "b"]
    assert _cells(show(table, "caption", digits=1))[1] == "0.5"


def test_an_empty_table_is_refused():
    with pytest.raises(ValueError, match="empty table"):
        show(pd.DataFrame({"a": []}), "nothing")


def test_a_table_links_its_csv_where_it_has_one_and_the_link_reaches_the_written_file():
    from pathlib import Path

    from toxlib.report.results import csv_href

    table = pd.DataFrame({"a": [1.0]})
    href = csv_href("rtp_detox", "table3")
    html = show(table, "Table 3", csv=href).to_html()
    assert re.search(r'<caption>Table 3 <a class="csv-link" href="\.\./data/results/rtp_detox/table3\.csv" download>'
                     r"CSV</a></caption>", html)
    assert "csv-link" not in show(table, "no file").to_html()
    root = Path(__file__).resolve().parents[2]
    assert (root / "notebooks" / href).resolve() == root / "data" / "results" / "rtp_detox" / "table3.csv"
    assert (root / "notebooks" / href).is_file()  # a committed table: the link works in a checkout too
    assert csv_href("safety_score", "perplexities", compress=True).endswith("perplexities.csv.gz")
