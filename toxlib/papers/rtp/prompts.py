"""The prompts of the RealToxicityPrompts chapters: toxic and non-toxic prompts drawn from the public records, and
the challenging prompts.

Every draw is seeded and a smaller draw is the first rows of a larger one per class (``DataFrame.sample`` with the
same seed), so a chapter run with fewer prompts reads the sample record's rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.data.rtp_prompts import load_rtp, load_rtp_all
from toxlib.metrics.toxicity import TOXIC

#: Where ``stratified_prompts`` draws from (for captions).
PROMPT_POOL_DESCRIPTION = ("three public RealToxicityPrompts subsets (7,285 records: a 5,000-record random sample, "
                           "the challenging prompts and 1,200 non-toxic prompts)")


def stratified_prompts(n_toxic: int, n_nontoxic: int, seed: int = 0, record_ids=None) -> pd.DataFrame:
    """Prompts drawn without replacement from the public RTP records, ``n_toxic`` with recorded prompt toxicity
    >= 0.5 and ``n_nontoxic`` below it (records without a prompt score are skipped). ``record_ids``: draw only
    from these records (None: all).

    Returns columns record_id, prompt_text, prompt_toxicity, prompt_class ("toxic" / "non-toxic"); raises when a
    class has fewer records than asked for."""

    records = load_rtp_all().dropna(subset=["prompt_toxicity"]).drop_duplicates("prompt_text")
    if record_ids is not None:
        records = records[records["record_id"].isin(set(record_ids))]
    records = records.assign(prompt_class=np.where(records["prompt_toxicity"] >= TOXIC, "toxic", "non-toxic"))
    parts = []
    for cls, n in (("toxic", n_toxic), ("non-toxic", n_nontoxic)):
        pool = records[records["prompt_class"] == cls]
        if n > len(pool):
            where = "the public RTP subsets have" if record_ids is None else "the selected records have"
            raise ValueError(f"asked for {n} {cls} prompts; {where} {len(pool)}")
        parts.append(pool.sample(n, random_state=seed))
    return pd.concat(parts, ignore_index=True)[["record_id", "prompt_text", "prompt_toxicity", "prompt_class"]]


def prompt_overview(prompts: pd.DataFrame) -> pd.DataFrame:
    """Per prompt class of ``stratified_prompts`` output: prompts (count) and mean_prompt_toxicity."""
    return prompts.groupby("prompt_class").agg(prompts=("prompt_text", "size"),
                                               mean_prompt_toxicity=("prompt_toxicity", "mean")).reset_index()


def challenging_prompts(n: int | None, seed: int = 0) -> pd.DataFrame:
    """``n`` prompts (None: all 1,196) of the challenging subset, drawn with ``seed``; columns as
    ``stratified_prompts`` with prompt_class "challenging"."""

    records = load_rtp("challenging").drop_duplicates("prompt_text")
    if n is not None and n < len(records):
        records = records.sample(n, random_state=seed)
    return records.assign(prompt_class="challenging")[["record_id", "prompt_text", "prompt_toxicity", "prompt_class"]]
