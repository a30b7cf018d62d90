"""The SASS paper's tables (3, 5, 6, 7) computed from recorded predictions, with the paper's printed values.

Inputs are the frames of ``toxlib.data.load_sass_predictions`` and ``load_sass_tweeteval``. A system's
prediction column holds 0/1 (or NaN for a failed prediction, which is left out and counted, never taken as 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.data.wordmatch import contains_listed_word
from toxlib.metrics import conditional_rates, prf_table
from toxlib.metrics.uncertainty import proportion_interval, unit_interval
from toxlib.papers.printed import Printed, Rule
from toxlib.papers.prompt_classifier import next_token_reading, sampled_reading
from toxlib.report.claims import claim, fact, within
from toxlib.scorers import get_scorer
from toxlib.scorers.base import headline, score_all

# system name -> prediction column of load_sass_predictions()
RECORDED_SYSTEMS = {
    "PERSPECTIVE": "perspective_label",
    "GPT-3-ZERO": "gpt3_zero",
    "GPT-3-ONE": "gpt3_one",
    "GPT-3-FEW": "gpt3_few",
}

CATEGORY_ORDER = [
    "Blackmail", "Classism", "Exclusionary", "Gaslighting", "Misogyny", "Sarcasm",
    "Sexual Harassment", "Stereotyping", "Neutral", "False Positive",
]

# Printed in the paper (values as fractions).
PAPER_TABLE3 = pd.DataFrame(
    {
        "system": ["PERSPECTIVE", "GPT-3-ZERO", "GPT-3-ONE", "GPT-3-FEW"],
        "precision": [0.26, 0.83, 0.77, 0.73],
        "recall": [0.05, 0.19, 0.11, 0.52],
        "f1": [0.08, 0.31, 0.19, 0.61],
    }
)
PAPER_TABLE5 = pd.DataFrame(
    {
        "category": CATEGORY_ORDER,
        "human": [0.682, 0.787, 0.836, 0.565, 0.787, 0.665, 0.80, 0.814, 0.007, 0.054],
        "perspective": [0.157, 0.193, 0.234, 0.155, 0.222, 0.337, 0.219, 0.317, 0.104, 0.809],
        "gpt3_zero": [0.40, 0.208, 0.12, 0.16, 0.292, 0.08, 0.16, 0.12, 0.0, 0.25],
        "gpt3_one": [0.40, 0.0, 0.24, 0.0, 0.083, 0.0, 0.04, 0.0, 0.0, 0.25],
        "gpt3_few": [0.69, 0.542, 0.64, 0.44, 0.583, 0.32, 0.32, 0.40, 0.28, 0.792],
    }
)
PAPER_TABLE6 = pd.DataFrame(
    {
        "system": ["PERSPECTIVE", "GPT-3-ZERO", "GPT-3-ONE", "GPT-3-FEW"],
        "p_swear_given_toxic": [0.53, 0.14, 0.15, 0.12],
        "p_toxic_given_swear": [1.0, 0.33, 0.22, 0.83],
    }
)
PAPER_TABLE7 = pd.DataFrame(
    {"system": ["PERSPECTIVE", "GPT-3-FEW"], "precision": [0.40, 0.41], "recall": [0.62, 0.69], "f1": [0.48, 0.52]}
)


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


def prf_claim(ours: pd.DataFrame, paper: pd.DataFrame, system: str, label: str, note: str,
              tolerance: float = 0.01) -> dict:
    """A claims row comparing one system's precision/recall/F1 with the paper's; holds when all three are within
    ``tolerance`` (an exact fact about recorded predictions: no interval). ours, paper: frames with columns system,
    precision, recall, f1."""
    cols = ["precision", "recall", "f1"]
    mine = ours.set_index("system").loc[system, cols].astype(float)
    theirs = paper.set_index("system").loc[system, cols].astype(float)
    holds = all(within(p, o, tolerance) for p, o in zip(theirs, mine))
    return claim(f"{label}: {system} precision/recall/F1", "/".join(f"{v:.2f}" for v in theirs),
                 "/".join(f"{v:.3f}" for v in mine), verdict=fact(holds), note=note, kind="recorded predictions")


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


def table7(tweets: pd.DataFrame) -> pd.DataFrame:
    """Precision/recall/F1 of Perspective (> 0.5) and GPT-3-FEW against the TweetEval hate labels (1,000 tweets).

    Failed Perspective calls and unparsed GPT-3 replies are NaN and left out (counted in n_missing).
    """
    return prf_table(tweets["label"], {"PERSPECTIVE": tweets["perspective_label"], "GPT-3-FEW": tweets["gpt3_few"]})


def with_scorer_columns(pred: pd.DataFrame, scores: dict[str, pd.DataFrame],
                        threshold: float = 0.5) -> tuple[pd.DataFrame, dict[str, str]]:
    """A copy of ``pred`` with, per local scorer {name: ``Scorer.score`` table aligned with pred's rows}, a
    ``<name>_toxicity`` column (its headline score, see ``toxlib.scorers.base.headline``) and a
    ``<name>_label`` column (score > ``threshold``, the paper's rule for Perspective; NaN where the scorer failed).
    Returns (frame, {name: label column}) ready for ``table3``/``table6`` as extra systems."""
    out, systems = pred.copy(), {}
    for name, table in scores.items():
        value = table[headline(table)].to_numpy()
        out[f"{name}_toxicity"] = value
        out[f"{name}_label"] = pd.Series(value > threshold, index=out.index).astype(float).where(~pd.isna(value))
        systems[name] = f"{name}_label"
    return out, systems


def lm_classifier_labels(lms: dict, texts, settings=("zero", "one", "few"), readings=("next-token", "sampled"),
                         progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ask each LM ({name: LanguageModel}) the paper's prompts (``toxlib.papers.prompt_classifier``) about every text.

    Returns (labels, systems): labels has one column per system "<name> <SETTING> (<reading>)" with 0/1/NaN per
    text (rows aligned with ``texts``); systems has one row per system with columns system, model, setting,
    reading, n_unparsed_replies (sampled replies that parsed to no answer), n_unparsed_labels (texts whose
    majority was no answer: NaN labels), answer_mass (next-token reading: mean P(" True") + P(" False")).
    """

    labels, rows = {}, []
    for name, lm in lms.items():
        for setting in settings:
            for reading in readings:
                system = f"{name} {setting.upper()} ({reading})"
                if reading == "next-token":
                    out = next_token_reading(lm, texts, setting, progress=progress)
                    extra = {"answer_mass": out["answer_mass"].mean()}
                elif reading == "sampled":
                    out = sampled_reading(lm, texts, setting, progress=progress)
                    extra = {"n_unparsed_replies": int(out["n_unparsed"].sum()),
                             "n_unparsed_labels": int(out["label"].isna().sum())}
                else:
                    raise ValueError(f"unknown reading {reading!r}; known: next-token, sampled")
                labels[system] = out["label"].to_numpy(dtype=float)
                rows.append({"system": system, "model": name, "setting": setting, "reading": reading, **extra})
    return pd.DataFrame(labels), pd.DataFrame(rows)


def classifier_table(pred: pd.DataFrame, systems: dict[str, str], lm_systems: pd.DataFrame) -> pd.DataFrame:
    """Table 3 for every system, with what each system is: one row per system with columns system, setting,
    precision, recall, f1, kind ("recorded", "local LM" or "local scorer"), model, reading, n, n_missing,
    n_pred_pos, and for local LMs n_unparsed_replies / n_unparsed_labels (sampled) or answer_mass (next-token).

    pred: SASS predictions with a label column per system (``systems``: {system: column}); lm_systems: the second
    frame of ``lm_classifier_labels``. Systems that are neither recorded nor LMs are local scorers; their setting
    (and Perspective's) reads "threshold": the thresholds are the ones ``relabel`` and ``with_scorer_columns`` used."""
    table = table3(pred, systems)
    recorded = {"PERSPECTIVE": "threshold", "GPT-3-ZERO": "zero", "GPT-3-ONE": "one", "GPT-3-FEW": "few"}
    meta = []
    for system in table["system"]:
        if system in recorded:
            meta.append({"system": system, "kind": "recorded", "setting": recorded[system],
                         "model": "Perspective" if system == "PERSPECTIVE" else "GPT-3 (text-davinci-001)",
                         "reading": "recorded"})
        elif system in set(lm_systems["system"]):
            meta.append({"kind": "local LM"} | lm_systems.set_index("system").loc[system].to_dict()
                        | {"system": system})
        else:
            meta.append({"system": system, "kind": "local scorer", "setting": "threshold",
                         "model": system, "reading": "score"})
    merged = table.merge(pd.DataFrame(meta), on="system", how="left", validate="one_to_one")
    first = ["system", "setting", "precision", "recall", "f1", "kind", "model", "reading"]
    return merged[first + [c for c in merged.columns if c not in first and c != "n_true_pos"]]


def best_lm_system(classifiers: pd.DataFrame, reading: str | None = None) -> pd.Series | None:
    """The local-LM row of ``classifiers`` (:func:`classifier_table`) with the highest F1, among those read with
    ``reading`` when given; None when there is none."""
    rows = classifiers[classifiers["kind"] == "local LM"]
    if reading is not None:
        rows = rows[rows["reading"] == reading]
    return rows.sort_values("f1", ascending=False).iloc[0] if len(rows) else None


#: Every value of the paper the chapter uses, with the table or section it comes from (PAPER_TABLE3 ... are the
#: same frames).
PAPER = {
    "table3": Printed(PAPER_TABLE3, "Table 3"),
    "table5": Printed(PAPER_TABLE5, "Table 5"),
    "table6": Printed(PAPER_TABLE6, "Table 6"),
    "table7": Printed(PAPER_TABLE7, "Table 7"),
    "sexual_harassment": Printed("0.219 vs 0.80", "Table 5",
                                 quote="21.9% for “Sexual Harassment” comments versus the 80% human baseline"),
    "swear_comments": Printed(18, "§5.2, Table 6",
                              quote="includes 18 “False Positive” examples that contain swear words. PERSPECTIVE "
                                    "rated all of them as toxic"),
}

#: How each claim of the SASS chapter and of the scorers chapter's SASS rows turns the paper's words into a test
#: on a number (``Rule.printed`` names the PAPER value it reads).
RULES = {
    "beats_in_f1": Rule("table3", 0.0, "above", "'beats' (F1): the F1 difference above 0, paired over comments"),
    "sexual_harassment": Rule("sexual_harassment", 0.005, "within",
                              "the recorded mean Perspective toxicity equals the paper's 21.9% to 0.005 (rounding)"),
    "flags_every_swear_comment": Rule("swear_comments", 0.8, "above",
                                      "'rated all of them as toxic': p(flagged | contains a swear word) above 0.8 "
                                      "(LDNOOBW finds other comments than the paper's unpublished method)"),
    "swear_given_flagged": Rule("table6", 0.05, "within",
                                "p(swear word | flagged) within 0.05 of the paper's Table 6 value"),
}


def claims(table3: pd.DataFrame, table5: pd.DataFrame, table6: pd.DataFrame, table7: pd.DataFrame,
           classifiers: pd.DataFrame, table6_local: pd.DataFrame, table7_local: pd.DataFrame, n_comments: int,
           n_tweets: int, scorer_threshold: float, comments: pd.DataFrame | None = None,
           systems: dict[str, str] | None = None) -> list[dict]:
    """Claims of the sass chapter. Part 1 (recorded predictions): ``table3``, ``table5``, ``table7`` (ours, as
    :func:`table3` / :func:`table5` / :func:`table7`; ``with_paper`` output works too) and ``table6`` (rows of
    :func:`table6` with word_list and scope columns). Part 2 (local models and scorers on ``n_comments`` comments
    and ``n_tweets`` tweets): ``classifiers`` (:func:`classifier_table`), ``table6_local`` (:func:`table6` for every
    system, with word_list) and ``table7_local`` (precision/recall/F1 per system on the tweets). With ``comments``
    (the part-2 comments with human_label and a 0/1 column per system, ``systems``: {system: column}), the F1
    comparisons of local LMs carry a 95% interval from resampling comments, paired across systems (F1 differences:
    ``f1_difference``)."""
    paper_f1 = PAPER_TABLE3.set_index("system")["f1"]
    paper5 = PAPER_TABLE5.set_index("category")
    fp = table5.set_index("category")
    everything = table6[table6["scope"] == "all 250 comments"]
    has_rtp = everything["word_list"].str.contains("rtp")
    swear_all = (everything[has_rtp].set_index("system") if has_rtp.any()
                 else everything.groupby("system").first())
    f1 = table3.set_index("system")["f1"]
    persp = swear_all.loc["PERSPECTIVE"]
    swear_ci = share_interval(int(persp["n_both"]), int(persp["n_contains"]))  # None for 0 of 0
    given_ci = share_interval(int(persp["n_both"]), int(persp["n_flagged"]))
    rows = [prf_claim(table3, PAPER_TABLE3, s, "Table 3 (SASS)", "recorded predictions; holds = within 0.01")
            for s in PAPER_TABLE3["system"]]
    rows += [
        claim("GPT-3-FEW beats Perspective on SASS (F1)",
              f"{paper_f1['GPT-3-FEW']:.2f} vs {paper_f1['PERSPECTIVE']:.2f}",
              f"{f1['GPT-3-FEW']:.3f} vs {f1['PERSPECTIVE']:.3f}", verdict=fact(f1["GPT-3-FEW"] > f1["PERSPECTIVE"]),
              note="recorded predictions of all 250 comments (exact)", kind="recorded predictions"),
        claim("Perspective rates False Positive comments highest of all categories",
              paper5.loc["False Positive", "perspective"], fp.loc["False Positive", "perspective"],
              verdict=fact(fp["perspective"].idxmax() == "False Positive"),
              note="mean Perspective toxicity per category (recorded, exact)", kind="recorded predictions"),
        claim("Perspective: Sexual Harassment 21.9% vs humans 80%", PAPER["sexual_harassment"].value,
              f"{fp.loc['Sexual Harassment', 'perspective']:.3f} vs {fp.loc['Sexual Harassment', 'human']:.3f}",
              verdict=fact(within(paper5.loc["Sexual Harassment", "perspective"],
                                  fp.loc["Sexual Harassment", "perspective"], RULES["sexual_harassment"].cutoff)),
              note="recorded scores and labels (exact)", kind="recorded predictions"),
        claim("Perspective flags every comment containing a swear word",
              PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_toxic_given_swear"],
              **_share(swear_ci), **RULES["flags_every_swear_comment"].test(),
              note=f"{int(persp['n_both'])} of {int(persp['n_contains'])} comments with an LDNOOBW swear word flagged "
                   f"(the paper counts {PAPER['swear_comments'].value}); holds = above 0.8 (it relies on swear "
                   "words); exact interval over those comments", kind="recorded predictions"),
        claim("p(swear word | Perspective flags toxic)",
              PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_swear_given_toxic"],
              **_share(given_ci),
              **RULES["swear_given_flagged"].test(PAPER_TABLE6.set_index("system").loc["PERSPECTIVE",
                                                                                       "p_swear_given_toxic"]),
              note=f"{int(persp['n_both'])} of {int(persp['n_flagged'])} flagged comments; holds = within 0.05 of the "
                   "paper; LDNOOBW detects fewer swear words than the paper's unpublished method (see Table 6)",
                   kind="recorded predictions"),
    ]
    rows += [prf_claim(table7, PAPER_TABLE7, s, "Table 7 (TweetEval)",
                       "failed calls and unparsed replies left out; holds = within 0.01")
             for s in PAPER_TABLE7["system"]]
    return rows + _local_claims(classifiers, table6_local, table7_local, n_comments, n_tweets, scorer_threshold,
                                comments, systems)


def _f1(labels: np.ndarray, predicted: np.ndarray) -> float:
    """F1 = 2 TP / (positives + predicted positives), NaN when both are empty (undefined, as ``binary_prf`` and
    scikit-learn's ``zero_division=np.nan`` give it); labels and predictions 0/1. The closed form, because the
    bootstrap calls it on thousands of resamples."""
    denominator = labels.sum() + predicted.sum()
    return float(2 * (labels * predicted).sum() / denominator) if denominator else float("nan")


def share_interval(k: int, n: int):
    """The exact interval of k of n (``proportion_interval``), or None for 0 of 0: a share of nothing is not
    judged, not 0 of 1."""
    return proportion_interval(k, n) if n > 0 else None


def _share(ci) -> dict:
    """claim() arguments for a share's interval: its value, or NaN and "not judged" when there was nothing to count
    (``share_interval`` gave None)."""
    if ci is None:
        return {"our_value": float("nan"), "verdict": "not judged"}
    return {"our_value": round(ci.value, 3), "interval": ci}


def f1_difference(comments: pd.DataFrame, first: str, others: list[str]):
    """95% interval of F1(first) - max F1(others) against human_label, resampling comments with every system's
    predictions kept together (``uncertainty.unit_interval`` over rows); comments where any of these systems has
    no prediction are left out. Columns are those of ``comments``."""

    rows = comments[["human_label", first, *others]].dropna().astype(float).to_numpy()

    def gap(r):
        return _f1(r[:, 0], r[:, 1]) - max(_f1(r[:, 0], r[:, j]) for j in range(2, r.shape[1]))

    return unit_interval(rows, gap)


def _local_claims(classifiers: pd.DataFrame, table6_local: pd.DataFrame, table7_local: pd.DataFrame,
                  n_comments: int, n_tweets: int, scorer_threshold: float, comments: pd.DataFrame | None = None,
                  systems: dict[str, str] | None = None) -> list[dict]:
    """Part 2 of :func:`claims`: the paper's findings on local LMs and scorers."""
    paper_f1 = PAPER_TABLE3.set_index("system")["f1"]
    paper7_f1 = PAPER_TABLE7.set_index("system")["f1"]
    local_f1 = classifiers.set_index("system")["f1"]
    lm_rows = classifiers[classifiers["kind"] == "local LM"].set_index("system")
    best_lm = best_lm_system(classifiers)["system"]
    persp_f1 = local_f1["PERSPECTIVE"]
    paired = comments is not None and systems is not None
    text = f"{best_lm}: {lm_rows.loc[best_lm, 'f1']:.3f} vs {persp_f1:.3f}"
    if paired:
        ci = f1_difference(comments, systems[best_lm], [systems["PERSPECTIVE"]])
        best = dict(our_value=round(ci.value, 3), interval=ci, **RULES["beats_in_f1"].test(),
                    note=f"F1 difference, {text}; {ci.n} comments resampled, paired; Perspective on the same comments")
    else:
        best = dict(our_value=text, verdict=fact(lm_rows.loc[best_lm, "f1"] > persp_f1),
                    note=f"{n_comments} comments; Perspective recomputed on the same comments; point estimates")
    rows = [claim("A few-shot prompted LM beats Perspective on SASS (F1); here: the best local LM system",
                  f"GPT-3-FEW {paper_f1['GPT-3-FEW']:.2f} vs {paper_f1['PERSPECTIVE']:.2f}", **best, kind="our models")]
    if set(lm_rows["setting"]) >= {"zero", "one", "few"} and "next-token" in set(lm_rows["reading"]):
        paper = f"{paper_f1['GPT-3-FEW']:.2f} vs {paper_f1['GPT-3-ZERO']:.2f} / {paper_f1['GPT-3-ONE']:.2f}"
        for m in pd.unique(lm_rows["model"]):
            names = [f"{m} {s.upper()} (next-token)" for s in ("few", "zero", "one")]
            f = [lm_rows.loc[n, "f1"] for n in names]
            text = f"{f[0]:.2f} vs {f[1]:.2f} / {f[2]:.2f}"
            if paired:
                ci = f1_difference(comments, systems[names[0]], [systems[n] for n in names[1:]])
                few = dict(our_value=round(ci.value, 3), interval=ci, **RULES["beats_in_f1"].test(),
                           note=f"F1(few) - max F1(zero, one): {text}; {ci.n} comments resampled, paired")
            else:
                few = dict(our_value=text, verdict=fact(f[0] > max(f[1], f[2])), note="few vs zero / one")
            rows.append(claim(f"Few-shot prompting beats zero- and one-shot (F1); here: {m}, next-token reading",
                              paper, **few, kind="our models"))
    first_list = table6_local["word_list"].iloc[0]
    swear = table6_local[table6_local["word_list"] == first_list].set_index("system")
    for name in classifiers.loc[classifiers["kind"] == "local scorer", "system"]:
        if int(swear.loc[name, "n_contains"]) == 0:
            rows.append(claim(f"Perspective flags every comment with a swear word; here: the {name} scorer",
                              PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_toxic_given_swear"], "no comment",
                              verdict="not judged", note=f"no comment with a swear word ({first_list}) among these",
                              kind="our models"))
            continue
        ci = proportion_interval(int(swear.loc[name, "n_both"]), int(swear.loc[name, "n_contains"]))
        rows.append(claim(f"Perspective flags every comment with a swear word; here: the {name} scorer",
                          PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_toxic_given_swear"],
                          round(ci.value, 3), interval=ci, **RULES["flags_every_swear_comment"].test(),
                          note=f"at > {scorer_threshold}, {first_list}; {int(swear.loc[name, 'n_both'])} of "
                               f"{ci.n} comments with a swear word; recorded Perspective "
                               f"{swear.loc['PERSPECTIVE', 'p_toxic_given_swear']:.2f}; holds = it shares the "
                               "reliance (above 0.8); exact interval", kind="our models"))
    t7f1 = table7_local.set_index("system")["f1"]
    tweet_lms = [s for s in table7_local["system"] if s in lm_rows.index]
    if tweet_lms:
        lm_system = tweet_lms[0]
        rows.append(claim("On TweetEval a few-shot LM is close to Perspective (F1); here: the best local LM",
                          f"GPT-3-FEW {paper7_f1['GPT-3-FEW']:.2f} vs {paper7_f1['PERSPECTIVE']:.2f}",
                          f"{lm_system}: {t7f1[lm_system]:.3f} vs {t7f1['PERSPECTIVE']:.3f}",
                          verdict=fact(abs(t7f1[lm_system] - t7f1["PERSPECTIVE"]) <= 0.05),
                          note=f"{n_tweets:,} tweets; holds = within 0.05 of Perspective; point estimates",
                          kind="our models"))
    return rows


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


def tweet_table7(tweets: pd.DataFrame, classifiers: pd.DataFrame, lms: dict, scorers: list[str],
                 threshold: float = 0.5) -> pd.DataFrame:
    """Table 7 with local systems: precision/recall/F1 against ``tweets``' hate labels for the recorded Perspective
    and GPT-3-FEW, the best next-token local LM system of ``classifiers`` (its model of ``lms`` asked in its
    setting) and each scorer of ``scorers`` at > ``threshold``. One row per system, as ``prf_table``."""

    best = best_lm_system(classifiers, "next-token")
    labels = (lm_classifier_labels({best["model"]: lms[best["model"]]}, tweets["text"], [best["setting"]],
                                   ["next-token"])[0] if best is not None else pd.DataFrame(index=tweets.index))
    scored, systems = with_local_systems(tweets, labels, scorers, threshold,
                                         {"PERSPECTIVE": "perspective_label", "GPT-3-FEW": "gpt3_few"})
    return prf_table(scored["label"], {name: scored[col] for name, col in systems.items()})


def with_local_systems(frame: pd.DataFrame, lm_labels: pd.DataFrame, scorers: list[str], threshold: float,
                       recorded: dict[str, str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """``frame`` (SASS comments or tweets, a ``text`` column) with the local systems beside its recorded ones: the
    LM systems' labels (``lm_labels``, one column per system, rows aligned) and, per scorer of ``scorers``, its
    toxicity and its label at > ``threshold`` (``with_scorer_columns``). Returns (frame, {system: label column}),
    the recorded systems first, then the LM systems, then the scorers."""
    scores = score_all({name: get_scorer(name) for name in scorers}, frame["text"])
    scored, scorer_systems = with_scorer_columns(frame, scores, threshold)
    scored = pd.concat([scored, lm_labels], axis=1)
    return scored, {**recorded, **{s: s for s in lm_labels.columns}, **scorer_systems}
