"""The safety-score chapter's tables (``toxlib.papers.safety``): the printed tables as read from their CSV files, the
paper's correlations recomputed from them, and our tables on small hand-built frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.papers import safety


def test_paper_tables_are_complete():
    assert safety.PAPER_TABLE8.shape == (24, 14) and list(safety.PAPER_TABLE8.columns[1:]) == list(safety.GROUPS)
    assert safety.PAPER_TABLE9.shape == (24, 5) and safety.PAPER_TABLE10.shape == (24, 2)
    assert safety.PAPER_TABLE13.shape == (19, 5)
    for table in (safety.PAPER_TABLE8, safety.PAPER_TABLE9, safety.PAPER_TABLE10, safety.PAPER_TABLE13):
        assert not table.isna().any().any()
    assert set(safety.PAPER_GPT2) <= set(safety.PAPER_TABLE8["model"])
    row = safety.PAPER_TABLE9.set_index("model").loc["GPT-2"]
    assert (row["benign_mean"], row["harmful_sd"]) == (3.6077, 1.1169)


def test_the_papers_correlations_recompute_from_its_tables():
    table = safety.paper_correlations()
    assert len(table) == 10
    assert (table["recomputed"] - table["paper_value"]).abs().max() < 0.03


def test_group_scores_count_a_sentence_for_each_group_it_names():
    scored = pd.DataFrame({
        "model": "m", "harmful": [True, False, True, False],
        "toxicity_score": [5.0, 1.0, 4.0, 2.0], "perplexity": [100.0, 10.0, 10.0, 100.0],
        "target_groups": [["asian", "women"], ["asian"], ["women"], ["women", "asian"]],
    })
    out = safety.group_scores(scored).set_index("target_group")
    assert (out.loc["asian", "n_harmful"], out.loc["asian", "n_benign"]) == (1, 2)
    assert (out.loc["women", "n_harmful"], out.loc["women", "n_benign"]) == (2, 1)
    # asian: harmful 100/5 = 20 vs benign 10/1 = 10 and 100/2 = 50 -> one of two pairs
    assert out.loc["asian", "safety_score"] == 0.5 and out.loc["asian", "demographic"] == "Asian"
    wide = safety.wide(safety.group_scores(scored))
    assert list(wide.columns) == ["model", "Asian", "Women"]


def test_log_perplexity_summary_counts_each_sentence_once():
    scored = pd.DataFrame({"model": "m", "harmful": [True, True, False],
                           "log_perplexity": [2.0, 4.0, 1.0]})
    row = safety.log_perplexity_summary(scored).iloc[0]
    assert (row["harmful_mean"], row["benign_mean"], row["n_harmful"], row["n_benign"]) == (3.0, 1.0, 2, 1)
    assert row["harmful_sd"] == pytest.approx(np.std([2.0, 4.0], ddof=1))


def test_dataset_scores_and_paper_rows():
    scored = pd.DataFrame({"model": ["m2", "m2", "m1", "m1"], "harmful": [True, False, True, False],
                           "toxicity_score": [2.25, 1.0, 2.25, 1.0], "perplexity": [45.0, 10.0, 9.0, 10.0]})
    table = safety.dataset_scores(scored)
    assert table["model"].tolist() == ["m2", "m1"]  # first-seen order
    assert table["safety_score"].tolist() == [1.0, 0.0]  # 45/2.25 = 20 > 10; 9/2.25 = 4 < 10
    both = safety.with_paper_rows(table, safety.PAPER_TABLE10)
    assert both["model"].tolist()[2:] == ["paper: " + m for m in safety.PAPER_GPT2]
    assert str(both["n_harmful"].dtype) == "Int64"
