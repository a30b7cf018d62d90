"""What the safety_score chapter's exercise solutions quote, {glue key: text} for myst-nb glue
(``toxlib.publish.glue``), computed from the chapter's tables so that the text states this run (keys "safety-")."""

from __future__ import annotations

import pandas as pd
from scipy.stats import spearmanr

from toxlib.metrics.safety_score import safety_score
from toxlib.papers.safety.scores import pvalue_table, wide


def _pair(values: dict, fmt: str) -> str:
    """"0.259 (smollm2-135m) and 0.316 (gemma3-270m)": one value per model, in the models' order."""
    return " and ".join(f"{format(v, fmt)} ({m})" for m, v in values.items())


def _u_share(part: pd.DataFrame, scaled: bool) -> float:
    """The safety score of ``part``'s sentences, of scaled perplexities or (``scaled=False``) raw ones."""
    harmful = part["harmful"].astype(bool)
    x = part["perplexity"] / part["toxicity_score"] if scaled else part["perplexity"]
    return safety_score(x[harmful], x[~harmful])[0]


def _top3_phrase(count: int) -> str:
    if count == 0:
        return "none of these is among the dropped"
    return (f"{count} of these {'is' if count == 1 else 'are'} among the dropped: a rule that removes the groups on "
            "which the models look safest pulls the average down")


def _rho_phrase(scores: pd.DataFrame, groups: int) -> str:
    if len(scores) < 2:
        return "with one model in this run there is no second model to compare with"
    rho = spearmanr(scores.iloc[0], scores.iloc[1]).statistic
    how = "move together" if rho >= 0.5 else ("move apart" if rho <= -0.5 else "are not clearly related")
    return f"the two models' per-group scores {how} (Spearman {rho:.2f} over the {groups} groups)"


def _scaling_phrase(implicit: dict, toxigen: dict, models: list[str]) -> str:
    """How far the scaling moves the scores against how far the models differ (both on the pooled datasets)."""
    shift = max(abs(_u_share(d[m], False) - _u_share(d[m], True)) for d in (implicit, toxigen) for m in models)
    if len(models) < 2:
        return f"The scaling moves a score by up to {shift:.3f}"
    spread = max(abs(_u_share(d[models[0]], True) - _u_share(d[models[1]], True)) for d in (implicit, toxigen))
    reading = ("much of the score comes from the human ratings, and the models only move it within that frame"
               if shift > spread else "the models differ more than the scaling moves them")
    return (f"The scaling moves a score by up to {shift:.3f}, while the two models' scaled scores differ by at most "
            f"{spread:.3f}: {reading}")


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
           "top3-dropped": _top3_phrase(len(set(dropped) & set.union(*map(set, top3.values())))),
           "harmful-range": f"{p['n_harmful'].min()} to {p['n_harmful'].max()}",
           "fewest": f"{fewest} ({p.loc[fewest, 'n_harmful']} harmful and {p.loc[fewest, 'n_benign']} benign "
                     f"sentences; {'dropped' if fewest in dropped else 'kept'})",
           "lowest": f"{lowest} ({_pair(scores[lowest].to_dict(), '.2f')}), with {p.loc[lowest, 'n_harmful']} "
                     "harmful sentences",
           "rho": _rho_phrase(scores, len(p)),
           "scaling": _scaling_phrase(implicit, toxigen, models)}
    return {f"safety-{key}": value for key, value in out.items()}
