"""The datasets chapter's statistics (``toxlib.studies.datasets``) against numpy and counts by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.studies import datasets as describe


def test_rtp_statistics_against_numpy():
    frame = pd.DataFrame({"prompt_toxicity": [0.1, 0.6, 0.9, 0.3, np.nan, 0.5],
                          "continuation_toxicity": [0.2, 0.1, 0.4, 0.8, 0.3, np.nan]})
    s = describe.rtp_statistics(frame)
    both = frame.dropna()
    assert s["pearson_r"] == pytest.approx(np.corrcoef(both["prompt_toxicity"], both["continuation_toxicity"])[0, 1])
    assert s["n_pearson"] == 4
    assert (s["n_prompt_scored"], s["n_toxic_prompts"]) == (5, 3)  # 0.6, 0.9 and 0.5 (>= 0.5)
    assert s["share_toxic_prompts"] == pytest.approx(3 / 5)


def test_group_counts_count_each_named_group():
    frame = pd.DataFrame({"target_groups": [["a"], ["a", "b"], ["b"]], "harmful": [True, False, False]})
    table = describe.group_label_counts(frame).set_index("target_group")
    assert table.loc["a", ["harmful", "benign", "total"]].tolist() == [1, 1, 2]
    assert table.loc["b", ["harmful", "benign", "total"]].tolist() == [0, 2, 2]
