"""The safety-score chapter's tables from scored sentences: per-group safety scores (Table 8), log-perplexity
summaries (Table 9), one score per dataset (Table 10), p-values, and the paper's rows beside ours.

Inputs are the rows of ``per_sentence`` (one per model and sentence: perplexity, toxicity_score, harmful,
target_groups); the safety score itself is ``toxlib.metrics.safety_score``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.metrics.safety_score import safety_scores
from toxlib.papers.safety.printed import GROUPS, PAPER_GPT2


def sample_sentences(toxigen: pd.DataFrame, implicit: pd.DataFrame, max_sentences: int, max_implicit_sentences: int,
                     seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The chapter's sentences: ``max_sentences`` of each dataset (0: all) drawn with ``seed``, then ImplicitHate cut
    to ``max_implicit_sentences`` (0: no cut) by a second draw from the first. The second draw is kept because the
    published tables were computed from it (a single draw of ``max_implicit_sentences`` would select other
    sentences); the decision-sized defaults of the sample record will score every sentence instead.
    Returns (toxigen, implicit), each a subset of its input's rows in drawn order."""
    if max_sentences:
        toxigen = toxigen.sample(min(max_sentences, len(toxigen)), random_state=seed)
        implicit = implicit.sample(min(max_sentences, len(implicit)), random_state=seed)
    if max_implicit_sentences and len(implicit) > max_implicit_sentences:
        implicit = implicit.sample(max_implicit_sentences, random_state=seed)
    return toxigen, implicit


def per_sentence(sentences: pd.DataFrame, nll: pd.DataFrame, model: str, dataset: str) -> pd.DataFrame:
    """Join a dataset's sentences (columns id, toxicity_score, harmful, target_groups) with their scores
    (``toxlib.models.perplexity`` rows in the same order). Returns model, dataset, id, harmful, toxicity_score,
    target_groups, n_tokens, nll_sum, perplexity, log_perplexity (= mean token NLL, natural log)."""
    out = sentences[["id", "harmful", "toxicity_score", "target_groups"]].reset_index(drop=True).copy()
    out.insert(0, "dataset", dataset)
    out.insert(0, "model", model)
    for col in ("n_tokens", "nll_sum", "perplexity"):
        out[col] = nll[col].to_numpy()
    out["log_perplexity"] = np.log(out["perplexity"])
    return out


def group_scores(scored: pd.DataFrame) -> pd.DataFrame:
    """Safety score per (model, demographic) on ToxiGen rows of ``per_sentence`` output; sentences naming several
    groups count for each. Columns: model, target_group, demographic, n_harmful, n_benign, safety_score, p_value,
    dropped_by_reference."""
    frames = []
    for model, rows in scored.groupby("model", sort=False):
        exploded = (rows.explode("target_groups").rename(columns={"target_groups": "target_group"})
                    .reset_index(drop=True))
        table = safety_scores(exploded)
        table.insert(0, "model", model)
        table.insert(2, "demographic", table["target_group"].map(GROUPS))
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def wide(group_table: pd.DataFrame, value: str = "safety_score") -> pd.DataFrame:
    """One row per model, one column per demographic (paper order), from ``group_scores`` output."""
    table = group_table.pivot(index="model", columns="target_group", values=value)
    return table[[g for g in GROUPS if g in table.columns]].rename(columns=GROUPS).reset_index()


def log_perplexity_summary(scored: pd.DataFrame) -> pd.DataFrame:
    """Table 9 analogue: per model, mean and sd of sentence log-perplexity for benign and harmful sentences
    (each sentence once). Columns: model, benign_mean, benign_sd, harmful_mean, harmful_sd, n_benign, n_harmful."""
    rows = []
    for model, g in scored.groupby("model", sort=False):
        b, h = g.loc[~g["harmful"], "log_perplexity"], g.loc[g["harmful"], "log_perplexity"]
        rows.append({"model": model, "benign_mean": b.mean(), "benign_sd": b.std(), "harmful_mean": h.mean(),
                     "harmful_sd": h.std(), "n_benign": len(b), "n_harmful": len(h)})
    return pd.DataFrame(rows)


def pvalue_table(group_table: pd.DataFrame) -> pd.DataFrame:
    """One row per demographic: the p-value of each model (one column per model), dropped_by_reference_any (some
    model's p > 0.05) and the group's n_harmful / n_benign, from ``group_scores`` output."""
    table = group_table.pivot(index="demographic", columns="model", values="p_value")
    table["dropped_by_reference_any"] = group_table.groupby("demographic")["dropped_by_reference"].any()
    counts = group_table.groupby("demographic")[["n_harmful", "n_benign"]].first()
    return table.join(counts).reset_index()


def dataset_scores(scored: pd.DataFrame) -> pd.DataFrame:
    """Table 10 analogue: one safety score per model over all of ``scored``'s rows (ImplicitHate has no target
    groups). Columns: model, safety_score, p_value, n_harmful, n_benign."""
    table = safety_scores(scored, group="model")
    order = list(dict.fromkeys(scored["model"]))
    return (table.set_index("model").loc[order].reset_index()
            [["model", "safety_score", "p_value", "n_harmful", "n_benign"]])


def with_paper_rows(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """``ours`` followed by the paper's GPT-2 family rows of ``paper`` (model names prefixed "paper: ", columns
    renamed to demographics where they are group keys); count columns stay integers."""
    rows = paper[paper["model"].isin(PAPER_GPT2)].rename(columns=GROUPS)
    table = pd.concat([ours, rows.assign(model="paper: " + rows["model"])], ignore_index=True)
    counts = [c for c in table.columns if c.startswith("n_")]
    table[counts] = table[counts].astype("Int64")
    return table


def model_averages(groups: pd.DataFrame, table10: pd.DataFrame, architecture: pd.DataFrame) -> pd.DataFrame:
    """Per model: toxigen_average (mean safety score over the demographics of ``groups``, rows of
    :func:`group_scores`), implicit_hate (``table10``'s safety_score, rows of :func:`dataset_scores`) and the
    ``architecture`` columns (one row per model, a model column), joined on model."""
    return (groups.groupby("model", sort=False)["safety_score"].mean().rename("toxigen_average").reset_index()
            .merge(table10[["model", "safety_score"]].rename(columns={"safety_score": "implicit_hate"}), on="model")
            .merge(architecture, on="model"))
