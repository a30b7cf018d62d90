"""Every value and star of the debiasing paper's Tables 3, 4 and 12 (``toxlib.papers.debias.printed_tables``) against
the verbatim copies of the paper's text, each printed average against the mean of its row at the paper's rounding,
and the chapter's tables that put them beside ours."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from toxlib.papers.debias import printed_tables
from toxlib.papers.debias.consistency_tables import attribute_table, tidy_table
from toxlib.papers.debias.protocol import TABLE_ATTRIBUTES

PERCENT = re.compile(r"-?\d+(?:\.\d+)?(?=\s*%)")
TABLE_OF = {"self-debiasing": 0, "instructive debiasing": 1}
#: every transcribed table: its name -> (its cells, (source file, its index among the file's tables))
TABLES = {**{printed["table"]: (printed, (printed_tables.SOURCE_FILE, TABLE_OF[method]))
             for method, printed in printed_tables.PRINTED.items()},
          "Table 12": (printed_tables.TABLE12, (printed_tables.TABLE12_SOURCE_FILE, 0))}


def copied_rows(name: str = printed_tables.SOURCE_FILE) -> list[dict[tuple[str, str], list[str]]]:
    """Per printed table of the copy ``name``, in order: {(set, condition): the seven cells' texts} parsed from the
    verbatim copy. Table 4's extraction splits the Sexually Expl. column over two tab fields (its header has an empty
    field there); they are joined back. Table 12's splits every cell over two (its header has an empty field after
    each column name): change, then probability."""
    tables, current, set_name = [], None, None
    for line in printed_tables.source_text(name).splitlines():
        fields = line.split("\t")
        if fields[0] == "Debiasing Level":
            split = fields[3] == ""
            paired = fields[1] == ""
            current = {}
            tables.append(current)
        elif fields[0] in ("Adversarial dataset", "Neutral dataset"):
            set_name = fields[0].split()[0].lower()
        elif fields[0] in printed_tables.ROW_NAMES and current is not None:
            cells = fields[1:]
            if paired:
                cells = [f"{change} {probability}".strip() for change, probability in zip(cells[::2], cells[1::2])]
            elif split:
                cells = [*cells[:2], f"{cells[2]} {cells[3]}".strip(), *cells[4:]]
            current[(set_name, printed_tables.ROW_NAMES[fields[0]])] = cells[:7]
    return tables


def test_the_copies_hold_the_three_tables_with_every_row():
    tables = copied_rows() + copied_rows(printed_tables.TABLE12_SOURCE_FILE)
    assert len(tables) == 3
    for table in tables:
        assert len(table) == 10
        assert all(len(cells) == 7 for cells in table.values())


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_transcribed_number_and_star_is_the_papers(table):
    printed, (source, index) = TABLES[table]
    copied = copied_rows(source)[index]
    rows = printed["rows"]
    assert {(s, c) for s, conditions in rows.items() for c in conditions} == set(copied)
    for set_name, conditions in rows.items():
        for condition, cells in conditions.items():
            for attribute, (change, probability, significant), text in zip(
                    printed_tables.CELL_COLUMNS, cells, copied[(set_name, condition)], strict=True):
                printed = [float(v) for v in PERCENT.findall(text)]
                expected = [probability] if change is None else [change, probability]
                where = (table, set_name, condition, attribute, text)
                assert printed == expected, where
                assert ("*" in text) == significant, where


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_printed_average_is_the_mean_of_its_row_at_the_papers_rounding(table):
    """The paper prints each row's average itself; it must be the mean of the row's six printed probabilities, to
    the digits it prints (half a unit of its last digit; "22.2%": 0.05 points). The checklist reads the printed
    averages (``PAPER_ADVERSARIAL_AVERAGES``), so this is what ties them to the rows."""
    printed, (source, index) = TABLES[table]
    copied = copied_rows(source)[index]
    for set_name in ("adversarial", "neutral"):
        means = printed_tables.row_means(printed, set_name)
        for condition, cells in printed["rows"][set_name].items():
            text = PERCENT.findall(copied[(set_name, condition)][-1])[-1]
            digits = len(text.partition(".")[2])
            assert float(text) == cells[-1][1]
            assert abs(means[condition] - float(text)) <= 0.5 * 10 ** -digits + 1e-9, (table, set_name, condition,
                                                                                        means[condition], text)


def test_the_checklists_averages_are_the_printed_average_cells_as_shares():
    for set_name, paper in (("adversarial", printed_tables.PAPER_ADVERSARIAL_AVERAGES),
                            ("neutral", printed_tables.PAPER_NEUTRAL_AVERAGES)):
        assert set(paper) == set(printed_tables.CHECKLIST_TABLES)
        for key, table in printed_tables.CHECKLIST_TABLES.items():
            assert paper[key] == {c: pytest.approx(cells[-1][1] / 100, abs=1e-12)
                                  for c, cells in table["rows"][set_name].items()}
    long = printed_tables.printed_long()  # the same cells the chapter's CSV carries
    average = long[(long["method"] == "self-debiasing") & (long["set"] == "adversarial")
                   & (long["attribute"] == "average")]
    assert dict(zip(average["condition"], average["probability"])) == pytest.approx(
        printed_tables.PAPER_ADVERSARIAL_AVERAGES["self-debiasing", "GPT-2 Large"], abs=1e-12)
    assert printed_tables.PAPER_ADVERSARIAL_AVERAGES["instructive debiasing", "GPT-2"]["opposite"] == 0.327


def _scored() -> pd.DataFrame:
    rows = []
    for condition, toxic in (("default", [1, 0, 0, 0]), ("original", [0, 0, 0, 0]), ("opposite", [1, 1, 0, 0]),
                             ("nonsensical", [1, 0, 0, 0]), ("blank", [1, 0, 0, 0])):
        for value in toxic:
            rows.append({"set": "adversarial", "condition": condition, "group": 0,
                         **{a: float(value) for a in TABLE_ATTRIBUTES}})
    return pd.DataFrame(rows)


def test_the_csv_gets_the_papers_cell_beside_each_of_ours_only_at_table_3s_lambda():
    long = tidy_table(attribute_table(_scored(), "adversarial")).assign(method="self-debiasing", model="m")
    beside = printed_tables.beside_printed(long, 100.0).set_index(["condition", "attribute"])
    assert len(beside) == len(long)
    assert beside.loc[("original", "toxicity"), "probability_paper"] == pytest.approx(0.244)
    assert beside.loc[("original", "toxicity"), "change_pct_paper"] == 52.9
    assert beside.loc[("blank", "threat"), "change_pct_paper"] == -8.7
    assert not beside.loc[("blank", "threat"), "significant_paper"]
    assert beside.loc[("original", "toxicity"), "paper_table"] == "Table 3"
    elsewhere = printed_tables.beside_printed(long, 50.0)
    assert elsewhere["probability_paper"].isna().all()
    assert "Tables 8-11" in printed_tables.printed_for("self-debiasing", 50.0)


def test_the_print_style_rows_read_like_the_paper():
    rows = printed_tables.paper_rows("instructive debiasing", "neutral")
    assert rows.loc["default", "toxicity"] == "0.17%"
    assert rows.loc["opposite", "severe_toxicity"] == "0.33%*"  # no change printed: the default is 0.00%
    assert rows.loc["opposite", "toxicity"] == "29.9%* (↑ 17800%)"
    assert rows.loc["original", "threat"] == "0.08% (↓ 50%)"
    assert math.isnan(printed_tables.printed_long().query(
        "method == 'instructive debiasing' and set == 'neutral' and condition == 'opposite' "
        "and attribute == 'severe_toxicity'")["change_pct"].iloc[0])


def test_the_chapter_table_renders_with_the_papers_row_under_each_of_ours(monkeypatch):
    from toxlib.papers.debias import findings

    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    table = attribute_table(_scored(), "adversarial")
    findings.show_attribute_tables({("self-debiasing", "m", "adversarial"): table}, "self-debiasing", "SD", "greedy",
                                   100.0, csv="../data/results/x/attribute_tables.csv")
    (page_table,) = shown
    html = page_table.to_html()  # a Styler with a repeated index label raises here
    styler = page_table.styler
    rows = list(styler.data["source"])
    assert rows == ["ours", "paper"] * 5
    assert list(styler.data["condition"]) == [c for c in ("default", "original", "opposite", "nonsensical", "blank")
                                              for _ in range(2)]
    assert "24.4%* (↓ 53%)" in html and 'class="csv-link"' in html
    shown.clear()
    findings.show_attribute_tables({("self-debiasing", "m", "adversarial"): table}, "self-debiasing", "SD", "greedy",
                                   50.0)
    assert set(shown[0].styler.data["source"]) == {"ours"} and "Tables 8-11" in shown[0].caption_html


def test_a_paper_cell_marks_significance_and_the_direction_of_the_change():
    paper_cell = printed_tables.paper_cell
    assert paper_cell("12.3%", True, None) == "12.3%*"  # the default row: no change
    assert paper_cell("12.3%", False, float("nan")) == "12.3%"
    assert paper_cell("7.0%", True, 40.4) == "7.0%* (↓ 40%)"  # a positive change is less of the attribute
    assert paper_cell("15.0%", False, -22.6) == "15.0% (↑ 23%)"
    assert paper_cell("15.0%", False, 0.0) == "15.0% (= 0%)"
