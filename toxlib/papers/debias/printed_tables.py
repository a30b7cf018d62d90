"""The debiasing paper's printed Tables 3 and 4, to sit beside the chapter's analogues, its Table 12, and the averages
the checklist's tests read from the three.

Table 3 is Self-Debiasing on GPT-2 Large at λ = 100; Table 4 is Instructive Debiasing on GPT-3 (text-davinci-003);
both scored by Perspective on the paper's 1,199 adversarial and 1,199 neutral prompts. The values are transcribed
from the plain-text extraction of the paper (``../shared/papers/003_af3f8ca5a0a64616.txt``, lines 144-174, copied
verbatim in ``sources/debias_tables_3_4.txt``); ``tests/papers/debias/test_debias_printed.py`` checks every value
and star against that copy. Each cell is (relative change %, probability %, significant) as printed:

- the change is the signed number the paper prints, (default - condition) / default x 100, the same convention as
  ``attribute_table``'s change_pct (positive: less of the attribute). The extraction displaced the arrows, and a
  few printed arrows disagree with their own numbers (Table 4, neutral blank: "↑ 50.0%" for threat going 0.17% to
  0.08%), so the arrows are not transcribed; the numbers are;
- None where the paper prints no change (its default is 0.00%, Table 4's neutral set);
- the paper prints "0.00%" as the change of some cells whose default is 0.00% too (ours: empty there), and a few
  averages that do not follow from its own cells (Table 4, neutral blank: 75.0% for 0.06% going to 0.01%); they
  are kept as printed;
- significant: the cell carries the paper's * (a t-test against default; the paper's average column has none).

``TABLE12`` is the appendix's Table 12 (Instructive Debiasing on GPT-2), transcribed the same way from lines 436-450
(``sources/debias_table_12.txt``); no chapter row stands beside it, so it is not in ``PRINTED`` (nor in
``attribute_tables.csv``). ``PAPER_ADVERSARIAL_AVERAGES`` and ``PAPER_NEUTRAL_AVERAGES`` are the three tables'
printed "Average" cells as shares, read from the rows here (typed once); the test checks each against the mean of
its row's six cells (``row_means``) at the paper's rounding.
"""

from __future__ import annotations

import math
from importlib import resources

import pandas as pd

from toxlib.papers.debias.protocol import TABLE_ATTRIBUTES

SOURCE_FILE = "sources/debias_tables_3_4.txt"
#: the verbatim copy of Table 12
TABLE12_SOURCE_FILE = "sources/debias_table_12.txt"
#: the printed tables' columns, in their order: the six attributes and the average
CELL_COLUMNS = (*TABLE_ATTRIBUTES, "average")
#: the printed tables' row names -> the chapter's condition names
ROW_NAMES = {"Default": "default", "Original": "original", "Opposite": "opposite", "nonsensical": "nonsensical",
             "Nonsensical": "nonsensical", "Blank": "blank"}
#: the λ of the paper's Table 3 (its Tables 8-11, not transcribed here, give λ 10 and 50)
TABLE3_DECAY = 100.0


def _default(*probabilities: float) -> list[tuple[float | None, float, bool]]:
    return [(None, p, False) for p in probabilities]


S, N = True, False  # the cell carries the paper's * / does not

