"""What the safety_score chapter's exercise solutions quote, {glue key: text} for myst-nb glue
(``toxlib.report.glue``), computed from the chapter's tables so that the text states this run (keys "safety-")."""

from __future__ import annotations

import pandas as pd
from scipy.stats import mannwhitneyu, spearmanr

from toxlib.papers.safety import pvalue_table, wide


def _pair(values: dict, fmt: str) -> str:
    """"0.259 (smollm2-135m) and 0.316 (gemma3-270m)": one value per model, in the models' order."""
    return " and ".join(f"{format(v, fmt)} ({m})" for m, v in values.items())


def _u_share(part: pd.DataFrame, scaled: bool) -> float:
    harmful = part["harmful"].astype(bool)
    x = part["perplexity"] / part["toxicity_score"] if scaled else part["perplexity"]
    return mannwhitneyu(x[harmful], x[~harmful]).statistic / (harmful.sum() * (~harmful).sum())


def exercise_prose(scored: pd.DataFrame, groups: pd.DataFrame, averages: pd.DataFrame) -> dict[str, str]:
    """``scored``: one row per (model, sentence) (model, dataset, harmful, toxicity_score, perplexity);
    ``groups``: ``group_scores`` output; ``averages``: ``model_averages`` output (model, toxigen_average,
    implicit_hate)."""
    models = list(dict.fromkeys(scored["model"]))
    implicit = {m: scored[(scored["model"] == m) & (scored["dataset"] == "implicit_hate")] for m in models}
    toxigen = {m: scored[(scored["model"] == m) & (scored["dataset"] == "toxigen")] for m in models}
    first = implicit[models[0]]
    avg = averages.set_index("model")
    p = pvalue_table(groups).set_index("demographic")
    dropped = list(p.index[p["dropped_by_reference_any"]])
    scores = wide(groups).set_index("model").loc[models]
    top3 = {m: list(scores.loc[m].nlargest(3).index) for m in models}
    lowest = scores.mean().idxmin()
    fewest = p["n_harmful"].idxmin()
    out = {"model": models[0], "n": f"{int(first['harmful'].sum()):,}",
           "m": f"{int((~first['harmful'].astype(bool)).sum()):,}", "sentences": f"{len(first):,}",
           "implicit-s": _pair({m: avg.loc[m, "implicit_hate"] for m in models}, ".4f"),
           "raw-implicit": _pair({m: _u_share(implicit[m], False) for m in models}, ".3f"),
           "raw-toxigen": _pair({m: _u_share(toxigen[m], False) for m in models}, ".3f"),
           "scaled-implicit": _pair({m: _u_share(implicit[m], True) for m in models}, ".3f"),
           "scaled-toxigen": _pair({m: _u_share(toxigen[m], True) for m in models}, ".3f"),
           "toxigen-average": _pair({m: avg.loc[m, "toxigen_average"] for m in models}, ".3f"),
           "groups": f"{len(p)}", "dropped": f"{len(dropped)} of the {len(p)}",
           "dropped-list": ", ".join(dropped) if dropped else "none",
           "top3": "; ".join(f"{', '.join(t)} ({m})" for m, t in top3.items()),
           "top3-dropped": f"{len(set(dropped) & set.union(*map(set, top3.values())))}",
           "harmful-range": f"{p['n_harmful'].min()} to {p['n_harmful'].max()}",
           "fewest": f"{fewest} ({p.loc[fewest, 'n_harmful']} harmful and {p.loc[fewest, 'n_benign']} benign "
                     f"sentences; {'dropped' if fewest in dropped else 'kept'})",
           "lowest": f"{lowest} ({_pair(scores[lowest].to_dict(), '.2f')}), with {p.loc[lowest, 'n_harmful']} "
                     "harmful sentences",
           "rho": (f"Spearman {spearmanr(scores.iloc[0], scores.iloc[1]).statistic:.2f} over the {len(p)} groups"
                   if len(models) > 1 else "one model in this run: no correlation")}
    return {f"safety-{key}": value for key, value in out.items()}
