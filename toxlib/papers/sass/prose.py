"""What the sass chapter's exercise solutions quote, {glue key: text} for myst-nb glue (``toxlib.publish.glue``),
computed from the recorded predictions so that the text states this run (keys "sass-"): Perspective at the paper's
threshold and at a lower one (Tables 3 and 6), and the swear-word lists compared (Table 6).
"""

from __future__ import annotations

import pandas as pd
from scipy.stats import binomtest
from sklearn.metrics import roc_auc_score

from toxlib.data.wordmatch import contains_listed_word
from toxlib.metrics.baselines import ALWAYS, RANDOM, prevalence_text
from toxlib.papers.sass.tables import relabel, table3, table6, table6_by_word_list

SYSTEM = "PERSPECTIVE"


def _perspective(pred: pd.DataFrame, words, subset=None) -> pd.Series:
    """Table 3 and Table 6 figures of Perspective on ``pred`` (labels already thresholded), one Series."""
    t3 = table3(pred).set_index("system").loc[SYSTEM]
    t6 = table6(pred, words, subset=subset).set_index("system").loc[SYSTEM]
    flagged = pred["perspective_label"] == 1
    true_pos = int((flagged & (pred["human_label"] == 1)).sum())
    return pd.concat([t3[["precision", "recall", "f1", "n_pred_pos"]],
                      t6[["p_swear_given_toxic", "p_toxic_given_swear", "n_flagged", "n_contains", "n_both"]],
                      pd.Series({"true_pos": true_pos})])


def _move(name: str, before: float, after: float) -> str:
    verb = "rises" if after > before else ("falls" if after < before else "stays at")
    return f"{name} {verb} from {before:.3f} to {after:.3f}" if verb != "stays at" else f"{name} stays at {after:.3f}"


def _direction(before: pd.Series, after: pd.Series) -> str:
    """How precision and recall moved between two thresholds, in words."""
    precision, recall = after["precision"] - before["precision"], after["recall"] - before["recall"]
    if precision > 0 and recall > 0:
        return "Precision and recall both rise, which a lower threshold does not usually do"
    if precision < 0 < recall:
        return "Precision falls as recall rises: the usual trade-off"
    return "Precision and recall do not trade off here"


def _auc_reading(auc: float) -> str:
    if auc < 0.45:
        return "worse than chance"
    if auc <= 0.55:
        return "no better than chance"
    return "a weak ranking" if auc < 0.7 else ("a ranking that roughly follows the labels" if auc < 0.8
                                                 else "a good ranking")


def threshold_prose(raw: pd.DataFrame, words, human_threshold: float, threshold: float,
                    lower: float) -> dict[str, str]:
    """The threshold exercise: Perspective flagging at ``lower`` instead of ``threshold``. raw: the recorded SASS
    predictions (``toxlib.data.load_sass_predictions``); words: one swear-word list."""
    base = relabel(raw, human_threshold, threshold)
    low = relabel(raw, human_threshold, lower)
    a, b = _perspective(base, words), _perspective(low, words)
    fp_scope = base["category"].eq("False Positive")
    fp = int(table6(base, words, subset=fp_scope).set_index("system").loc[SYSTEM, "n_flagged"])
    added = int(b["n_pred_pos"] - a["n_pred_pos"])
    known = base["human_label"].notna() & base["perspective_toxicity"].notna()
    auc = roc_auc_score(base.loc[known, "human_label"], base.loc[known, "perspective_toxicity"])
    return {
        "sass-lower": f"{lower:g}", "sass-threshold": f"{threshold:g}",
        "sass-flags": f"{int(b['n_pred_pos'])} comments instead of {int(a['n_pred_pos'])}",
        "sass-precision": _move("precision", a["precision"], b["precision"]),
        "sass-recall": _move("recall", a["recall"], b["recall"]),
        "sass-f1": _move("F1", a["f1"], b["f1"]),
        "sass-direction": _direction(a, b),
        "sass-fp-flags": f"{fp} of its {int(a['n_pred_pos'])} flags",
        "sass-added": (f"{added} comments it adds between {lower:g} and {threshold:g}, "
                       f"{int(b['true_pos'] - a['true_pos'])} are toxic for humans (true positives go from "
                       f"{int(a['true_pos'])} to {int(b['true_pos'])})"),
        "sass-auc": f"{auc:.2f}",
        "sass-auc-reading": _auc_reading(auc),
        "sass-toxic-given-swear": _move("P(toxic | swear word)", a["p_toxic_given_swear"], b["p_toxic_given_swear"]),
        "sass-swear-given-toxic": (_move("P(swear word | flagged)", a["p_swear_given_toxic"],
                                         b["p_swear_given_toxic"])
                                   + f" ({int(b['n_both'])} of {int(b['n_flagged'])})"),
        "sass-swear-comments": f"{int(a['n_contains'])}",
        "sass-swear-all-flagged": ("all of them were already flagged" if a["n_both"] == a["n_contains"] else
                                   f"{int(a['n_both'])} of them {'was' if a['n_both'] == 1 else 'were'} flagged at "
                                   f"{threshold:g}"),
    }