#: method -> {"table", "model", "rows": {set: {condition: [(change %, probability %, significant) per CELL_COLUMNS]}}}
PRINTED = {
    "self-debiasing": {
        "table": "Table 3", "model": "GPT-2 Large, λ = 100",
        "rows": {
            "adversarial": {
                "default": _default(51.9, 10.0, 18.7, 5.8, 41.4, 5.4, 22.2),
                "original": [(52.9, 24.4, S), (87.5, 1.3, S), (47.8, 9.8, S), (55.1, 2.6, S), (55.2, 18.5, S),
                             (67.7, 1.8, S), (56.2, 9.7, N)],
                "opposite": [(38.9, 31.7, S), (71.7, 2.8, S), (34.8, 12.2, S), (33.3, 3.8, S), (39.1, 25.2, S),
                             (63.1, 2.0, S), (41.6, 13.0, N)],
                "nonsensical": [(26.8, 37.9, S), (57.5, 4.3, S), (19.6, 15.0, S), (33.3, 3.8, S), (23.0, 31.9, S),
                                (64.6, 1.9, S), (28.8, 15.8, N)],
                "blank": [(12.9, 45.2, S), (25.8, 7.4, S), (11.6, 16.5, N), (-8.7, 6.3, N), (17.1, 34.3, S),
                          (23.1, 4.2, N), (14.5, 19.0, N)],
            },
            "neutral": {
                "default": _default(0.58, 0.00, 0.08, 0.42, 0.17, 0.25, 0.25),
                "original": [(85.7, 0.08, S), (0.00, 0.00, N), (0.00, 0.08, S), (100.0, 0.00, S), (100.0, 0.00, S),
                             (66.7, 0.08, S), (83.3, 0.04, N)],
                "opposite": [(42.9, 0.33, S), (0.00, 0.00, N), (0.00, 0.08, S), (0.00, 0.42, N), (100.0, 0.00, S),
                             (0.00, 0.25, N), (27.8, 0.18, N)],
                "nonsensical": [(57.1, 0.25, N), (0.00, 0.00, N), (-100.0, 0.17, N), (40.0, 0.25, N), (50.0, 0.08, N),
                                (66.7, 0.08, N), (44.4, 0.14, N)],
                "blank": [(57.1, 0.25, N), (0.00, 0.00, N), (-100.0, 0.17, N), (60.0, 0.17, N), (0.00, 0.17, N),
                          (66.7, 0.08, N), (44.4, 0.14, N)],
            },
        },
    },
    "instructive debiasing": {
        "table": "Table 4", "model": "GPT-3 text-davinci-003",
        "rows": {
            "adversarial": {
                "default": _default(31.2, 1.2, 13.1, 3.2, 21.1, 1.7, 11.9),
                "original": [(36.6, 19.8, S), (71.4, 0.3, S), (38.9, 8.0, S), (52.6, 1.5, S), (40.3, 12.6, S),
                             (50.0, 0.8, S), (39.7, 7.2, N)],
                "opposite": [(-162.3, 81.8, S), (-1550.0, 19.3, S), (-34.4, 17.6, S), (-63.2, 5.2, S),
                             (-215.0, 66.5, S), (-215.0, 5.3, S), (-173.9, 32.6, N)],
                "nonsensical": [(-14.4, 35.7, S), (-135.7, 2.8, S), (2.5, 12.8, N), (36.8, 2.0, N), (-17.0, 24.7, S),
                                (-35.0, 2.3, S), (-12.3, 13.4, N)],
                "blank": [(12.6, 27.3, N), (-28.6, 1.5, N), (11.5, 11.6, N), (44.7, 1.8, S), (9.5, 19.1, N),
                          (0.00, 1.7, N), (11.9, 10.5, N)],
            },
            "neutral": {
                "default": _default(0.17, 0.00, 0.00, 0.17, 0.00, 0.00, 0.06),
                "original": [(0.00, 0.17, N), (0.00, 0.00, N), (0.00, 0.00, N), (50.0, 0.08, N), (0.00, 0.00, N),
                             (None, 0.08, N), (0.0, 0.06, N)],
                "opposite": [(-17800.0, 29.9, S), (None, 0.33, S), (None, 0.58, S), (-350.0, 0.75, S), (None, 11.6, S),
                             (None, 0.42, S), (-12950.0, 7.3, N)],
                "nonsensical": [(50.0, 0.08, N), (0.00, 0.00, N), (0.00, 0.00, N), (0.00, 0.17, N), (0.00, 0.00, N),
                                (0.00, 0.00, N), (25.0, 0.042, N)],
                "blank": [(0.00, 0.00, N), (0.00, 0.00, N), (0.00, 0.00, N), (50.0, 0.08, N), (0.00, 0.00, N),
                          (0.00, 0.00, N), (75.0, 0.01, N)],
            },
        },
    },
}


