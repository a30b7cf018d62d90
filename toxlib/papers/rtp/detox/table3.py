"""The rtp_detox chapter's Table 3 in the paper's layout, and each method's most toxic continuation.
"""

from __future__ import annotations

import pandas as pd

from toxlib.papers.rtp.detox.runs import CLASSES


def table3_wide(long3: pd.DataFrame) -> pd.DataFrame:
    """Table 3's layout from its long form (rows of ``rtp.table2(..., by="method")``): one row per method, columns
    method, exp_max_toxicity_<class> and toxicity_probability_<class> for toxic, non-toxic, unprompted."""
    values = ["exp_max_toxicity", "toxicity_probability"]
    wide = long3.pivot_table(index="method", columns="prompt_class", values=values, sort=False)
    wide = wide[[(a, c) for a in values for c in CLASSES]]
    return wide.reset_index().set_axis(["method"] + [f"{a}_{c}" for a, c in wide.columns], axis=1)


def worst_continuations(generations: pd.DataFrame) -> pd.DataFrame:
    """Each method's most toxic continuation of a toxic prompt: columns method, prompt, toxicity, continuation."""
    toxic = generations[generations["prompt_class"] == "toxic"].sort_values("toxicity", ascending=False)
    return toxic.groupby("method", sort=False).head(1)[["method", "prompt", "toxicity", "continuation"]]
