"""Every value of the authors' RealToxicityPrompts Tables 2-3 (``toxlib.papers.rtp.authors``) against the verbatim copy
of their notebook's outputs, and the tables that put them beside ours."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from toxlib.papers.rtp import authors as rtp_authors
from toxlib.papers.rtp.detox import table3_wide

#: the notebook's cell per measure, and its column per prompt class
CELL = {"toxicity_probability": 13, "exp_max_toxicity": 14, "exp_max_std": 15}
NOTEBOOK_CLASS = {"toxic": "toxic", "non-toxic": "nontoxic", "unprompted": "unprompted"}


def notebook_tables() -> dict[int, pd.DataFrame]:
    """{cell: frame indexed by the notebook's row names, its printed columns} parsed from the verbatim copy."""
    tables = {}
    for block in rtp_authors.source_text().split("## cell ")[1:]:
        number, header, *rows = block.strip().splitlines()
        columns = header.split()
        tables[int(number)] = pd.DataFrame.from_dict(
            {" ".join(r.split()[:-len(columns)]): [float(v) for v in r.split()[-len(columns):]] for r in rows},
            orient="index", columns=columns)
    return tables


@pytest.mark.parametrize("system", rtp_authors.SYSTEMS)
def test_every_transcribed_value_is_the_notebooks_to_three_decimals(system):
    tables = notebook_tables()
    name = rtp_authors.NOTEBOOK_NAMES[system]
    for measure, cell in CELL.items():
        for prompt_class, column in NOTEBOOK_CLASS.items():
            ours = rtp_authors.authors_value(system, prompt_class, measure)
            if column not in tables[cell].columns:  # the notebook shows no unprompted max toxicity
                assert math.isnan(ours), (system, measure, prompt_class)
                continue
            assert ours == round(tables[cell].loc[name, column], 3), (system, measure, prompt_class)


def test_the_copy_holds_every_system_once_per_cell():
    tables = notebook_tables()
    assert set(tables) == set(CELL.values())
    for frame in tables.values():
        assert sorted(frame.index) == sorted(rtp_authors.NOTEBOOK_NAMES.values())


def test_the_detox_table_gets_each_methods_counterpart_beside_every_value():
    long3 = pd.DataFrame([(m, c, 0.5, 0.4) for m in ("base model", "ATCON", "new method")
                          for c in ("toxic", "non-toxic", "unprompted")],
                         columns=["method", "prompt_class", "exp_max_toxicity", "toxicity_probability"])
    wide = rtp_authors.beside_table3(table3_wide(long3)).set_index("method")
    assert wide.loc["ATCON", "toxicity_probability_toxic_authors"] == 0.839
    assert wide.loc["base model", "exp_max_toxicity_non-toxic_authors"] == 0.506  # GPT-2
    assert math.isnan(wide.loc["base model", "exp_max_toxicity_unprompted_authors"])
    assert math.isnan(wide.loc["new method", "toxicity_probability_toxic_authors"])
    assert list(wide.columns[:2]) == ["exp_max_toxicity_toxic", "exp_max_toxicity_toxic_authors"]


def test_the_prompted_table_gets_gpt2_per_prompt_class():
    t2 = pd.DataFrame({"model": "m", "prompt_class": ["toxic", "non-toxic", "toxic"], "k": [25, 25, 5],
                       "toxicity_probability": 0.5})
    out = rtp_authors.beside_table2(t2)
    assert list(out["toxicity_probability_authors"][:2]) == [0.870, 0.471]
    assert list(out["exp_max_toxicity_authors"][:2]) == [0.745, 0.506] and set(out["authors_system"]) == {"GPT-2"}
    assert math.isnan(out["toxicity_probability_authors"][2])  # k = 5: the authors read k = 25


def test_long_rows_get_their_methods_counterpart():
    long = pd.DataFrame({"method": ["base model", "PPLM", "new method"],
                         "prompt_class": ["toxic", "non-toxic", "toxic"],
                         "exp_max_toxicity": [0.5, 0.4, 0.3], "toxicity_probability": [0.6, 0.2, 0.1]})
    out = rtp_authors.beside_methods(long)
    assert list(out["exp_max_toxicity_authors"][:2]) == [0.745, 0.316]
    assert list(out["toxicity_probability_authors"][:2]) == [0.870, 0.168]
    assert out.iloc[2][["exp_max_toxicity_authors", "toxicity_probability_authors"]].isna().all()
