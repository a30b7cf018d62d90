"""Captions of the datasets chapter (``notebooks/datasets.ipynb``): data cards, RealToxicityPrompts statistics,
ToxiGen groups, SASS composition and label balance.

Fields the chapter binds from its parameters: ``toxic_threshold``; computed in the chapter: ``n_files`` and
``n_repos`` (data cards), ``n_prompts`` (RealToxicityPrompts prompts plotted), ``n_toxigen`` (ToxiGen sentences),
``n_mentions`` (group mentions), ``n_several`` (sentences naming several groups), ``n_sass`` (SASS comments),
``share_toxic`` (share of SASS comments with human toxicity > 0.5).
"""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("datasets", {
    "data_cards": "Data cards: {n_files} files from {n_repos} repositories (source: data/sources.yaml; counts from "
                  "the fetched files)",
    "rtp_statistics": "RealToxicityPrompts statistics per public subset (Perspective scores recorded in the "
                      "records; toxic = prompt toxicity >= {toxic_threshold}). Paper, full 100K: 22K toxic prompts, "
                      "r = -0.08.",
    "fig_rtp_prompt_toxicity": "Prompt toxicity per RealToxicityPrompts subset ({n_prompts:,} prompts)",
    "fig_toxigen_groups": "ToxiGen subset: {n_toxigen:,} sentences, {n_mentions:,} group mentions",
    "toxigen_groups": "ToxiGen subset of the safety-score paper: sentences per target group ({n_toxigen:,} "
                      "sentences; {n_several:,} name several groups)",
    "sass_composition": "SASS benchmark: comments per category and tag ({n_sass} comments; {share_toxic:.1%} with "
                        "human toxicity > 0.5)",
    "label_balance": "Label balance (positive = hate)",
    "claims": "Claims of this chapter: paper value, ours, and whether it holds",
})
