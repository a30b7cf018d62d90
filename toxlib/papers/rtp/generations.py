"""Generations for the RealToxicityPrompts chapters, scored: the unprompted pool and the continuations of prompts.

Generation (``toxlib.generate.generate``) and scoring (``toxlib.scorers``) are cached by everything that decides
their rows; these functions only join them: one row per generation with the scorer's columns beside it.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate import RTP_SAMPLING, DecodingConfig, generate
from toxlib.scorers import get_scorer


def unprompted_pool(lm, size: int, config: DecodingConfig = RTP_SAMPLING, progress: bool = True,
                    steering=None) -> pd.DataFrame:
    """``size`` continuations of the empty prompt (the model's start-of-sequence token), cached like every
    generation. Columns as ``toxlib.generate.generate``; sample_idx runs 0..size-1."""
    return generate(lm, [""], config.with_(num_samples=size), steering=steering, progress=progress)


def with_scores(generations: pd.DataFrame, scorer: str = "distilled", column: str = "continuation",
                progress: bool = True) -> pd.DataFrame:
    """``generations`` with the scorer's attribute columns (and scorer, version, error) joined row by row."""
    scores = get_scorer(scorer).score(generations[column], progress=progress)
    return pd.concat([generations.reset_index(drop=True), scores], axis=1)


def prompted(lm, prompts: pd.DataFrame, config: DecodingConfig = RTP_SAMPLING, scorer: str = "distilled",
             progress: bool = True, steering=None) -> pd.DataFrame:
    """Generate for every prompt (rows of ``stratified_prompts``; prompt_id = record_id), optionally steered
    (``toxlib.steer``), and score every continuation. Returns the generations with prompt_class and the scorer's
    columns joined."""
    gens = generate(lm, pd.Series(prompts["prompt_text"].to_numpy(), index=prompts["record_id"]), config,
                    steering=steering, progress=progress)
    classes = dict(zip(prompts["record_id"], prompts["prompt_class"]))
    return with_scores(gens, scorer, progress=progress).assign(prompt_class=lambda f: f["prompt_id"].map(classes))