#: The paper's Table 12 (appendix): Instructive Debiasing on GPT-2, cells as in ``PRINTED``.
TABLE12 = {
    "table": "Table 12", "model": "GPT-2",
    "rows": {
        "adversarial": {
            "default": _default(51.9, 10.0, 18.7, 5.8, 41.4, 5.4, 22.2),
            "original": [(-23.8, 64.1, S), (-25.0, 12.5, S), (-16.1, 21.7, S), (18.8, 4.7, N), (-32.5, 54.8, S),
                         (-13.8, 6.2, S), (-23.2, 27.3, N)],
            "opposite": [(-40.8, 73.2, S), (-85.8, 18.6, S), (-32.6, 24.8, S), (-49.3, 8.6, S), (-51.0, 62.5, S),
                         (-55.4, 8.4, S), (-47.2, 32.7, N)],
            "nonsensical": [(-7.9, 56.0, N), (-7.5, 10.8, N), (8.0, 17.2, N), (-23.2, 7.1, N), (-4.6, 43.3, N),
                            (-3.1, 5.6, N), (-5.1, 23.3, N)],
            "blank": [(-2.9, 53.4, N), (-2.5, 10.3, N), (-2.2, 19.1, N), (-5.8, 6.1, N), (-4.6, 43.3, N),
                      (12.3, 4.8, N), (-2.8, 22.8, N)],
        },
        "neutral": {
            "default": _default(0.58, 0.00, 0.08, 0.42, 0.17, 0.25, 0.25),
            "original": [(-28.6, 0.75, N), (0.00, 0.00, N), (-100.0, 0.17, N), (100.0, 0.00, N), (-100.0, 0.33, N),
                         (33.3, 0.17, N), (5.6, 0.24, N)],
            "opposite": [(-457.1, 3.25, S), (None, 0.25, S), (-1000.0, 0.92, S), (-160.0, 1.08, N),
                         (-1250.0, 2.25, S), (-300.0, 1.00, S), (-483.3, 1.46, N)],
            "nonsensical": [(-57.1, 0.25, N), (0.00, 0.00, N), (100.0, 0.00, N), (60.0, 0.17, N), (50.0, 0.08, N),
                            (33.3, 0.17, N), (55.6, 0.11, N)],
            "blank": [(57.1, 0.25, N), (0.00, 0.00, N), (0.00, 0.08, N), (0.00, 0.42, N), (0.00, 0.17, N),
                      (0.00, 0.25, N), (22.2, 0.195, N)],
        },
    },
}

#: (method, model as the paper's Table 5 names it) -> the printed table of its rows (Tables 3, 4 and 12)
CHECKLIST_TABLES = {
    ("self-debiasing", "GPT-2 Large"): PRINTED["self-debiasing"],
    ("instructive debiasing", "GPT-3 text-davinci-003"): PRINTED["instructive debiasing"],
    ("instructive debiasing", "GPT-2"): TABLE12,
}


def _printed_averages(set_name: str) -> dict:
    """{(method, model): {condition: the row's printed "Average" probability as a share}} of ``CHECKLIST_TABLES``
    (rounded to 8 decimals: the share of the printed percentage, without the float noise of dividing by 100)."""
    return {key: {condition: round(cells[-1][1] / 100, 8) for condition, cells in table["rows"][set_name].items()}
            for key, table in CHECKLIST_TABLES.items()}


#: The paper's average probability (mean over the six attributes, adversarial set, Perspective) per condition, as
#: printed: Table 3 (Self-Debiasing, λ = 100, GPT-2 Large), Table 4 (Instructive, GPT-3), Table 12 (Instructive,
#: GPT-2).
PAPER_ADVERSARIAL_AVERAGES = _printed_averages("adversarial")
#: The same for the neutral set (Tables 3, 4 and 12).
PAPER_NEUTRAL_AVERAGES = _printed_averages("neutral")


def row_means(table: dict, set_name: str) -> dict[str, float]:
    """{condition: the mean of the row's six printed attribute probabilities, in percent} of one printed table
    (``PRINTED[method]`` or ``TABLE12``): what its "Average" column should print, before the paper's rounding."""
    return {condition: sum(probability for _, probability, _ in cells[:len(TABLE_ATTRIBUTES)]) / len(TABLE_ATTRIBUTES)
            for condition, cells in table["rows"][set_name].items()}


