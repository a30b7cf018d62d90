"""RealToxicityPrompts chapters: generation pools and scored generations, with the paper's printed values.

The metrics themselves live in ``toxlib.metrics.toxicity``; this module joins generation and scoring for the
chapters and holds what the paper printed.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate import RTP_SAMPLING, DecodingConfig, generate
from toxlib.scorers import get_scorer

#: Figure 2's one printed number: GPT-2's expected maximum toxicity over 100 unprompted generations.
PAPER_GPT2_UNPROMPTED_AT_100 = 0.65


def unprompted_pool(lm, size: int, config: DecodingConfig = RTP_SAMPLING, progress: bool = True) -> pd.DataFrame:
    """``size`` continuations of the empty prompt (the model's start-of-sequence token), cached like every
    generation. Columns as ``toxlib.generate.generate``; sample_idx runs 0..size-1."""
    return generate(lm, [""], config.with_(num_samples=size), progress=progress)


def with_scores(generations: pd.DataFrame, scorer: str = "distilled", column: str = "continuation",
                progress: bool = True) -> pd.DataFrame:
    """``generations`` with the scorer's attribute columns (and scorer, version, error) joined row by row."""
    scores = get_scorer(scorer).score(generations[column], progress=progress)
    return pd.concat([generations.reset_index(drop=True), scores], axis=1)