def word_list_prose(pred: pd.DataFrame, word_lists: dict) -> dict[str, str]:
    """The swear-list exercise: Table 6 per list ({version: words}) on ``pred`` (thresholded predictions)."""
    t6 = table6_by_word_list(pred, word_lists)
    by_list = [part.drop(columns="word_list").reset_index(drop=True) for _, part in t6.groupby("word_list", sort=False)]
    row = t6[(t6["system"] == SYSTEM) & (t6["scope"] == "all 250 comments")].iloc[0]
    k, n = int(row["n_both"]), int(row["n_contains"])
    ci = binomtest(k, n).proportion_ci(method="exact") if n else None
    if len(by_list) < 2:
        same = "Only one list ran here (the swear_lists parameter): run both to compare them"
        extra = "With one list there is nothing to compare"
    else:
        identical = all(part.equals(by_list[0]) for part in by_list[1:])
        same = (f"The list does not matter: both versions find a swear word in the same {n} of the {int(row['n'])} "
                "comments, so every row is identical between the lists" if identical else
                "The list matters: the rows differ between the lists (compare them in table6.csv)")
        versions = sorted(word_lists, key=lambda v: len(word_lists[v]))
        small, large = (set(word_lists[v]) for v in versions[:2])
        extra_words = sorted(large - small)
        found = int(contains_listed_word(pred["text"], extra_words).sum()) if extra_words else 0
        one = len(extra_words) == 1
        words = f"{len(extra_words)} word{'' if one else 's'}"
        extra = (f"The {words} of the longer list that the shorter one lacks occur{'s' if one else ''} in {found} "
                 "SASS comments. To see the list matter you need text where those words occur, or a detector "
                 "that matches differently (sub-word matches, casing, leetspeak)")
    flags, without = int(row["n_flagged"]), int(row["n_flagged"] - row["n_both"])
    return {
        "sass-lists-same": same, "sass-lists-extra": extra,
        "sass-list-swear-given-toxic": f"{row['p_swear_given_toxic']:.2f}",
        "sass-list-toxic-given-swear": f"{row['p_toxic_given_swear']:.2f}",
        "sass-list-paper": f"{row['p_swear_given_toxic_paper']:.2f} and {row['p_toxic_given_swear_paper']:.2f}",
        "sass-list-k-of-n": f"{k} of {n}",
        "sass-list-ci": f"{ci.low:.2f} to {ci.high:.2f}" if ci else "undefined (no comment with a swear word)",
        "sass-list-without": (f"every one of Perspective's {flags} flags contains a swear word" if without == 0 else
                              f"{'most' if 2 * without > flags else 'some'} of Perspective's flags ({without} of "
                              f"{flags}) contain no swear word at all"),
        "sass-list-reading": ("That is consistent with Perspective flagging any comment with a swear word"
                              if n and k == n else
                              f"Perspective left {n - k} of the {n} comments with a swear word unflagged"),
    }


def floor_prose(table: pd.DataFrame, labels, what: str, key: str, positive: str = "toxic") -> dict[str, str]:
    """What the trivial baselines say about a table of recorded systems ({glue key: text}, keys ``key`` and
    ``key``-precision): the constant "toxic" answer's precision/recall/F1 on ``labels`` (the prevalence of ``what``),
    the random answer's F1 with its 95% range, which systems of ``table`` (rows of ``prf_table`` with the baselines
    of ``toxlib.metrics.baselines.with_baselines``) beat the constant's F1, and which have a precision above the
    prevalence (a constant cannot raise precision above it; one-sided exact binomial test of the system's true
    positives among its flags, p < 0.05). ``positive``: what a label of 1 means, in words."""
    rows = table.set_index("system")
    always, random_ = rows.loc[ALWAYS], rows.loc[RANDOM]
    systems = rows[~rows.index.str.startswith("baseline: ")]
    above = [s for s in systems.index if systems.loc[s, "f1"] > always["f1"]]
    f1s = ", ".join(f"{s} {systems.loc[s, 'f1']:.3f}" for s in systems.index)
    beaten = (f"only {' and '.join(above)} beat{'s' if len(above) == 1 else ''} it" if above
              else f"no recorded system beats it ({f1s})")
    prevalence = float(always["precision"])
    sharper = [s for s in systems.index if int(systems.loc[s, "n_pred_pos"]) and binomtest(
        int(round(systems.loc[s, "precision"] * systems.loc[s, "n_pred_pos"])), int(systems.loc[s, "n_pred_pos"]),
        prevalence, alternative="greater").pvalue < 0.05]
    precise = ", ".join(f"{s} {systems.loc[s, 'precision']:.3f}" for s in systems.index)
    return {
        key: (f"{prevalence_text(labels, what)} are {positive}, so answering \"{positive}\" to every one scores "
              f"precision {prevalence:.3f}, recall 1 and F1 {always['f1']:.3f}, and a guesser at that rate F1 "
              f"{random_['f1']:.3f} (95% of 10,000 draws in [{random_['f1_low']:.3f}, "
              f"{random_['f1_high']:.3f}]); {beaten}"),
        f"{key}-precision": (f"precision against the prevalence of {prevalence:.3f}: {precise}; "
                             + (f"only {' and '.join(sharper)} flag{'s' if len(sharper) == 1 else ''} {positive} "
                                "text more reliably than chance (exact binomial test, p < 0.05)" if sharper else
                                f"none flags {positive} text more reliably than chance (exact binomial test, "
                                "p < 0.05)")),
    }
