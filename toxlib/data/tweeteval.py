"""TweetEval hate (Basile et al., 2019) and the 1,000-tweet sample SASS scored with GPT-3 and Perspective."""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.common.errors import DataFormatError, UnknownNameError
from toxlib.data.io import read_lines
from toxlib.data.sources import ensure

SPLITS = ("train", "val", "test")


def load_tweeteval_hate(split: str = "test") -> pd.DataFrame:
    """One TweetEval hate split. Columns: text, label (int: 0 = not-hate, 1 = hate), label_name."""
    if split not in SPLITS:
        raise UnknownNameError(f"unknown TweetEval split {split!r}; known: {', '.join(SPLITS)}")
    texts = read_lines(ensure(f"tweeteval_hate_{split}_text"))
    labels = read_lines(ensure(f"tweeteval_hate_{split}_labels"))
    if len(texts) != len(labels):
        raise DataFormatError(
            f"TweetEval hate {split}: {len(texts)} texts but {len(labels)} labels; re-fetch both files with --force"
        )
    mapping_path = ensure("tweeteval_hate_mapping")
    names = {}
    for lineno, line in enumerate(read_lines(mapping_path), start=1):
        parts = line.split("\t")
        if len(parts) != 2:
            raise DataFormatError(f"{mapping_path}:{lineno}: expected 'label<TAB>name', got {line!r}")
        names[parts[0]] = parts[1]
    labels_path = ensure(f"tweeteval_hate_{split}_labels")
    bad = [(i, x) for i, x in enumerate(labels, start=1) if x.strip() not in names]
    if bad:
        lineno, value = bad[0]
        raise DataFormatError(f"{labels_path}:{lineno}: label {value!r} is not one of {sorted(names)} "
                              f"({len(bad)} such lines); fetch a clean copy with --force")
    frame = pd.DataFrame({"text": [t.strip() for t in texts], "label": [int(x) for x in labels]})
    frame["label_name"] = frame["label"].astype(str).map(names)
    return frame


def load_sass_tweeteval() -> pd.DataFrame:
    """The 1,000 TweetEval hate test tweets SASS used, with the recorded responses.

    Columns: id, text, label (1 = hate), gpt3_few (1 toxic, 0 not, NaN where the reply was not parsed: upstream -1),
    gpt3_reply (raw reply text), perspective_toxicity (NaN where the API call failed), perspective_failed (bool),
    perspective_label (0/1, NaN where the call failed; upstream recorded those as 0).
    The upstream error-message column is dropped at fetch time: one message carries an API key.
    """
    raw = pd.read_csv(ensure("sass_tweeteval_responses"), index_col=0)
    failed = raw["perspective_response"].isna()
    gpt = raw["gpt_response"].astype(float).where(raw["gpt_response"] >= 0, np.nan)
    return pd.DataFrame(
        {
            "id": raw["id"].astype(int),
            "text": raw["text"],
            "label": raw["label"].astype(int),
            "gpt3_few": gpt,
            "gpt3_reply": raw["gpt_response_txt"].fillna("").astype(str).str.strip(),
            "perspective_toxicity": raw["perspective_response"].astype(float),
            "perspective_failed": failed,
            "perspective_label": raw["perspective_response_bin"].astype(float).mask(failed),
        }
    ).reset_index(drop=True)


def load_sass_tweeteval_sample() -> pd.DataFrame:
    """The sampled tweets as SASS stored them before scoring. Columns: id, text, label."""
    return pd.read_csv(ensure("sass_tweeteval_sample"))
