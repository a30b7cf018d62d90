"""What the rtp_unprompted and rtp_prompted exercise solutions quote, {glue key: text} for myst-nb glue
(``toxlib.publish.glue``), computed from the chapters' tables so that the text always states this run's numbers.
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import fisher_exact

from toxlib.metrics.toxicity import TOXIC


def unprompted_prose(pools: pd.DataFrame, curves: pd.DataFrame, resamples: int) -> dict[str, str]:
    """The rtp_unprompted exercises' figures and phrases, {glue key: text}, from the scored ``pools`` (columns model,
    toxicity) and the bootstrap ``curves`` (model, n, mean, std, exact) of the first two models. Keys start with
    "unprompted-"; "-a" and "-b" are the first and second model. With one model (the smoke profile), every value
    that needs the second says so."""
    models = list(dict.fromkeys(pools["model"]))
    if len(models) < 2:
        alone = _unprompted_prose(pools, curves, resamples, models[0], models[0])
        note = {"unprompted-more": "(this run has one model, so no comparison:)", "unprompted-fewer": "the other"}
        return {k: v if k.endswith("-a") else note.get(k, "—") for k, v in alone.items()}
    return _unprompted_prose(pools, curves, resamples, *models[:2])


def _unprompted_prose(pools, curves, resamples, a, b) -> dict[str, str]:
    scores = {m: pools.loc[pools["model"] == m, "toxicity"].dropna().to_numpy() for m in (a, b)}
    at = curves.set_index(["model", "n"])
    toxic = {m: int((scores[m] >= TOXIC).sum()) for m in (a, b)}
    more, fewer = (a, b) if toxic[a] / len(scores[a]) >= toxic[b] / len(scores[b]) else (b, a)
    p = fisher_exact([[toxic[m], len(scores[m]) - toxic[m]] for m in (more, fewer)]).pvalue
    largest_n = max(n for n in at.index.get_level_values("n") if n <= 1000)
    pool = min(len(scores[a]), len(scores[b]))
    se = {m: at.loc[(m, 1), "std"] / math.sqrt(resamples) for m in (a, b)}
    gap = {m: abs(at.loc[(m, 1), "mean"] - at.loc[(m, 1), "exact"]) / se[m] for m in (a, b)}
    share = {m: toxic[m] / len(scores[m]) for m in (a, b)}
    out = {"model-a": a, "model-b": b, "resamples": f"{resamples:,}", "more": more, "fewer": fewer,
           "more-verb": "more often" if share[a] != share[b] else "exactly as often",
           "p": f"{p:.3g}", "toxic-sum": f"{toxic[a] + toxic[b]:,}", "largest-n": f"{largest_n:,}",
           "pool": f"{pool:,}", "top-in-draw": f"{1 - (1 - 1 / pool) ** largest_n:.2f}",
           "chance": ("below 0.05: the difference is unlikely to be chance alone" if p < 0.05 else
                      "not below 0.05: chance alone could give a difference this large"),
           "gap-se": f"{max(gap.values()):.1f}",
           "agree": f"{max(abs(curves['mean'] - curves['exact'])):.3f}",
           "exact-100": f"{at.loc[(a, 100), 'exact']:.3f}" if (a, 100) in at.index else "-",
           "mean-100": f"{at.loc[(a, 100), 'mean']:.3f}" if (a, 100) in at.index else "-"}
    for key, m in (("a", a), ("b", b)):
        out |= {f"exact-1-{key}": f"{at.loc[(m, 1), 'exact']:.4f}", f"mean-1-{key}": f"{at.loc[(m, 1), 'mean']:.3f}",
                f"std-1-{key}": f"{at.loc[(m, 1), 'std']:.3f}", f"se-{key}": f"{se[m]:.4f}",
                f"at-largest-{key}": f"{at.loc[(m, largest_n), 'mean']:.2f}",
                f"max-{key}": f"{scores[m].max():.2f}", f"scored-{key}": f"{len(scores[m]):,}"}
    for key, m in (("more", more), ("fewer", fewer)):
        out |= {f"toxic-{key}": f"{toxic[m]:,}", f"scored-{key}": f"{len(scores[m]):,}",
                f"share-{key}": f"{toxic[m] / len(scores[m]):.1%}"}
    return {f"unprompted-{key}": value for key, value in out.items()}


def prompted_prose(table2: pd.DataFrame, greedy: pd.DataFrame, challenging: dict, k: int) -> dict[str, str]:
    """The rtp_prompted exercises' figures and phrases, {glue key: text} (keys start with "prompted-"), from
    ``table2`` (rows of ``table2`` at k and at 5: model, prompt_class, k, toxicity_probability, n_prompts), the
    ``greedy`` summary (``greedy_summary``: model, prompt_class, mean_toxicity, toxic_share) and the ``challenging``
    share (``challenging_share``)."""
    t = table2.set_index(["model", "prompt_class", "k"])
    small = min(5, k)
    p_k = t.xs(k, level="k")["toxicity_probability"]
    q = 1 - (1 - p_k) ** (1 / k)
    predicted, observed = 1 - (1 - q) ** small, t.xs(small, level="k")["toxicity_probability"]
    rows = [f"{m} {c}: {observed[m, c]:.2f} observed, {predicted[m, c]:.2f} predicted ({p_k[m, c]:.2f} at k = {k}, "
            f"q = {q[m, c]:.3f})" for m, c in observed.index]
    below = [f"{m} {c} ({observed[m, c]:.3f} against {predicted[m, c]:.3f})" for m, c in observed.index
             if observed[m, c] < predicted[m, c] - 1e-9]  # k = 5 at both ends: equal up to rounding
    n = int(t["n_prompts"].min())  # the smaller class: its one-prompt step is the larger
    per_class = t.xs(k, level="k")["n_prompts"].groupby(level="prompt_class").min()
    toxic = [(m, c) for m, c in observed.index if c == "toxic"]

    def by_model(values, fmt):  # "0.38 (smollm2-135m) and 0.47 (gemma3-270m)": the toxic prompts' values
        return " and ".join(f"{format(values[i], fmt)} ({i[0]})" for i in toxic)

    g = greedy.set_index(["model", "prompt_class"])
    return {"prompted-small-k": str(small), "prompted-k": str(k), "prompted-k-rows": "; ".join(rows),
            "prompted-k-above": f"{len(rows) - len(below)} of {len(rows)}",
            "prompted-k-below": ("; below it: " + ", ".join(below)) if below else "",
            "prompted-prompt-step": f"{1 / n:.2f}",
            "prompted-n": " and ".join(f"{int(v):,} {c}" for c, v in per_class.items()),
            "prompted-half-width": f"{1.96 * math.sqrt(0.25 / n):.2f}",  # for the smaller class
            "prompted-ch-n": f"{challenging['n_prompts']:,}", "prompted-ch-all": f"{challenging['n_all_models']:,}",
            "prompted-ch-share": f"{challenging['share']:.2f}",
            "prompted-greedy-mean": by_model(g["mean_toxicity"], ".2f"),
            "prompted-greedy-share": by_model(g["toxic_share"], ".0%"),
            "prompted-prob-k": by_model(p_k, ".0%")}


def scorer_swap_prose(table_a: pd.DataFrame, table_b: pd.DataFrame, greedy_a: pd.DataFrame,
                      greedy_b: pd.DataFrame, claims_a: list[dict], claims_b: list[dict], scorers: tuple[str, str],
                      n_generations: int, k: int) -> dict[str, str]:
    """The scorer exercise's figures, {glue key: text} (keys "prompted-swap-"): the same generations scored by two
    scorers (``scorers`` = (this run's, the other)). ``table_*``: ``table2`` rows at k (model, prompt_class,
    exp_max_toxicity, toxicity_probability); ``greedy_*``: ``greedy_summary``; ``claims_*``: ``claims_prompted``
    rows (claim, id, verdict), matched by id. The first model of ``table_a`` is the one quoted."""
    a_name, b_name = scorers
    ta, tb = (t[t["k"] == k].set_index(["model", "prompt_class"]) for t in (table_a, table_b))
    model = ta.index[0][0]
    verdict_a = {c["id"]: c["verdict"] for c in claims_a}  # the same claim under both scorers: the same id
    moved = [f"{c['claim']} ({verdict_a[c['id']]} with {a_name}, {c['verdict']} with {b_name})"
             for c in claims_b if verdict_a.get(c["id"]) not in (None, c["verdict"])]

    def move(prompt_class: str, column: str) -> str:
        before, after = ta.loc[(model, prompt_class), column], tb.loc[(model, prompt_class), column]
        return f"from {before:.2f} to {after:.2f}"

    ga, gb = (g.set_index(["model", "prompt_class"]).loc[(model, "toxic"), "mean_toxicity"]
              for g in (greedy_a, greedy_b))
    gap = {name: t.loc[(model, "toxic"), "exp_max_toxicity"] - t.loc[(model, "non-toxic"), "exp_max_toxicity"]
           for name, t in ((a_name, ta), (b_name, tb))}
    lower = tb["exp_max_toxicity"].mean() < ta["exp_max_toxicity"].mean()
    return {
        "prompted-swap-scorers": f"{a_name} and {b_name}", "prompted-swap-other": b_name,
        "prompted-swap-n": f"{n_generations:,}", "prompted-swap-model": model,
        "prompted-swap-moved": ("no verdict moves" if not moved else
                                f"{len(moved)} of {len(claims_b)} verdicts move: " + "; ".join(moved)),
        "prompted-swap-gap": f"{gap[a_name]:.2f} with {a_name} and {gap[b_name]:.2f} with {b_name}",
        "prompted-swap-toxic-emt": move("toxic", "exp_max_toxicity"),
        "prompted-swap-toxic-prob": move("toxic", "toxicity_probability"),
        "prompted-swap-nontoxic-emt": move("non-toxic", "exp_max_toxicity"),
        "prompted-swap-nontoxic-prob": move("non-toxic", "toxicity_probability"),
        "prompted-swap-greedy": f"{ga:.2f} with {a_name} and {gb:.2f} with {b_name}",
        "prompted-swap-direction": (f"{b_name} scores these texts lower than {a_name}" if lower else
                                    f"{b_name} scores these texts higher than {a_name}"),
    }
