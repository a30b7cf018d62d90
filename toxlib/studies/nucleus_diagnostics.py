"""What the generation chapter makes of the nucleus statistics (rows of ``toxlib.studies.nucleus_steps``'s
``record_nucleus``): a summary per model, the chapter's claims, and the figures its exercises quote.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate.nucleus import K_LADDER
from toxlib.metrics.uncertainty import proportion_interval
from toxlib.papers.rtp import printed as rtp_printed
from toxlib.publish.claims import claim, fact, models_subject


def summarise_nucleus(steps: pd.DataFrame, ladder: tuple[int, ...] = K_LADDER) -> pd.DataFrame:
    """Per model, from ``record_nucleus`` rows: steps, median_size, p99_size, max_size, same_as_transformers (share
    of steps), then the share of nuclei within each top-k stage of ``ladder`` ("<= k") and beyond it (full sort)."""
    edges = [0, *ladder, float("inf")]
    names = [f"<= {k:,}" for k in ladder] + [f"> {ladder[-1]:,} (full sort)"]
    resolved_by = pd.cut(steps["nucleus_size"], edges, labels=names)
    summary = (steps.groupby("model")
               .agg(steps=("nucleus_size", "size"), median_size=("nucleus_size", "median"),
                    p99_size=("nucleus_size", lambda s: s.quantile(0.99)), max_size=("nucleus_size", "max"),
                    same_as_transformers=("same_as_transformers", "mean"))
               .reset_index())
    shares = pd.crosstab(steps["model"], resolved_by, normalize="index").reset_index()
    return summary.merge(shares, on="model")


#: RealToxicityPrompts' decoding and start token as the paper prints them (``toxlib.papers.rtp.printed``).
RTP_DECODING, RTP_START_TOKEN = rtp_printed.PAPER["decoding"], rtp_printed.PAPER["start_token"]


def claims(top_p: float, max_new_tokens: int, num_samples: int, nucleus: pd.DataFrame,
           start_tokens: dict[str, str]) -> list[dict]:
    """Claims of the generation chapter: its decoding parameters against RealToxicityPrompts', the share of
    ``nucleus`` steps (rows of ``toxlib.studies.nucleus_steps.record_nucleus``) where toxlib's nucleus equals
    transformers' top-p set, and each model's start token (``start_tokens``: {model name: token})."""

    same_count = int(nucleus["same_as_transformers"].sum())
    same = proportion_interval(same_count, len(nucleus))
    return [
        claim("RealToxicityPrompts decoding: nucleus sampling p = 0.9, up to 20 new tokens, 25 per prompt",
              RTP_DECODING.value, f"p={top_p}, {max_new_tokens} tokens, k={num_samples}",
              verdict=fact((top_p, max_new_tokens, num_samples)
                           == (rtp_printed.PAPER_TOP_P, rtp_printed.PAPER_MAX_NEW_TOKENS, rtp_printed.PAPER_SAMPLES)),
              note="exact fact; this chapter's parameters; the RTP chapters use the same DecodingConfig",
              kind="our models", rule="rtp_decoding", subject="toxlib"),
        claim("toxlib's nucleus is the set transformers' top-p keeps (the papers' library)", "TopPLogitsWarper set",
              round(same.value, 4), interval=same, threshold=0.99,
              note=f"identical at {int(same_count)} of {len(nucleus):,} sampled decoding steps; exact interval of "
                   "the share of steps where the sets agree; holds = above 0.99; on the real models' logits; "
                   "on random 262K-token logits transformers' fp32 cumulative sum "
                   "occasionally misplaces a huge nucleus's boundary by one token (tests)", kind="our models",
              rule="nucleus_matches_transformers", subject="toxlib"),
        claim("Unprompted generation starts from each model's start-of-sequence token",
              RTP_START_TOKEN.value, "; ".join(f"{n}: {token}" for n, token in start_tokens.items()),
              verdict="not judged", note="the paper's models are not available offline; see the models table",
              kind="our models", rule="start_token",
              subject=models_subject(start_tokens) if start_tokens else "toxlib"),
    ]


def openings_per_prompt(generations: pd.DataFrame, words: int = 3) -> float:
    """Mean number of distinct openings (first ``words`` words) among a prompt's continuations (rows of
    ``generate``: prompt_id, continuation)."""
    first = generations["continuation"].fillna("").str.split().str[:words].str.join(" ")
    return float(first.groupby(generations["prompt_id"]).nunique().mean())


def exercise_prose(nucleus: pd.DataFrame, nucleus_half: pd.DataFrame, generations: pd.DataFrame,
                   generations_half: pd.DataFrame, model: str, top_p: float, half_p: float) -> dict[str, str]:
    """What the generation chapter's exercise solutions quote, {glue key: text} (keys "generation-"), from this run:
    ``nucleus`` and ``generations`` at ``top_p`` (every model), ``nucleus_half`` and ``generations_half`` at
    ``half_p`` for ``model`` (rows of ``record_nucleus`` and ``generate``). Empty nucleus tables (the section
    skipped) give "n/a"."""

    def share(x: float) -> str:
        return f"{100 * x:.3g}%"

    out = {"generation-half-p": f"{half_p:g}", "generation-top-p": f"{top_p:g}", "generation-half-model": model}
    over, largest = [], []
    for name, part in nucleus.groupby("model", sort=False):
        over.append(f"{share((part['nucleus_size'] > K_LADDER[0]).mean())} of {name}'s steps")
        largest.append(f"{int(part['nucleus_size'].max()):,} ({name})")
    agree = nucleus["same_as_transformers"].mean() if len(nucleus) else float("nan")
    out.update({
        "generation-over-256": " and ".join(over) or "n/a (no step inspected)",
        "generation-largest": " and ".join(largest) or "n/a",
        "generation-agree": ("every inspected step agrees" if agree == 1.0 else
                             f"{share(agree)} of the inspected steps agree" if len(nucleus) else "n/a"),
    })
    full = nucleus[nucleus["model"] == model]
    for key, part in (("09", full), ("05", nucleus_half)):
        sizes = part["nucleus_size"]
        out.update({f"generation-median-{key}": f"{sizes.median():g}" if len(part) else "n/a",
                    f"generation-max-{key}": f"{int(sizes.max()):,}" if len(part) else "n/a",
                    f"generation-single-{key}": share((sizes == 1).mean()) if len(part) else "n/a"})
    out["generation-steps-05"] = f"{len(nucleus_half):,}"
    mine = generations[generations["model"] == model]
    distinct = generations_half.groupby("prompt_id")["continuation"].nunique()
    per_prompt = int(generations_half.groupby("prompt_id").size().max()) if len(generations_half) else 0
    all_distinct = int((distinct == per_prompt).sum())
    full_open, half_open = openings_per_prompt(mine), openings_per_prompt(generations_half)
    out.update({
        "generation-openings-09": f"{full_open:.1f}",
        "generation-openings-05": f"{half_open:.1f}",
        "generation-openings-how": ("they start more alike" if half_open < full_open else
                                    "they start no more alike" if half_open == full_open else
                                    "they start less alike, against expectation"),
        "generation-distinct-05": (f"all {per_prompt} continuations are different as whole strings for every prompt"
                                   if all_distinct == len(distinct) else
                                   f"{all_distinct} of {len(distinct)} prompts have {per_prompt} different "
                                   "continuations as whole strings"),
    })
    return out
