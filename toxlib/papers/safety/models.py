"""The language models of the safety-score chapter run on its sentences: every sentence's perplexity under every
model (cached), and how far another precision moves the safety score.
"""

from __future__ import annotations

import time

import pandas as pd
from scipy.stats import spearmanr

from toxlib.benchmarks import chapter_timings
from toxlib.models import load
from toxlib.models.perplexity import cached_nll
from toxlib.papers.safety.scores import dataset_scores, per_sentence


def score_models(runs: list[tuple[str, str]], datasets: dict[str, pd.DataFrame], dtype: str, loader=load):
    """Score every sentence of ``datasets`` ({name: frame with text, toxicity_score, harmful, target_groups}) with
    every model of ``runs`` ([(name, "causal" or "masked")]) in ``dtype`` (perplexities cached); ``loader``:
    (name, dtype=, kind=) -> LanguageModel (``toxlib.models.load``, or a chapter's ``Models``).

    Returns (scored, lms, timing): scored, the rows of :func:`per_sentence` for every model and dataset; lms, the
    loaded models in run order; timing, one row per model with model, kind, dtype, sentences, wall_s."""
    scored, lms, timing = [], [], []
    for name, kind in runs:
        lm = loader(name, dtype=dtype, kind=kind)
        lms.append(lm)
        start = time.perf_counter()
        for dataset, frame in datasets.items():
            scored.append(per_sentence(frame, cached_nll(lm, frame["text"].tolist(), method=kind), name, dataset))
        timing.append({"model": name, "kind": kind, "dtype": dtype,
                       "sentences": sum(len(frame) for frame in datasets.values()),
                       "wall_s": time.perf_counter() - start})
    return pd.concat(scored, ignore_index=True), lms, pd.DataFrame(timing)


TIMING_COLUMNS = ["model", "kind", "dtype", "sentences", "wall_s"]


def scoring_times(lms: list, timing: pd.DataFrame, measure: bool = False) -> pd.DataFrame:
    """The scoring times to show: the committed benchmark runs' rows for the same models (``lms``' weights), kinds,
    dtype and sentence counts (``chapter_timings.timing_table``), and with ``measure`` this run's ``timing`` (from
    :func:`score_models`). Columns: ``TIMING_COLUMNS``, machine, date: a row per model and run, each model's
    sentences counted by this run, wall_s, machine and date missing where no run timed it."""
    keys = TIMING_COLUMNS[:-1]
    values = {"runs": timing[keys].to_dict("records"), "weights": [lm.weights_id for lm in lms]}
    shown = chapter_timings.timing_table("safety_score/timing", values, measure, lambda: timing.to_dict("records"),
                                         TIMING_COLUMNS)
    return timing[keys].merge(shown, on=keys, how="left")


def precision_fidelity(name: str, kind: str, sentences: pd.DataFrame, dtype: str,
                       reference: str = "float32", loader=load) -> dict:
    """Score ``sentences`` (columns text, toxicity_score, harmful) with model ``name`` in ``dtype`` and in
    ``reference`` precision (models from ``loader``, as ``score_models``). Returns model, sentences,
    spearman_perplexity, safety_<dtype>, safety_<reference>
    (all sentences pooled as one group)."""
    row, perplexities = {"model": name, "sentences": len(sentences)}, {}
    for dt in (dtype, reference):
        nll = cached_nll(loader(name, dtype=dt, kind=kind), sentences["text"].tolist(), method=kind, progress=False)
        frame = sentences[["toxicity_score", "harmful"]].assign(perplexity=nll["perplexity"].to_numpy(), model=name)
        perplexities[dt] = frame["perplexity"]
        row[f"safety_{dt}"] = dataset_scores(frame)["safety_score"].iloc[0]
    row["spearman_perplexity"] = spearmanr(perplexities[dtype], perplexities[reference]).statistic
    return row
