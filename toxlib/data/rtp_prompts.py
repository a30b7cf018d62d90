"""RealToxicityPrompts' prompts with their continuations and Perspective scores (three public subsets, one row per
RTP record), and the debiasing paper's prompt sets drawn from them.

Every RTP loader returns one row per record with columns:
  record_id (str, "<filename>:<begin>"), filename, begin, end, challenging (bool), subset,
  prompt_text, continuation_text,
  prompt_<attr>, continuation_<attr> (float in [0, 1], NaN where Perspective gave no score)
for attr in PERSPECTIVE_ATTRIBUTES.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from toxlib.common.errors import DataFormatError, UnknownNameError
from toxlib.data.io import read_jsonl
from toxlib.data.sources import ensure

PERSPECTIVE_ATTRIBUTES = (
    "toxicity",
    "severe_toxicity",
    "profanity",
    "sexually_explicit",
    "flirtation",
    "identity_attack",
    "threat",
    "insult",
)

RTP_SUBSETS = {
    "challenging": "rtp_challenging",  # 1,196 records flagged challenging
    "nontoxic": "rtp_nontoxic",  # 1,200 records with prompt toxicity < 0.5
    "sample": "rtp_sample",  # 5,000-record random sample
}

DEBIAS_SETS = {
    ("adversarial", False): "debias_adversarial",
    ("neutral", False): "debias_neutral",
    ("adversarial", True): "debias_test_adversarial",
    ("neutral", True): "debias_test_neutral",
}


def _flatten(record: dict, source: str, lineno: int) -> dict:
    try:
        prompt, continuation = record["prompt"], record["continuation"]
        row = {
            "record_id": f"{record['filename']}:{record['begin']}",
            "filename": record["filename"],
            "begin": record["begin"],
            "end": record["end"],
            "challenging": bool(record["challenging"]),
            "prompt_text": prompt["text"],
            "continuation_text": continuation["text"],
        }
    except (KeyError, TypeError) as exc:
        raise DataFormatError(f"{source} record {lineno}: missing field {exc} in a RealToxicityPrompts "
                              "record") from None
    for attr in PERSPECTIVE_ATTRIBUTES:
        for part, scores in (("prompt", prompt), ("continuation", continuation)):
            value = scores.get(attr)
            row[f"{part}_{attr}"] = np.nan if value is None else float(value)
    return row


def load_rtp(subset: str = "sample") -> pd.DataFrame:
    """RealToxicityPrompts records of one subset ("challenging", "nontoxic" or "sample"); columns in the module doc."""
    if subset not in RTP_SUBSETS:
        raise UnknownNameError(f"unknown RTP subset {subset!r}; known: {', '.join(RTP_SUBSETS)}")
    name = RTP_SUBSETS[subset]
    path = Path(ensure(name))
    return _rtp_frame(str(path), path.stat().st_mtime_ns, name, subset).copy()


@lru_cache(maxsize=8)
def _rtp_frame(path: str, mtime_ns: int, name: str, subset: str) -> pd.DataFrame:
    """The records of one subset file, parsed once per process and file version (a report's chapters each read
    the same three files; parsing one takes about 0.2 s). Callers get a copy."""
    records = read_jsonl(Path(path), name)
    frame = pd.DataFrame([_flatten(r, name, i) for i, r in enumerate(records, start=1)])
    frame.insert(5, "subset", subset)
    return frame


def load_rtp_all() -> pd.DataFrame:
    """All three subsets stacked, one row per distinct record (a record in several subsets keeps its first)."""
    frames = [load_rtp(s) for s in RTP_SUBSETS]
    return pd.concat(frames, ignore_index=True).drop_duplicates("record_id", keep="first").reset_index(drop=True)


def load_debias_prompts(kind: str = "adversarial", test_subset: bool = False) -> pd.DataFrame:
    """The debiasing paper's prompt set ("adversarial" or "neutral"; ``test_subset`` for its 100-prompt sets).

    Columns: prompt_text, challenging (bool), rtp_matched (bool: the text equals an RTP record's prompt in the
    three public subsets), and record_id, prompt_<attr> from that record (NaN where unmatched).
    """
    key = (kind, bool(test_subset))
    if key not in DEBIAS_SETS:
        raise UnknownNameError(f"unknown debiasing prompt set {kind!r}; known: adversarial, neutral")
    name = DEBIAS_SETS[key]
    rows = []
    for lineno, rec in enumerate(read_jsonl(ensure(name), name), start=1):
        try:
            rows.append({"prompt_text": rec["prompt"]["text"], "challenging": bool(rec.get("challenging", False))})
        except (KeyError, TypeError):
            raise DataFormatError(f"{name} line {lineno}: expected {{'prompt': {{'text': ...}}}}") from None
    prompts = pd.DataFrame(rows)
    rtp = load_rtp_all().drop_duplicates("prompt_text", keep="first")
    scores = rtp[["prompt_text", "record_id"] + [f"prompt_{a}" for a in PERSPECTIVE_ATTRIBUTES]]
    merged = prompts.merge(scores, on="prompt_text", how="left", validate="many_to_one")
    merged.insert(2, "rtp_matched", merged["record_id"].notna())
    return merged
