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