def source_text(name: str = SOURCE_FILE) -> str:
    """The verbatim copy of the two tables (``SOURCE_FILE``), or of Table 12 (``TABLE12_SOURCE_FILE``)."""
    return resources.files("toxlib.papers.debias").joinpath(name).read_text(encoding="utf-8")


def printed_long() -> pd.DataFrame:
    """Every printed cell as a row: method, set, condition, attribute (``CELL_COLUMNS``), probability (a share in
    [0, 1], the printed percentage / 100), change_pct (NaN where none is printed), significant, table,
    paper_model."""
    rows = []
    for method, printed in PRINTED.items():
        for set_name, conditions in printed["rows"].items():
            for condition, cells in conditions.items():
                for attribute, (change, probability, significant) in zip(CELL_COLUMNS, cells):
                    rows.append((method, set_name, condition, attribute, probability / 100,
                                 math.nan if change is None else change, significant, printed["table"],
                                 printed["model"]))
    return pd.DataFrame(rows, columns=["method", "set", "condition", "attribute", "probability", "change_pct",
                                       "significant", "table", "paper_model"])


def printed_for(method: str, decay_constant: float | None = None) -> str | None:
    """Why the paper's values can or cannot sit beside ``method``'s table: None when they can (Instructive
    Debiasing; Self-Debiasing at the λ of Table 3), else a sentence saying which table has them."""
    if method not in PRINTED:
        return f"the paper prints no table for {method!r}"
    if method == "self-debiasing" and decay_constant is not None and float(decay_constant) != TABLE3_DECAY:
        return (f"the paper's Table 3 is λ = {TABLE3_DECAY:g}; its Tables 8-11 give λ 10 and 50 (not transcribed "
                f"here), so no paper value stands beside λ = {decay_constant:g}")
    return None


def beside_printed(long: pd.DataFrame, decay_constant: float) -> pd.DataFrame:
    """``tidy_table`` rows with method, set, condition, attribute (the chapter's ``attribute_tables.csv``) and the
    paper's printed cell of the same method, set, condition and attribute beside each: probability_paper,
    change_pct_paper, significant_paper, paper_table, paper_model (empty for a method or λ the paper does not
    print; see ``printed_for``)."""
    printed = printed_long().rename(columns={"probability": "probability_paper", "change_pct": "change_pct_paper",
                                             "significant": "significant_paper", "table": "paper_table"})
    printed = printed[[printed_for(m, decay_constant) is None for m in printed["method"]]]
    return long.merge(printed, on=["method", "set", "condition", "attribute"], how="left", validate="many_to_one")


def paper_cell(probability: str, significant: bool, change: float | None) -> str:
    """One cell as the paper prints it: ``probability`` (already written, "12.3%"), * when ``significant``, and,
    unless ``change`` is None or NaN (the default row), the relative change to default with its direction:
    "12.3%* (↓ 40%)" (↓: less of the attribute than default, ↑: more)."""
    star = "*" if significant else ""
    if change is None or pd.isna(change):
        return f"{probability}{star}"
    return f"{probability}{star} ({'↓' if change > 0 else '↑' if change < 0 else '='} {abs(change):.0f}%)"


def paper_rows(method: str, set_name: str) -> pd.DataFrame:
    """The printed rows of ``method`` on ``set_name`` in the chapter's print style (``paper_style``): index the
    conditions, one column per attribute and the average, cells "probability% (↓ change%)" with the paper's *."""
    cells = PRINTED[method]["rows"][set_name]
    out = {}
    for i, attribute in enumerate(CELL_COLUMNS):
        column = []
        for condition, row in cells.items():
            change, probability, significant = row[i]
            column.append(paper_cell(f"{probability}%", significant, None if condition == "default" else change))
        out[attribute] = column
    return pd.DataFrame(out, index=pd.Index(list(cells), name="condition"))
