"""The datasets chapter (``notebooks/datasets.ipynb``) computed: ``compute(values, models)`` returns its
``ChapterResult``.

A data card per file the book reads; RealToxicityPrompts' prompt toxicity and its correlation with the
continuation per subset (and its histogram); ToxiGen's harmful and benign sentences per demographic (table and
bars); SASS's composition; TweetEval and ImplicitHate label balance; the claims and the numbers the exercises quote.
``values``: every parameter of ``toxlib/chapters/datasets.py``, checked; ``models``: unused (no model runs here).
"""

from __future__ import annotations

import pandas as pd

from toxlib import data
from toxlib.models.source import Models
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult
from toxlib.studies import datasets
from toxlib.studies.captions.datasets import CAPTIONS

TOXIGEN_BARS = {"harmful": "harmful (score > 3)", "benign": "benign"}


def rtp_frames(subsets: list[str]) -> dict[str, pd.DataFrame]:
    """{subset: its RealToxicityPrompts records} for ``subsets``, and "all (distinct records)": them all, each
    record once."""
    frames = {subset: data.load_rtp(subset) for subset in subsets}
    frames["all (distinct records)"] = pd.concat(frames.values()).drop_duplicates("record_id")
    return frames


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("datasets", v)
    caption = CAPTIONS.bind(**v)
    threshold = v["toxic_threshold"]
    cards = datasets.data_cards()
    out.add_table("data_cards", cards, caption("data_cards", n_files=len(cards), n_repos=cards["repo"].nunique()),
                  columns=["name", "records", "description", "repo", "commit", "license"], code=("name",))
    frames = rtp_frames(v["rtp_subsets"])
    rtp_stats = out.add_table("rtp_statistics", pd.DataFrame([{"subset": name,
                                                               **datasets.rtp_statistics(frame, threshold)}
                                                              for name, frame in frames.items()]),
                              caption("rtp_statistics"))
    long = pd.concat([f.assign(subset=name) for name, f in frames.items() if not name.startswith("all")],
                     ignore_index=True)
    out.add_figure("rtp_prompt_toxicity", lambda: plots.histograms(
        long, "prompt_toxicity", "subset", caption("fig_rtp_prompt_toxicity", n_prompts=len(long)),
        "Perspective toxicity of the prompt (recorded)", marker=threshold))
    toxigen = data.load_toxigen()
    groups = datasets.group_label_counts(toxigen)
    out.add_figure("toxigen_groups", lambda: plots.grouped_bars(
        groups, "target_group", TOXIGEN_BARS,
        caption("fig_toxigen_groups", n_toxigen=len(toxigen), n_mentions=groups["total"].sum()), "sentences"))
    out.add_table("toxigen_groups", groups, caption("toxigen_groups", n_toxigen=len(toxigen),
                                                    n_several=int((toxigen["target_groups"].str.len() > 1).sum())))
    sass = data.load_sass_predictions()
    out.add_table("sass_composition", datasets.composition(sass, "category", "tag"),
                  caption("sass_composition", n_sass=len(sass), share_toxic=sass["human_label"].mean()))
    implicit = data.load_implicit_hate()
    out.add_table("label_balance", datasets.label_balance(
        {split: data.load_tweeteval_hate(split) for split in ("train", "val", "test")}, data.load_sass_tweeteval(),
        implicit), caption("label_balance"))
    out.add_claims(datasets.claims(rtp_stats, toxigen, groups, sass, implicit), caption("claims"))
    out.add_prose(datasets.exercise_prose(frames, threshold))
    return out
