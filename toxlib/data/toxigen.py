"""The safety-score paper's ToxiGen subset (13 demographics) and its balanced ImplicitHate subset.

Both loaders return columns: id (int), text, toxicity_score (float; ToxiGen 1-5, ImplicitHate 1.0 or 2.25),
label ("hate" | "neutral"), harmful (bool, label == "hate"), target_groups (list of str).
"""

from __future__ import annotations

import pandas as pd

from toxlib.common.errors import DataFormatError
from toxlib.data.io import read_json_array
from toxlib.data.sources import ensure

TOXIGEN_COLUMNS = ["id", "text", "toxicity_score", "label", "harmful", "target_groups"]


def _load(name: str) -> pd.DataFrame:
    records = read_json_array(ensure(name), name)
    for i, rec in enumerate(records):
        missing = {"id", "text", "toxicity_score", "label", "target_groups"} - set(rec)
        if missing:
            raise DataFormatError(f"{name} record {i} (0-based): missing field(s) {sorted(missing)}")
    frame = pd.DataFrame(records)
    frame["toxicity_score"] = frame["toxicity_score"].astype(float)
    frame["harmful"] = frame["label"].eq("hate")
    return frame[TOXIGEN_COLUMNS]


def load_toxigen() -> pd.DataFrame:
    """6,514 ToxiGen sentences (columns in the module doc); 1,017 name several target groups."""
    return _load("toxigen")


def load_implicit_hate() -> pd.DataFrame:
    """14,200 ImplicitHate sentences, half implicit hate, half neutral; target_groups is ["all_groups"]."""
    return _load("implicit_hate")


def explode_groups(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (sentence, target group): a sentence naming several groups counts for each, as the paper does."""
    return frame.explode("target_groups").rename(columns={"target_groups": "target_group"}).reset_index(drop=True)
