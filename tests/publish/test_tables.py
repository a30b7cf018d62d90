"""How a table looks in the book (toxlib.publish.tables.show): rounded floats, counts without decimals, a dash for a
missing value, readers' headers with the paper's value beside ours, the caption outside the scrolling box, and every
text escaped."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from toxlib.publish import escape
from toxlib.publish.headers import grouped, header
from toxlib.publish.tables import MISSING, show


def _cells(table) -> list[str]:
    return re.findall(r"<td[^>]*>([^<]*)</td>", table.to_html())


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

    from toxlib.publish.results import csv_href

    table = pd.DataFrame({"a": [1.0]})
    href = csv_href("rtp_detox", "table3")
    html = show(table, "Table 3", csv=href).to_html()
    assert re.search(r'<figcaption>Table 3 <a class="csv-link" href="\.\./data/results/rtp_detox/table3\.csv" '
                     r"download>CSV</a></figcaption>", html)
    assert "csv-link" not in show(table, "no file").to_html()
    root = Path(__file__).resolve().parents[2]
    assert (root / "notebooks" / href).resolve() == root / "data" / "results" / "rtp_detox" / "table3.csv"
    assert (root / "notebooks" / href).is_file()  # a committed table: the link works in a checkout too
    assert csv_href("safety_score", "perplexities", compress=True).endswith("perplexities.csv.gz")


def test_the_caption_stands_outside_the_box_that_scrolls():
    html = show(pd.DataFrame({"a": [1.0]}), "A long caption").to_html()
    caption, scroll = html.index("<figcaption>"), html.index('<div class="tx-scroll"')
    assert caption < scroll and "</figcaption>" in html[:scroll] and "<caption" not in html


def test_model_text_is_shown_as_text_in_cells_headers_and_caption():
    hostile = "<script>alert(1)</script> <h1>big</h1> <bos>"
    html = show(pd.DataFrame({hostile: [hostile], "n": [1]}), f"Caption {hostile}").to_html()
    assert "<script>" not in html and "<h1>" not in html and "<bos>" not in html
    assert html.count(escape.html(hostile)) == 4  # the cell, the header, the caption and the box's label


def test_headers_read_as_words_and_pair_ours_with_the_papers():
    assert header("exp_max_toxicity_non-toxic") == "expected max toxicity, non-toxic"
    assert header("n_prompts") == "prompts" and header("n_benign") == "benign" and header("Asian") == "Asian"
    assert header("wall_s") == "wall time (s)" and header("p_swear_given_toxic") == "P(swear word | flagged)"
    columns = ["method", "f1", "precision", "f1_paper", "precision_paper", "precision_diff", "n"]
    order, labels = grouped(columns)
    assert order == ["method", "f1", "f1_paper", "precision", "precision_paper", "precision_diff", "n"]
    assert labels == [("", "method"), ("F1", "ours"), ("F1", "paper"), ("precision", "ours"),
                      ("precision", "paper"), ("precision", "ours − paper"), ("", "n")]
    assert grouped(["a_b", "c"]) == (["a_b", "c"], ["a b", "c"])  # nothing beside ours: one header row
    html = show(pd.DataFrame({c: [0.5] for c in columns[1:]}).assign(method="x")[columns], "t").to_html()
    assert re.search(r'colspan="2"\s*>F1</th>', html) and re.search(r'colspan="3"\s*>precision</th>', html)
    assert "_paper" not in html and "exp_max" not in html


def test_a_chapter_can_name_its_own_headers():
    html = show(pd.DataFrame({"k": [25]}), "t", headers={"k": "generations per prompt"}).to_html()
    assert ">generations per prompt</th>" in html


def test_the_same_table_gives_the_same_html():
    table = pd.DataFrame({"a": [0.5], "b": ["x"]})
    assert show(table, "t").to_html() == show(table.copy(), "t").to_html()
    assert show(table, "t").to_html() != show(table, "u").to_html()  # two tables on a page keep their own ids


def test_a_table_with_many_columns_can_be_shown_turned():
    table = pd.DataFrame({"model": ["a", "b (paper)"], "Asian": [0.4, 0.5], "Black": [0.3, np.nan]})
    html = show(table, "t", turn="demographic").to_html()
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", html)
    assert headers == ["demographic", "a", "b (paper)"]
    assert _cells(show(table, "t", turn="demographic")) == ["Asian", "0.400", "0.500", "Black", "0.300", MISSING]


def test_two_columns_under_one_header_still_render():
    """"paper" (a paper's name) and "paper_value" (its printed number) both read "paper": the table renders both."""
    from toxlib.publish.tables import show

    table = pd.DataFrame({"paper": ["RTP", "SASS"], "paper_value": ["0.52", "0.80"], "n": [10, 20]})
    html = show(table, "Two papers").to_html()
    assert html.count(">RTP<") == 1 and html.count(">0.80<") == 1


def test_flags_read_yes_or_no_and_a_tiny_value_keeps_its_size_instead_of_reading_zero():
    table = pd.DataFrame({"dropped": [False, True, None], "p": [6.39489e-10, 0.0, 0.0123],
                          "d": [-3.2e-05, 0.25, np.nan], "kept": np.array([True, False, True])})
    assert _cells(show(table, "caption")) == ["no", "6.4e-10", "−3.2e-05", "yes",
                                              "yes", "0.000", "0.250", "no",
                                              MISSING, "0.012", MISSING, "yes"]
    assert _cells(show(table, "caption", digits=4))[9] == "0.0123"
    assert _cells(show(table, "caption", digits=1))[9] == "1.2e-02"  # 0.0 at one decimal would say it is zero
    assert table["dropped"].tolist() == [False, True, None]  # the table (and its CSV) keep their values
    numbers = pd.DataFrame({"pool": [10000, -1200], "mean": [1234.5678, -0.0625], "whole": [6514.0, 2.0]})
    assert _cells(show(numbers, "caption")) == ["10,000", "1,234.568", "6,514", "−1,200", "−0.062", "2"]


def test_a_pivots_pairs_of_names_read_as_a_two_level_header_not_as_tuples():
    long = pd.DataFrame({"attribute": ["toxicity", "insult"] * 2, "scorer": ["bilstm"] * 2 + ["distilled"] * 2,
                         "auc": [0.9, 0.8, 0.95, 0.85], "pearson": [0.7, 0.6, 0.75, 0.65]})
    wide = long.pivot_table(index="attribute", columns="scorer", values=["pearson", "auc"]).reset_index()
    html = show(wide, "caption").to_html()
    heads = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>.*?</th>", html)]
    assert not [h for h in heads if h.startswith("(")], heads
    assert {"AUC", "Pearson r", "bilstm", "distilled", "attribute"} <= set(heads)
    assert _cells(show(wide, "caption"))[:5] == ["insult", "0.800", "0.850", "0.600", "0.650"]


def test_attribute_and_checklist_names_read_as_words_in_cells_and_stay_names_in_the_table():
    from toxlib.papers.debias.checklist import TEST_WORDS, TESTS
    from toxlib.publish.tables import CELL_WORDS
    from toxlib.scorers.base import ATTRIBUTES

    named = [n for n in (*ATTRIBUTES, *TESTS) if "_" in n]
    assert set(named) <= set(CELL_WORDS), "every attribute or test name with an underscore needs its words"
    assert all(CELL_WORDS[t] == TEST_WORDS[t] for t in TESTS if t in CELL_WORDS)  # one reading in cells and notes
    table = pd.DataFrame({"attribute": ["severe_toxicity", "toxicity"], "note": ["severe_toxicity is rare", None]})
    assert _cells(show(table, "caption")) == ["severe toxicity", "severe_toxicity is rare", "toxicity", MISSING]
    assert table["attribute"].tolist() == ["severe_toxicity", "toxicity"]


def test_code_columns_show_their_texts_as_escaped_code_and_other_columns_as_text():
    table = pd.DataFrame({"name": ["rtp_sample", "<b>x</b>"], "description": ["rtp_sample", "a"], "n": [1, 2]})
    page = show(table, "Data cards", code=("name",)).to_html()
    assert "<code>rtp_sample</code>" in page and "<code>&lt;b&gt;x&lt;/b&gt;</code>" in page
    assert page.count("<code>") == 2  # the description's rtp_sample stays text
