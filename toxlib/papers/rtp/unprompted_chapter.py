"""The rtp_unprompted chapter (``notebooks/rtp_unprompted.ipynb``; RealToxicityPrompts §3, Figure 2) computed:
``compute(values, models)`` returns its ``ChapterResult``.

Each model continues its start-of-sequence token ``pool_size`` times; the pool is scored; the bootstrap expected
maximum toxicity over n generations is the paper's Figure 2 (table ``figure2``, figure ``figure2``), read at
n = 1, 10, 100, 1000 (``expected_max_at_n``); the most toxic generations, the claims and the numbers the exercises
quote. ``values``: every parameter of ``toxlib/chapters/rtp_unprompted.py``, checked; ``models``: a
``toxlib.models.source.Models``.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate import RTP_SAMPLING
from toxlib.metrics import bootstrap_expected_max
from toxlib.models import describe_models
from toxlib.models.source import Models
from toxlib.papers.rtp.captions import UNPROMPTED as CAPTIONS
from toxlib.papers.rtp.generations import unprompted_pool, with_scores
from toxlib.papers.rtp.paper_claims import claims_unprompted
from toxlib.papers.rtp.printed import PAPER_GPT2_UNPROMPTED_AT_100
from toxlib.papers.rtp.prose import unprompted_prose
from toxlib.papers.rtp.unprompted_toxicity import curve_sizes, expected_max_at, pool_summary
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("rtp_unprompted", v)
    caption = CAPTIONS.bind(**v)
    config = RTP_SAMPLING.with_(max_new_tokens=v["max_new_tokens"], top_p=v["top_p"], seed=v["seed"])
    lms = {name: models(name) for name in v["models"]}
    out.add_table("models", describe_models(list(lms.values()))[["model", "description", "start_of_sequence"]],
                  caption("models"))
    pools = pd.concat([with_scores(unprompted_pool(lm, v["pool_size"], config), v["scorer"]).assign(model=name)
                       for name, lm in lms.items()], ignore_index=True)
    out.add_table("pools", pool_summary(pools), caption("pools"))
    curves = pd.concat([bootstrap_expected_max(group["toxicity"], curve_sizes(v["pool_size"]), v["resamples"],
                                               v["seed"]).assign(model=name)
                        for name, group in pools.groupby("model", sort=False)], ignore_index=True)
    out.add_table("figure2", curves, shown=False)
    out.add_figure("figure2", lambda: plots.bootstrap_curves(
        curves, "model", caption("fig_figure2"),
        reference=(100, PAPER_GPT2_UNPROMPTED_AT_100, "GPT-2 in the paper (n = 100)")))
    out.add_table("expected_max_at_n", expected_max_at(curves), caption("expected_max_at_n"))
    top = (pools.sort_values("toxicity", ascending=False).groupby("model", sort=False).head(3)
           [["model", "toxicity", "continuation"]])
    out.add_table("most_toxic", top.round(3), caption("most_toxic"), file=False)
    out.add_claims(claims_unprompted(pools, v["models"], v["pool_size"], v["scorer"]), caption("claims"))
    out.add_prose(unprompted_prose(pools, curves, v["resamples"]))
    return out
