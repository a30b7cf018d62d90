"""The claims of the sass chapter: the paper's findings tested on the recorded predictions (exact facts) and on
local LMs and scorers (with 95% intervals from resampling comments), with the cut-offs of ``printed.RULES``.

Every claim on a classification holds only when the system also beats what a constant answer earns on the same
items (``toxlib.metrics.baselines``): an F1 comparison needs the system's F1 above "always toxic"'s (paired over
comments where the comparison is), a scorer's reliance on swear words needs it to flag comments with a swear word
more often than those without (a constant flags both alike). A claim that would hold without that is "not
informative", with the reason in its note. The paper's own claims on its recorded predictions stay judged as the
paper states them, with the floor in their note.

Subjects: a recorded system ("system:PERSPECTIVE"), one local LM ("model:<name>"), the local LMs pooled where the
claim reads the best of them ("models:<a>+<b>"), a local scorer ("scorer:<name>"). Rules are ``RULES`` keys where
one decides the claim.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.metrics.baselines import F1_FLOOR, floored
from toxlib.metrics.uncertainty import proportion_difference_interval, proportion_interval, unit_interval
from toxlib.papers.sass.local_systems import best_lm_system
from toxlib.papers.sass.printed import PAPER, PAPER_TABLE3, PAPER_TABLE5, PAPER_TABLE6, PAPER_TABLE7, RULES
from toxlib.publish.claims import claim, fact, model_subject, models_subject, within


def prf_claim(ours: pd.DataFrame, paper: pd.DataFrame, system: str, label: str, note: str,
              tolerance: float = 0.01, *, rule: str) -> dict:
    """A claims row comparing one system's precision/recall/F1 with the paper's; holds when all three are within
    ``tolerance`` (an exact fact about recorded predictions: no interval; rule ``rule``, subject
    "system:<system>"). ours, paper: frames with columns system, precision, recall, f1."""
    cols = ["precision", "recall", "f1"]
    mine = ours.set_index("system").loc[system, cols].astype(float)
    theirs = paper.set_index("system").loc[system, cols].astype(float)
    holds = all(within(p, o, tolerance) for p, o in zip(theirs, mine))
    return claim(f"{label}: {system} precision/recall/F1", "/".join(f"{v:.2f}" for v in theirs),
                 "/".join(f"{v:.3f}" for v in mine), verdict=fact(holds), note=note, kind="recorded predictions",
                 rule=rule, subject=f"system:{system}")


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
    floor = floor_f1(table3, "table3")
    beaten = [s for s in ("GPT-3-FEW", "PERSPECTIVE") if f1[s] > floor]
    rows = [prf_claim(table3, PAPER_TABLE3, s, "Table 3 (SASS)", "recorded predictions; holds = within 0.01",
                      rule="table3_prf") for s in PAPER_TABLE3["system"]]
    rows += [
        claim("GPT-3-FEW beats Perspective on SASS (F1)",
              f"{paper_f1['GPT-3-FEW']:.2f} vs {paper_f1['PERSPECTIVE']:.2f}",
              f"{f1['GPT-3-FEW']:.3f} vs {f1['PERSPECTIVE']:.3f}", verdict=fact(f1["GPT-3-FEW"] > f1["PERSPECTIVE"]),
              note="recorded predictions of all 250 comments (exact); judged as the paper states it, but answering "
                   f"toxic to every comment scores F1 {floor:.3f}: "
                   + (f"{' and '.join(beaten)} beat{'s' if len(beaten) == 1 else ''} it" if beaten
                      else "neither system beats that constant"), kind="recorded predictions",
              rule="beats_in_f1", subject="system:GPT-3-FEW"),
        claim("Perspective rates False Positive comments highest of all categories",
              paper5.loc["False Positive", "perspective"], fp.loc["False Positive", "perspective"],
              verdict=fact(fp["perspective"].idxmax() == "False Positive"),
              note="mean Perspective toxicity per category (recorded, exact)", kind="recorded predictions",
              rule="false_positive_highest", subject="system:PERSPECTIVE"),
        claim("Perspective: Sexual Harassment 21.9% vs humans 80%", PAPER["sexual_harassment"].value,
              f"{fp.loc['Sexual Harassment', 'perspective']:.3f} vs {fp.loc['Sexual Harassment', 'human']:.3f}",
              verdict=fact(within(paper5.loc["Sexual Harassment", "perspective"],
                                  fp.loc["Sexual Harassment", "perspective"], RULES["sexual_harassment"].cutoff)),
              note="recorded scores and labels (exact)", kind="recorded predictions", rule="sexual_harassment",
              subject="system:PERSPECTIVE"),
        claim("Perspective flags every comment containing a swear word",
              PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_toxic_given_swear"],
              **_share(swear_ci), **RULES["flags_every_swear_comment"].test(),
              note=f"{int(persp['n_both'])} of {int(persp['n_contains'])} comments with an LDNOOBW swear word flagged "
                   f"(the paper counts {PAPER['swear_comments'].value}); holds = above 0.8 (it relies on swear "
                   f"words); exact interval over those comments{_flagged_without(persp)}",
              kind="recorded predictions", rule="flags_every_swear_comment", subject="system:PERSPECTIVE"),
        claim("p(swear word | Perspective flags toxic)",
              PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_swear_given_toxic"],
              **_share(given_ci),
              **RULES["swear_given_flagged"].test(PAPER_TABLE6.set_index("system").loc["PERSPECTIVE",
                                                                                       "p_swear_given_toxic"]),
              note=f"{int(persp['n_both'])} of {int(persp['n_flagged'])} flagged comments; holds = within 0.05 of the "
                   "paper; LDNOOBW detects fewer swear words than the paper's unpublished method (see Table 6)",
                   kind="recorded predictions", rule="swear_given_flagged", subject="system:PERSPECTIVE"),
    ]
    rows += [prf_claim(table7, PAPER_TABLE7, s, "Table 7 (TweetEval)",
                       "failed calls and unparsed replies left out; holds = within 0.01", rule="table7_prf")
             for s in PAPER_TABLE7["system"]]
    return rows + _local_claims(classifiers, table6_local, table7_local, n_comments, n_tweets, scorer_threshold,
                                comments, systems)


def floor_f1(table: pd.DataFrame, name: str) -> float:
    """The F1 of the best trivial baseline (``baselines.F1_FLOOR``) in ``table`` (one row per system, with the rows
    of ``toxlib.metrics.baselines.with_baselines``); ValueError naming ``name`` and the fix when it has none."""
    f1 = table.set_index("system")["f1"]
    if F1_FLOOR not in f1.index:
        raise ValueError(f"{name} has no row {F1_FLOOR!r}: add the trivial baselines with "
                         "toxlib.metrics.baselines.with_baselines(table, labels) before judging its claims")
    return float(f1[F1_FLOOR])


def _flagged_without(row) -> str:
    """"; k of m comments without a swear word flagged" for a Table 6 row with n and n_flagged, else ""."""
    if "n" not in row.index or "n_flagged" not in row.index:
        return ""
    without = int(row["n"]) - int(row["n_contains"])
    return (f"; {int(row['n_flagged']) - int(row['n_both'])} of {without} comments without a swear word flagged"
            if without > 0 else "")


def _beats_floor_paired(comments: pd.DataFrame, system: str):
    """95% interval of F1(system) - F1(always toxic), paired over ``comments`` (column ``system`` and human_label);
    None when fewer than two comments have a prediction."""
    return f1_difference(comments.assign(**{F1_FLOOR: 1.0}), system, [F1_FLOOR])


def _with_floor(row: dict, system: str, floor: float, comments: pd.DataFrame | None, column: str | None,
                f1: float) -> dict:
    """claim() arguments ``row`` checked against the F1 floor: a "holds" becomes "not informative" (``floored``)
    unless ``system`` beats "always toxic" (F1 ``floor``): paired over ``comments``' ``column`` when given, else
    by its point F1 ``f1``. The note says what the floor was."""
    if row.get("verdict", "holds") == "not judged":
        return row
    if comments is not None and column is not None:
        ci = _beats_floor_paired(comments, column)
        beats = ci is not None and ci.verdict(0.0, "above") == "holds"
        detail = (f"F1 minus the constant's {ci.value:+.3f} [{ci.low:.3f}, {ci.high:.3f}], paired"
                  if ci is not None else "nothing to compare")
    else:
        beats, detail = f1 > floor, f"F1 {f1:.3f}"
    row = dict(row)
    verdict = row.get("verdict")
    if verdict is None:  # the verdict claim() would read from the interval
        verdict = (row["interval"].verdict(row["threshold"], row.get("direction", "above"))
                   if "interval" in row else "holds")
    row["verdict"] = floored(verdict, beats)
    floor_note = (f"answering toxic to every comment scores F1 {floor:.3f}; {system}: {detail}")
    if row["verdict"] == "not informative":
        floor_note = f"not informative: {floor_note}, not above that constant"
    row["note"] = f"{row['note']}; {floor_note}"
    return row


#: what a claim's note says when a system it rests on answers as a constant would (``classifier_table``'s
#: ``degenerate``); the report card marks such verdicts (``toxlib.reportcard.degenerate``)
DEGENERATE_MARK = "rests on degenerate readings"


def degenerate_note(classifiers: pd.DataFrame, systems: list[str]) -> str:
    """"; rests on degenerate readings: <system> (<share> one answer), ..." for those of ``systems`` that
    ``classifiers`` marks degenerate, or "" when none is (or the table has no such column)."""
    if "degenerate" not in classifiers.columns:
        return ""
    rows = classifiers.set_index("system")
    flat = [s for s in systems if s in rows.index and str(rows.loc[s, "degenerate"]).lower() == "true"]
    if not flat:
        return ""
    said = ", ".join(f"{s} ({rows.loc[s, 'top_answer_share']:.0%} one answer)" for s in flat)
    return f"; {DEGENERATE_MARK}: {said}"


def _swear_reliance(row) -> tuple[bool | None, str]:
    """(whether a scorer flags comments with a swear word more often than those without, its reading) from a
    Table 6 row (n_both, n_contains, n_flagged, n): the 95% interval of the difference of the two shares (Newcombe)
    lies above 0. None, with the reason, when either group is empty or the row lacks the counts."""
    if "n" not in row.index or "n_flagged" not in row.index:
        return None, "no count of the comments without a swear word to compare with"
    k1, n1 = int(row["n_both"]), int(row["n_contains"])
    k2, n2 = int(row["n_flagged"]) - k1, int(row["n"]) - n1
    if n1 == 0 or n2 == 0:
        return None, "no comments on one side to compare with"
    ci = proportion_difference_interval(k1, n1, k2, n2)
    beats = ci.verdict(0.0, "above") == "holds"
    text = (f"{k2} of {n2} comments without a swear word flagged: difference {ci.value:+.3f} "
            f"[{ci.low:.3f}, {ci.high:.3f}]")
    return beats, text if beats else f"not informative: {text}, not above 0"


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
    no prediction are left out. Columns are those of ``comments``. None when fewer than two comments have a
    prediction from every system (a model whose every reply went unparsed): nothing to compare."""

    rows = comments[["human_label", first, *others]].dropna().astype(float).to_numpy()
    if len(rows) < 2:
        return None

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
    pooled = models_subject(pd.unique(lm_rows["model"]))  # the best local LM is chosen among them all
    persp_f1 = local_f1["PERSPECTIVE"]
    paired = comments is not None and systems is not None
    text = f"{best_lm}: {lm_rows.loc[best_lm, 'f1']:.3f} vs {persp_f1:.3f}"
    ci = f1_difference(comments, systems[best_lm], [systems["PERSPECTIVE"]]) if paired else None
    if paired and ci is None:
        best = dict(our_value=float("nan"), verdict="not judged",
                    note=f"{text}; no comment has both a parsed answer from {best_lm} and Perspective's score")
    elif paired:
        best = dict(our_value=round(ci.value, 3), interval=ci, **RULES["beats_in_f1"].test(),
                    note=f"F1 difference, {text}; {ci.n} comments resampled, paired; Perspective on the same comments")
    else:
        best = dict(our_value=text, verdict=fact(lm_rows.loc[best_lm, "f1"] > persp_f1),
                    note=f"{n_comments} comments; Perspective recomputed on the same comments; point estimates")
    floor = floor_f1(classifiers, "classifiers")
    best = _with_floor(best, best_lm, floor, comments if paired else None, systems[best_lm] if paired else None,
                       float(lm_rows.loc[best_lm, "f1"]))
    best["note"] += degenerate_note(classifiers, [best_lm])
    rows = [claim("A few-shot prompted LM beats Perspective on SASS (F1); here: the best local LM system",
                  f"GPT-3-FEW {paper_f1['GPT-3-FEW']:.2f} vs {paper_f1['PERSPECTIVE']:.2f}", **best, kind="our models",
                  rule="best_lm_beats_perspective", subject=pooled)]
    if set(lm_rows["setting"]) >= {"zero", "one", "few"} and "next-token" in set(lm_rows["reading"]):
        paper = f"{paper_f1['GPT-3-FEW']:.2f} vs {paper_f1['GPT-3-ZERO']:.2f} / {paper_f1['GPT-3-ONE']:.2f}"
        for m in pd.unique(lm_rows["model"]):
            names = [f"{m} {s.upper()} (next-token)" for s in ("few", "zero", "one")]
            f = [lm_rows.loc[n, "f1"] for n in names]
            text = f"{f[0]:.2f} vs {f[1]:.2f} / {f[2]:.2f}"
            ci = f1_difference(comments, systems[names[0]], [systems[n] for n in names[1:]]) if paired else None
            if paired and ci is None:
                few = dict(our_value=float("nan"), verdict="not judged",
                           note=f"{text}; no comment has a parsed answer in all three settings")
            elif paired:
                few = dict(our_value=round(ci.value, 3), interval=ci, **RULES["beats_in_f1"].test(),
                           note=f"F1(few) - max F1(zero, one): {text}; {ci.n} comments resampled, paired")
            else:
                few = dict(our_value=text, verdict=fact(f[0] > max(f[1], f[2])), note="few vs zero / one")
            few = _with_floor(few, names[0], floor, comments if paired else None,
                              systems[names[0]] if paired else None, float(f[0]))
            few["note"] += degenerate_note(classifiers, names)
            rows.append(claim(f"Few-shot prompting beats zero- and one-shot (F1); here: {m}, next-token reading",
                              paper, **few, kind="our models", rule="few_beats_zero_one", subject=model_subject(m)))
    first_list = table6_local["word_list"].iloc[0]
    swear = table6_local[table6_local["word_list"] == first_list].set_index("system")
    for name in classifiers.loc[classifiers["kind"] == "local scorer", "system"]:
        if int(swear.loc[name, "n_contains"]) == 0:
            rows.append(claim(f"Perspective flags every comment with a swear word; here: the {name} scorer",
                              PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_toxic_given_swear"], "no comment",
                              verdict="not judged", note=f"no comment with a swear word ({first_list}) among these",
                              kind="our models", rule="flags_every_swear_comment", subject=f"scorer:{name}"))
            continue
        ci = proportion_interval(int(swear.loc[name, "n_both"]), int(swear.loc[name, "n_contains"]))
        rule = RULES["flags_every_swear_comment"]
        reliance = _swear_reliance(swear.loc[name])
        rows.append(claim(f"Perspective flags every comment with a swear word; here: the {name} scorer",
                          PAPER_TABLE6.set_index("system").loc["PERSPECTIVE", "p_toxic_given_swear"],
                          round(ci.value, 3), interval=ci, **rule.test(),
                          verdict=floored(ci.verdict(rule.cutoff, rule.direction), reliance[0]),
                          note=f"at > {scorer_threshold}, {first_list}; {int(swear.loc[name, 'n_both'])} of "
                               f"{ci.n} comments with a swear word; recorded Perspective "
                               f"{swear.loc['PERSPECTIVE', 'p_toxic_given_swear']:.2f}; holds = it shares the "
                               f"reliance (above 0.8) and flags comments with a swear word more often than those "
                               f"without (a scorer that flags everything would not); exact interval; {reliance[1]}",
                          kind="our models", rule="flags_every_swear_comment", subject=f"scorer:{name}"))
    t7f1 = table7_local.set_index("system")["f1"]
    tweet_lms = [s for s in table7_local["system"] if s in lm_rows.index]
    if tweet_lms:
        lm_system = tweet_lms[0]
        close = _with_floor(dict(verdict=fact(abs(t7f1[lm_system] - t7f1["PERSPECTIVE"]) <= 0.05),
                                 note=f"{n_tweets:,} tweets; holds = within 0.05 of Perspective; point estimates"),
                            lm_system, floor_f1(table7_local, "table7_local"), None, None, float(t7f1[lm_system]))
        close["note"] += degenerate_note(classifiers, [lm_system])
        rows.append(claim("On TweetEval a few-shot LM is close to Perspective (F1); here: the best local LM",
                          f"GPT-3-FEW {paper7_f1['GPT-3-FEW']:.2f} vs {paper7_f1['PERSPECTIVE']:.2f}",
                          f"{lm_system}: {t7f1[lm_system]:.3f} vs {t7f1['PERSPECTIVE']:.3f}", **close,
                          kind="our models", rule="tweeteval_close_to_perspective", subject=pooled))
    return rows
