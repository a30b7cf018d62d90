"""The SASS paper's tables (3, 5, 6, 7) computed from recorded predictions, and the paper's values beside ours.

Inputs are the frames of ``toxlib.data.load_sass_predictions`` and ``load_sass_tweeteval``. A system's
prediction column holds 0/1 (or NaN for a failed prediction, which is left out and counted, never taken as 0).
"""

from __future__ import annotations

import pandas as pd

from toxlib.data.wordmatch import contains_listed_word
from toxlib.metrics import conditional_rates, prf_table
from toxlib.papers.sass.printed import CATEGORY_ORDER, PAPER_TABLE6
from toxlib.scorers.base import headline_column

# system name -> prediction column of load_sass_predictions()
RECORDED_SYSTEMS = {
    "PERSPECTIVE": "perspective_label",
    "GPT-3-ZERO": "gpt3_zero",
    "GPT-3-ONE": "gpt3_one",
    "GPT-3-FEW": "gpt3_few",
}


def with_paper(ours: pd.DataFrame, paper: pd.DataFrame, key: str) -> pd.DataFrame:
    """Our table with the paper's columns beside each of ours (suffix ``_paper``) and their difference (``_diff``)."""
    missing = [c for c in paper.columns.drop(key) if c not in ours.columns]
    if missing:
        raise ValueError(f"our table lacks the paper's column(s) {missing}")
    unmatched = sorted(set(ours[key]) - set(paper[key]))
    if unmatched:
        raise ValueError(f"{key} value(s) {unmatched} are not in the paper's table (check the spelling)")
    merged = ours.merge(paper, on=key, how="left", suffixes=("", "_paper"), validate="one_to_one")
    for col in paper.columns.drop(key):
        merged[f"{col}_diff"] = merged[col] - merged[f"{col}_paper"]
    ordered = [key] + [c for col in paper.columns.drop(key) for c in (col, f"{col}_paper", f"{col}_diff")]
    return merged[ordered + [c for c in merged.columns if c not in ordered]]


def relabel(pred: pd.DataFrame, human_threshold: float = 0.5, perspective_threshold: float = 0.5) -> pd.DataFrame:
    """A copy of ``pred`` with human_label = human_toxicity > human_threshold and perspective_label =
    perspective_toxicity > perspective_threshold (the paper: both 0.5, strictly greater)."""
    out = pred.copy()
    for label, score, threshold in (("human_label", "human_toxicity", human_threshold),
                                    ("perspective_label", "perspective_toxicity", perspective_threshold)):
        # a missing score stays a missing label (NaN), never a 0
        out[label] = (out[score] > threshold).astype(float).where(out[score].notna())
    return out


def table3(pred: pd.DataFrame, systems: dict[str, str] = RECORDED_SYSTEMS) -> pd.DataFrame:
    """Precision/recall/F1 of each system against human_label (human_toxicity > 0.5). One row per system."""
    return prf_table(pred["human_label"], {name: pred[col] for name, col in systems.items()})


def table5(pred: pd.DataFrame, columns: dict[str, str] | None = None) -> pd.DataFrame:
    """Per-category means (continuous scores for human and Perspective, positive rates for binary systems).

    columns: {output column: input column}; default human, perspective and the three GPT-3 settings.
    One row per category in the paper's order; columns: category, n, then the means.
    """
    columns = columns or {
        "human": "human_toxicity",
        "perspective": "perspective_toxicity",
        "gpt3_zero": "gpt3_zero",
        "gpt3_one": "gpt3_one",
        "gpt3_few": "gpt3_few",
    }
    grouped = pred.groupby("category")
    table = grouped[list(columns.values())].mean().rename(columns={v: k for k, v in columns.items()})
    table.insert(0, "n", grouped.size())
    order = [c for c in CATEGORY_ORDER if c in table.index] + sorted(set(table.index) - set(CATEGORY_ORDER))
    return table.loc[order].rename_axis("category").reset_index()


def table6(
    pred: pd.DataFrame, words, systems: dict[str, str] = RECORDED_SYSTEMS, subset: pd.Series | None = None
) -> pd.DataFrame:
    """Swear-word conditionals per system: p(swear | flagged toxic) and p(flagged toxic | contains swear word).

    words: the word list used to detect swear words (see toxlib.data.wordmatch). subset: optional boolean mask of rows.
    Columns: system, p_swear_given_toxic, p_toxic_given_swear, n_flagged, n_contains, n_both, n.
    """
    frame = pred if subset is None else pred[subset]
    has_swear = contains_listed_word(frame["text"], words)
    rows = []
    for name, col in systems.items():
        known = frame[col].notna().to_numpy()
        rates = conditional_rates(frame[col].to_numpy()[known] == 1, has_swear[known])
        rows.append(
            {
                "system": name,
                "p_swear_given_toxic": rates["p_contains_given_flagged"],
                "p_toxic_given_swear": rates["p_flagged_given_contains"],
                **{k: rates[k] for k in ("n_flagged", "n_contains", "n_both", "n")},
            }
        )
    return pd.DataFrame(rows)


def table6_by_word_list(pred: pd.DataFrame, word_lists: dict, systems: dict[str, str] = RECORDED_SYSTEMS,
                        scopes: bool = True) -> pd.DataFrame:
    """:func:`table6` once per word list ({version: words}), labelled "LDNOOBW <version> (<n words>)" in a
    word_list column; with ``scopes``, over all comments and over the False Positive category (a scope column) and
    with the paper's values beside ours (``_paper`` columns); without, over all comments, labelled
    "LDNOOBW <version>"."""
    if not scopes:
        return pd.concat([table6(pred, words, systems).assign(word_list=f"LDNOOBW {version}")
                          for version, words in word_lists.items()], ignore_index=True)
    parts = []
    for version, words in word_lists.items():
        label = f"LDNOOBW {version} ({len(words)})"
        for scope, mask in (("all 250 comments", None),
                            ("False Positive category", pred["category"].eq("False Positive"))):
            parts.append(table6(pred, words, systems, subset=mask).assign(word_list=label, scope=scope))
    return pd.concat(parts, ignore_index=True).merge(PAPER_TABLE6, on="system", how="left", suffixes=("", "_paper"))


def table7(tweets: pd.DataFrame) -> pd.DataFrame:
    """Precision/recall/F1 of Perspective (> 0.5) and GPT-3-FEW against the TweetEval hate labels (1,000 tweets).

    Failed Perspective calls and unparsed GPT-3 replies are NaN and left out (counted in n_missing).
    """
    return prf_table(tweets["label"], {"PERSPECTIVE": tweets["perspective_label"], "GPT-3-FEW": tweets["gpt3_few"]})


def with_scorer_columns(pred: pd.DataFrame, scores: dict[str, pd.DataFrame],
                        threshold: float = 0.5) -> tuple[pd.DataFrame, dict[str, str]]:
    """A copy of ``pred`` with, per local scorer {name: ``Scorer.score`` table aligned with pred's rows}, a
    ``<name>_toxicity`` column (its headline score, see ``toxlib.scorers.base.headline_column``) and a
    ``<name>_label`` column (score > ``threshold``, the paper's rule for Perspective; NaN where the scorer failed).
    Returns (frame, {name: label column}) ready for ``table3``/``table6`` as extra systems."""
    out, systems = pred.copy(), {}
    for name, table in scores.items():
        value = table[headline_column(table)].to_numpy()
        out[f"{name}_toxicity"] = value
        out[f"{name}_label"] = pd.Series(value > threshold, index=out.index).astype(float).where(~pd.isna(value))
        systems[name] = f"{name}_label"
    return out, systems
