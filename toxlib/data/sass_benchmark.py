"""The SASS benchmark, its human scores, the recorded Perspective/GPT-3 predictions and the paper's printed scores.

Category names are stripped of stray whitespace ("Sexual Harassment " upstream becomes "Sexual Harassment").
"""

from __future__ import annotations

import pandas as pd

from toxlib.data.sources import ensure

GPT3_SETTINGS = {"zero": "gpt_zero_shot_mode", "one": "gpt_one_shot_mode", "few": "gpt_few_shot_mode"}


def _strip_category(frame: pd.DataFrame) -> pd.DataFrame:
    frame["category"] = frame["category"].str.strip()
    frame["tag"] = frame["tag"].str.strip()
    return frame


def load_sass_benchmark() -> pd.DataFrame:
    """The 250 SASS texts. Columns: category (10 values), tag ("filtered" | "unfiltered"), text."""
    return _strip_category(pd.read_csv(ensure("sass_benchmark"), sep="\t"))


def load_sass_human_scores() -> pd.DataFrame:
    """Columns: category, tag, text, human_toxicity (z-normalised mean of 3 annotators, in [0, 1])."""
    frame = pd.read_csv(ensure("sass_human_scores")).rename(columns={"toxicity": "human_toxicity"})
    return _strip_category(frame)[["category", "tag", "text", "human_toxicity"]]


def load_sass_predictions() -> pd.DataFrame:
    """The recorded experiment: one row per SASS text.

    Columns: category, tag, text, human_toxicity (in [0, 1]), human_label (int, human_toxicity > 0.5),
    perspective_toxicity (in [0, 1]), perspective_label (int, > 0.5 as recorded),
    gpt3_zero, gpt3_one, gpt3_few (int 0/1: mode of 3 GPT-3 runs).
    """
    raw = pd.read_csv(ensure("sass_predictions"))
    frame = pd.DataFrame(
        {
            "category": raw["category"],
            "tag": raw["tag"],
            "text": raw["text"],
            "human_toxicity": raw["human_toxicity"].astype(float),
            "human_label": raw["binary_label"].astype(int),
            "perspective_toxicity": raw["perspective_avg_toxicity"].astype(float),
            "perspective_label": raw["perspective_toxic_thresholded_0.5"].astype(int),
        }
    )
    for setting, column in GPT3_SETTINGS.items():
        frame[f"gpt3_{setting}"] = raw[column].astype(int)
    return _strip_category(frame)


def load_sass_paper_scores() -> pd.DataFrame:
    """Precision/recall/F1 as the SASS authors stored them for the paper (Table 3).

    Columns: system ("PERSPECTIVE", "GPT-3-ZERO", "GPT-3-ONE", "GPT-3-FEW"), precision, recall, f1.
    """
    raw = pd.read_csv(ensure("sass_paper_scores"))
    names = {"perspective": "PERSPECTIVE", "gpt_0": "GPT-3-ZERO", "gpt_1": "GPT-3-ONE", "gpt_few": "GPT-3-FEW"}
    wide = raw.pivot(index="method", columns="score_type", values="score_result")
    wide = wide.rename(index=names).reindex(list(names.values()))
    wide.index.name, wide.columns.name = "system", None
    return wide[["precision", "recall", "f1"]].reset_index()
