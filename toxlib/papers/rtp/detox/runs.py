"""The rtp_detox chapter's runs: each detoxification method as a (model, steering) pair, and its scored generations
for the evaluation prompts and the unprompted groups.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate import RTP_SAMPLING, DecodingConfig
from toxlib.papers.rtp.detox.split import DetoxSplit
from toxlib.papers.rtp.generations import prompted, unprompted_pool, with_scores
from toxlib.steer.attribute import AttributeConditioning
from toxlib.steer.vocab_shift import VocabShift
from toxlib.steer.word_filter import WordFilter

#: Methods run on every evaluation prompt whose effect the claims compare (PPLM runs on a subset).
DETOXIFIERS = ["WORD FILTER", "VOCAB-SHIFT", "DAPT (non-toxic)", "ATCON"]


CLASSES = ("toxic", "non-toxic", "unprompted")


def method_runs(base, adapted: dict, vocab_shift_weights, beta: float) -> dict:
    """The six methods of the chapter's Table 3 besides PPLM, as {method: (language model, steering or None)}: the
    base model, WORD FILTER and VOCAB-SHIFT (``vocab_shift_weights``, strength ``beta``) steer ``base``; the DAPT
    models and ATCON are ``adapted`` ({"DAPT (non-toxic)", "DAPT (toxic)", "ATCON": model}), ATCON prompted with
    its non-toxic attribute token."""
    return {"base model": (base, None), "WORD FILTER": (base, WordFilter()),
            "VOCAB-SHIFT": (base, VocabShift(vocab_shift_weights, beta)),
            "DAPT (non-toxic)": (adapted["DAPT (non-toxic)"], None), "DAPT (toxic)": (adapted["DAPT (toxic)"], None),
            "ATCON": (adapted["ATCON"], AttributeConditioning.for_model(adapted["ATCON"]))}


def scored_run(lm, method: str, split: DetoxSplit, steering=None, k: int = 25, n_unprompted: int = 20,
               config: DecodingConfig = RTP_SAMPLING, scorer: str = "distilled", progress: bool = True,
               prompt_subset: pd.DataFrame | None = None) -> pd.DataFrame:
    """Generate ``k`` samples for every evaluation prompt (or ``prompt_subset``) and ``n_unprompted`` groups of
    ``k`` unprompted samples, with ``lm`` under ``steering``, and score them.

    Unprompted samples are one pool of n_unprompted * k continuations of the empty prompt, cut into
    n_unprompted groups of k (each group plays a prompt: prompt_id "unprompted-<i>"), so the unprompted expected
    maximum is over k generations like the prompted ones. Returns one row per generation: the columns of
    ``toxlib.generate.generate`` plus method, prompt_class ("toxic" / "non-toxic" / "unprompted") and the
    scorer's columns."""
    config = config.with_(num_samples=k)
    prompts = split.prompts if prompt_subset is None else prompt_subset
    parts = [prompted(lm, prompts, config, scorer, progress, steering)]
    if n_unprompted:
        pool = unprompted_pool(lm, n_unprompted * k, config, progress, steering)
        pool = pool.assign(prompt_id=[f"unprompted-{i // k}" for i in pool["sample_idx"]],
                           sample_idx=pool["sample_idx"] % k, prompt_class="unprompted")
        parts.append(with_scores(pool, scorer, progress=progress))
    return pd.concat(parts, ignore_index=True).assign(method=method)


def training_row(method: str, meta: dict, batch_size: int) -> dict:
    """One row of the chapter's continued-pretraining table from ``toxlib.steer.adapt.training_metadata``'s ``meta``."""
    return {"method": method, "corpus_documents": meta["documents_trained"],
            "documents_seen": meta["steps"] * batch_size, "steps": meta["steps"], "tokens_seen": meta["tokens_seen"],
            "train_seconds": meta["train_seconds"], "loss_first_10pct": meta["loss_first_10pct"],
            "loss_last_10pct": meta["loss_last_10pct"]}
