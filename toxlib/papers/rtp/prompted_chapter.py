"""The rtp_prompted chapter (``notebooks/rtp_prompted.ipynb``; RealToxicityPrompts §4, Table 2) computed:
``compute(values, models)`` returns its ``ChapterResult``.

Toxic and non-toxic prompts drawn from the public subsets, k sampled continuations each per model, scored: Table 2
(expected maximum toxicity and toxicity probability at k and at 5, the authors' GPT-2 values beside ours) and its
bars; one greedy continuation per prompt as lm-evaluation-harness reads it; the challenging prompts and their worst
continuations; the claims; and the numbers the exercises quote, including the same generations scored by another
scorer. ``values``: every parameter of ``toxlib/chapters/rtp_prompted.py``, checked; ``models``: a
``toxlib.models.source.Models``.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate import RTP_SAMPLING
from toxlib.models.source import Models
from toxlib.papers.rtp import authors
from toxlib.papers.rtp.captions import PROMPTED as CAPTIONS
from toxlib.papers.rtp.generations import prompted
from toxlib.papers.rtp.paper_claims import claims_prompted
from toxlib.papers.rtp.prompted_toxicity import challenging_share, greedy_summary, table2, worst_examples
from toxlib.papers.rtp.prompts import challenging_prompts, prompt_overview, stratified_prompts
from toxlib.papers.rtp.prose import prompted_prose, scorer_swap_prose
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult

TABLE2_SHOWN = ["model", "prompt_class", "k", "exp_max_toxicity", "exp_max_toxicity_authors", "exp_max_std",
                "exp_max_std_authors", "toxicity_probability", "toxicity_probability_authors", "n_prompts"]


def scored_by_model(lms: dict, prompts: pd.DataFrame, decoding, scorer: str, progress: bool = True) -> pd.DataFrame:
    """Every model's scored continuations of ``prompts`` under ``decoding`` (``rtp.prompted``), stacked with a
    ``model`` column, models in ``lms``' order."""
    return pd.concat([prompted(lm, prompts, decoding, scorer, progress=progress).assign(model=name)
                      for name, lm in lms.items()], ignore_index=True)


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("rtp_prompted", v)
    caption = CAPTIONS.bind(**v)
    k, scorer = v["k"], v["scorer"]
    config = RTP_SAMPLING.with_(num_samples=k, max_new_tokens=v["max_new_tokens"], top_p=v["top_p"], seed=v["seed"])
    greedy_config = RTP_SAMPLING.with_(mode="greedy", max_new_tokens=v["max_new_tokens"])
    prompts = stratified_prompts(v["n_toxic"], v["n_nontoxic"], v["seed"])
    challenging = challenging_prompts(v["n_challenging"], v["seed"])
    lms = {name: models(name, dtype=v["dtype"]) for name in v["models"]}
    out.add_table("prompts", prompt_overview(prompts), caption("prompts", n_challenging_drawn=len(challenging)),
                  file=False)

    scored = scored_by_model(lms, prompts, config, scorer)
    t2 = pd.concat([table2(scored, kk) for kk in sorted({k, min(5, k)}, reverse=True)], ignore_index=True)
    beside = out.add_table("table2", authors.beside_table2(t2), caption("table2"), columns=TABLE2_SHOWN)
    out.add_figure("table2", lambda: plots.grouped_bars(
        beside[beside["k"] == k].assign(group=lambda t: t["model"] + " / " + t["prompt_class"]), "group",
        authors.BAR_LABELS, caption("fig_table2"), "toxicity (0-1)", references=authors.BESIDE_COLUMNS,
        reference_label="GPT-2 in the paper (authors' notebook)"))
    greedy = scored_by_model(lms, prompts, greedy_config, scorer)
    out.add_table("greedy", greedy_summary(greedy), caption("greedy"))
    scored_ch = scored_by_model(lms, challenging, config, scorer)
    ch = challenging_share(scored_ch)
    out.add_table("challenging", pd.DataFrame([ch]), caption("challenging"))
    worst = worst_examples(scored_ch, 3)
    out.add_table("worst", worst if len(worst) else pd.DataFrame(
        {"note": ["No challenging prompt made every model reach 0.9 in this run."]}), caption("worst"), file=False)
    claims = claims_prompted(scored, scored_ch, v["models"], k)
    out.add_claims(claims, caption("claims"))

    out.add_prose(prompted_prose(t2, greedy_summary(greedy), ch, k))
    # the scorer exercise: this run's generations (from the cache) scored again by another scorer
    other = "bilstm" if scorer != "bilstm" else "distilled"
    swap = scored_by_model(lms, prompts, config, other, progress=False)
    swap_ch = scored_by_model(lms, challenging, config, other, progress=False)
    out.add_prose(scorer_swap_prose(t2, table2(swap, k), greedy_summary(greedy),
                                    greedy_summary(scored_by_model(lms, prompts, greedy_config, other,
                                                                   progress=False)),
                                    claims, claims_prompted(swap, swap_ch, v["models"], k), (scorer, other),
                                    len(scored), k))
    return out
