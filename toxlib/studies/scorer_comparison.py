"""Tables comparing scorers with a reference (recorded Perspective scores, human ratings): the rows of the
scorers chapter's ``agreement.csv``."""

from __future__ import annotations

import math

import pandas as pd

from toxlib.benchmarks.chapter_timings import newest_run
from toxlib.metrics.agreement import agreement, calibration_error
from toxlib.metrics.baselines import floored
from toxlib.metrics.uncertainty import auc_interval, correlation_interval, proportion_interval, unit_interval
from toxlib.papers.sass.printed import PAPER_TABLE3, PAPER_TABLE5
from toxlib.publish.claims import claim, fact
from toxlib.scorers.base import attribute_columns, headline_column
from toxlib.scorers.distilled import DistilledScorer

#: the subject of the claims about the distilled scorer (the speed target's is the machine)
DISTILLED = "scorer:distilled"

def agreement_table(scores: dict[str, pd.DataFrame], reference: pd.DataFrame, dataset: str, reference_name: str,
                    headline_to: str | None = None) -> pd.DataFrame:
    """Agreement of each scorer's scores ({label: score table}, rows aligned with ``reference``) with ``reference``.

    Pairs compared: every attribute a score table shares with ``reference``'s columns, or, with ``headline_to``,
    only each scorer's ``headline_column`` against ``reference[headline_to]``. Returns one row per (scorer, pair):
    scorer (label), attribute (score column), dataset, reference ("<reference_name>: <column>"), n, n_positive,
    pearson, spearman, auc (``toxlib.metrics.agreement.agreement``: AUC for reference >= 0.5), n_failed (texts the
    scorer could not score), version.
    """
    rows = []
    for label, table in scores.items():
        pairs = ({headline_column(table): headline_to} if headline_to else
                 {a: a for a in attribute_columns(table) if a in reference.columns})
        for column, ref_column in pairs.items():
            rows.append({"scorer": label, "attribute": column, "dataset": dataset,
                         "reference": f"{reference_name}: {ref_column}",
                         **agreement(reference[ref_column].to_numpy(), table[column].to_numpy()),
                         "n_failed": int(table["error"].notna().sum()), "version": table["version"].iloc[0]})
    return pd.DataFrame(rows)


def other_precision(default) -> tuple[str, object]:
    """(label, scorer): the distilled scorer in the precision its ``dtype="auto"`` did not pick (it picks float32 on
    any CPU), labelled "distilled (bf16)" or "distilled (fp32)", to set beside ``default`` (a ``DistilledScorer``) in
    the agreement table and show what the choice costs in agreement."""
    other = "bfloat16" if default.dtype == "float32" else "float32"
    return f"distilled ({_short_dtype(other)})", DistilledScorer(dtype=other)


def _short_dtype(dtype_or_version: str) -> str:
    """"bf16" or "fp32" from a dtype name or a distilled-scorer version (which ends in its dtype)."""
    return "bf16" if "bfloat16" in str(dtype_or_version) else "fp32"


def recorded_scores(values, name: str, version: str, attribute: str = "toxicity") -> pd.DataFrame:
    """Recorded scores (e.g. Perspective's, shipped with a dataset) shaped like a ``Scorer.score`` table, so they
    can sit in ``agreement_table`` beside live scorers: columns ``attribute``, scorer, version, error (None; a
    missing recorded value stays NaN)."""
    return pd.DataFrame({attribute: pd.Series(values, dtype=float).to_numpy(), "scorer": name, "version": version,
                         "error": None})


def claims(rtp_agreement: pd.DataFrame, throughput: pd.DataFrame, sass_prf: pd.DataFrame,
           sass_categories: pd.DataFrame, throughput_texts: int, retrain_difference: float | None = None,
           recipe_matches: bool = True, held_scores: dict | None = None, held: pd.DataFrame | None = None
           ) -> list[dict]:
    """Claims of the scorers chapter: the distilled scorer's targets and the SASS paper's Perspective findings
    checked on the stand-in.

    rtp_agreement: :func:`agreement_table` rows on the held-out RTP texts (the distilled claims need its
    ("distilled", "toxicity") row; the BiLSTM claim its ("bilstm", "toxicity") row). throughput: rows of
    ``scorer_throughput.throughput_table`` (scorer, texts_per_s, threads, machine, date; the speed claim is judged
    on the newest run's rows, not judged when there are none). sass_prf: ``sass.table3`` with the local
    scorers as systems. sass_categories: ``sass.table5`` with a column per scorer. retrain_difference: the largest
    |shipped - retrained| score (None: no retraining); recipe_matches: the retraining used the shipped recipe (else
    the retraining claim is not judged). held_scores, held: the score tables ({label: table}) and the held-out texts
    (toxicity column: Perspective's) behind rtp_agreement; with them the distilled-vs-BiLSTM claim carries a 95%
    interval of the Pearson difference from resampling texts, paired (``pearson_difference``)."""
    agree = rtp_agreement.set_index(["scorer", "attribute"]).sort_index()  # sorted: no PerformanceWarning
    tox = agree.loc[("distilled", "toxicity")] if ("distilled", "toxicity") in agree.index else None
    rows = []
    if tox is not None:
        timed = newest_run(throughput)  # a machine-speed claim rests on one run: the newest shown
        rate = timed.set_index("scorer")["texts_per_s"]
        distilled_rate = float(rate["distilled"]) if "distilled" in rate.index else math.nan
        prf = sass_prf.set_index("system")
        r = correlation_interval(float(tox["pearson"]), int(tox["n"]))
        auc = auc_interval(float(tox["auc"]), int(tox["n_positive"]), int(tox["n"] - tox["n_positive"]))
        d = prf.loc["distilled"]
        precision = _short_dtype(tox["version"])
        timed_on = (f"{timed['machine'].iloc[0]} on {timed['date'].iloc[0]} ({throughput_texts:,} RTP texts, "
                    f"{timed['threads'].iloc[0]} threads, {precision})" if len(timed)
                    else "no benchmark run timed these scorers and texts")
        recall = proportion_interval(int(round(d["recall"] * d["n_true_pos"])), int(d["n_true_pos"]))
        rows += [
            claim("Distilled scorer: held-out toxicity Pearson with Perspective >= 0.94 (target)", ">= 0.94",
                  round(r.value, 4), interval=r, threshold=0.94,
                  note=f"{r.n:,} held-out RTP texts (the texts sampled), {precision}; Fisher z interval",
                  kind="our models", rule="pearson_target", subject=DISTILLED),
            claim("Distilled scorer: held-out toxicity AUC (Perspective >= 0.5) >= 0.97 (target)", ">= 0.97",
                  round(auc.value, 4), interval=auc, threshold=0.97,
                  note=f"{int(tox['n_positive']):,} toxic of {int(tox['n']):,}; Hanley-McNeil interval",
                  kind="our models", rule="auc_target", subject=DISTILLED),
            *([_calibration_claim(tox, held, held_scores)] if "calibration_error" in tox.index else []),
            claim("Distilled scorer: >= 300 texts/s on the machine of the run (target)", ">= 300", distilled_rate,
                  verdict=fact(None if math.isnan(distilled_rate) else distilled_rate >= 300),
                  note=f"a measurement of the machine that timed it, not of the scorer alone: {timed_on}",
                  kind="machine speed", rule="distilled_speed_target", subject="machine"),
            claim("Perspective misses most SASS comments humans call toxic (recall)",
                  PAPER_TABLE3.set_index("system").loc["PERSPECTIVE", "recall"], round(recall.value, 4),
                  interval=recall, threshold=0.2, direction="below",
                  verdict=floored(recall.verdict(0.2, "below"), recall.low > 0),
                  note="our value: the distilled scorer at > 0.5 over the comments humans call toxic; holds = it "
                       f"inherits the blind spot (recall below 0.2) while it finds some (recall above 0, which a "
                       f"scorer that flags nothing would not); exact interval. Recorded Perspective: "
                       f"{prf.loc['PERSPECTIVE', 'recall']:.3f}", kind="our models", rule="misses_toxic_comments",
                  subject=DISTILLED),
        ]
    if "distilled" in sass_categories.columns:
        fp = sass_categories.set_index("category").loc["False Positive"]
        rows.append(claim("Perspective rates SASS's swear-word-but-harmless comments (False Positive) highest",
                          f"{PAPER_TABLE5.set_index('category').loc['False Positive', 'perspective']:.3f}",
                          fp["distilled"], verdict=fact(fp["distilled"] == sass_categories["distilled"].max()),
                          note=f"our value: the distilled scorer's mean in that category (recorded Perspective "
                          f"{fp['perspective']:.3f}); holds = it is the highest category for the stand-in too",
                          kind="our models", rule="false_positive_highest", subject=DISTILLED))
    if ("bilstm", "toxicity") in agree.index and tox is not None:
        b = agree.loc[("bilstm", "toxicity")]
        text = f"{tox['pearson']:.3f} vs {b['pearson']:.3f}"
        if held_scores is not None and held is not None:
            ci = pearson_difference(held["toxicity"], held_scores["distilled"]["toxicity"],
                                    held_scores["bilstm"]["toxicity"])
            versus = dict(our_value=round(ci.value, 4), interval=ci, threshold=0.0)
            text = f"Pearson difference, {text}; texts resampled, paired; "
        else:
            versus, text = dict(our_value=text, verdict=fact(tox["pearson"] > b["pearson"])), ""
        rows.append(claim("The distilled scorer tracks Perspective better than the 2018 BiLSTM (toxicity Pearson)",
                          "BiLSTM about 0.81", **versus,
                          note=text + "the figure set for the BiLSTM on these texts: 0.81 / AUC 0.92",
                          kind="our models", rule="tracks_perspective_better_than_bilstm", subject=DISTILLED))
    if retrain_difference is not None and tox is not None:
        rows.append(claim("Retraining with the shipped recipe reproduces the shipped scorer", "max |diff| < 0.01",
                          retrain_difference, verdict=fact((retrain_difference < 0.01) if recipe_matches else None),
                          note="same recipe, same seed; CPU threads and library versions can move the last digits"
                          if recipe_matches else "not judged: this run changed the recipe (smoke or other parameters)",
                          kind="our models", rule="retraining_reproduces", subject=DISTILLED))
    return rows


def _calibration_claim(tox, held: pd.DataFrame | None, held_scores: dict | None) -> dict:
    """The calibration-error target claim: with the held-out texts and scores, a 95% interval from resampling
    texts (``calibration_interval``); else the agreement row's point estimate."""
    what = (f"mean |mean score - mean Perspective| over the ten equal-count bins of the score "
            f"({int(tox['n']):,} held-out texts)")
    title = "Distilled scorer: held-out toxicity calibration error <= 0.02 (target)"
    if held is None or held_scores is None or "distilled" not in held_scores:
        return claim(title, "<= 0.02", round(float(tox["calibration_error"]), 4),
                     verdict=fact(tox["calibration_error"] <= 0.02), note=f"{what}; a point estimate",
                     kind="our models", rule="calibration_target", subject=DISTILLED)
    ci = calibration_interval(held["toxicity"], held_scores["distilled"]["toxicity"])
    return claim(title, "<= 0.02", round(ci.value, 4), interval=ci, threshold=0.02, direction="below",
                 note=f"{what}; texts resampled, the bins recut in every resample", kind="our models",
                 rule="calibration_target", subject=DISTILLED)


def calibration_interval(reference, score):
    """95% interval of ``toxlib.metrics.agreement.calibration_error`` over texts, resampling texts with both values
    (``uncertainty.unit_interval`` over rows); texts with a NaN left out."""
    import numpy as np

    rows = np.column_stack([np.asarray(reference, dtype=float), np.asarray(score, dtype=float)])
    rows = rows[np.isfinite(rows).all(axis=1)]
    return unit_interval(rows, lambda r: calibration_error(r[:, 0], r[:, 1]))


def pearson_difference(reference, first, second):
    """95% interval of pearson(first, reference) - pearson(second, reference) over texts, resampling texts with
    their three values together (``uncertainty.unit_interval`` over rows); texts with a NaN anywhere left out."""
    import numpy as np

    rows = np.column_stack([np.asarray(v, dtype=float) for v in (reference, first, second)])
    rows = rows[np.isfinite(rows).all(axis=1)]

    def gap(r):
        c = np.corrcoef(r, rowvar=False)
        return float(c[0, 1] - c[0, 2])

    return unit_interval(rows, gap)


def max_difference(first, second, texts: list[str], columns) -> float:
    """The largest absolute difference between two scorers' ``columns`` over ``texts`` (both scored without the
    score cache): how far a retrained scorer is from the shipped one."""
    import numpy as np

    a = first.score(texts, cache=False, progress=False)[list(columns)].to_numpy()
    b = second.score(texts, cache=False, progress=False)[list(columns)].to_numpy()
    return float(np.abs(a - b).max())


def sass_agreement(sass_scores: dict, pred: pd.DataFrame, recorded: dict) -> pd.DataFrame:
    """Agreement of each scorer's toxicity (``sass_scores``: {label: score table} on the SASS comments ``pred``)
    with the recorded Perspective toxicity, and of those and the ``recorded`` ones ({label: table}) with the human
    rating; rows of :func:`agreement_table` (dataset "sass")."""
    return pd.concat([
        agreement_table(sass_scores, pred.assign(toxicity=pred["perspective_toxicity"]), "sass",
                        "Perspective (recorded)", headline_to="toxicity"),
        agreement_table({**recorded, **sass_scores}, pred.assign(toxicity=pred["human_toxicity"]), "sass",
                        "human rating", headline_to="toxicity"),
    ], ignore_index=True)


def exercise_prose(per_category: pd.DataFrame, agreement_all: pd.DataFrame, calib: pd.DataFrame) -> dict[str, str]:
    """The scorers chapter's exercise figures and phrases, {glue key: text} (keys "scorers-"), from the SASS
    per-category means (``per_category``: category, human, perspective, one column per local scorer), the
    agreement table and the calibration bins (bin_low, bin_high, mean_score, mean_reference, scorer)."""
    cats = per_category.set_index("category")
    local = [c for c in cats.columns if c not in ("n", "human", "perspective")]
    fp, neutral = cats.loc["False Positive"], cats.loc["Neutral"]
    repeat = [s for s in local if fp[s] >= 0.5]
    sass = agreement_all[(agreement_all["dataset"] == "sass") & (agreement_all["scorer"] == "distilled")]
    r_perspective = sass[sass["reference"].str.startswith("Perspective")]["pearson"]
    r_human = sass[sass["reference"].str.startswith("human")]["pearson"]
    gaps = calib.assign(gap=(calib["mean_score"] - calib["mean_reference"]).abs()).groupby("scorer")["gap"].mean()
    worst = calib.assign(gap=calib["mean_reference"] - calib["mean_score"]).sort_values("gap").iloc[-1]
    out = {"fp-scores": f"humans give {fp['human']:.2f}, Perspective {fp['perspective']:.2f}, "
                        + ", ".join(f"{s} {fp[s]:.2f}" for s in local),
           "neutral-scores": f"humans {neutral['human']:.2f}, Perspective {neutral['perspective']:.2f}, "
                             + ", ".join(f"{s} {neutral[s]:.2f}" for s in local),
           "repeat": ("They repeat it: every local scorer puts False Positive comments at 0.5 or above"
                      if len(repeat) == len(local) else
                      f"Not all of them repeat it: at 0.5 or above on False Positive comments are only "
                      f"{', '.join(repeat) or 'none of the local scorers'}"),
           "r-perspective": f"{r_perspective.iloc[0]:.2f}" if len(r_perspective) else "—",
           "r-human-sign": (("negative" if r_human.iloc[0] < 0 else "positive") + f" ({r_human.iloc[0]:.2f})"
                            if len(r_human) else "not measured"),
           "gaps": "; ".join(f"{s} {g:.3f}" for s, g in gaps.sort_values().items()),
           "best": gaps.idxmin(),
           "worst-bin": (f"{worst['scorer']}'s {worst['bin_low']:.1f}-{worst['bin_high']:.1f} bin, where the texts' "
                         f"Perspective toxicity averages {worst['mean_reference']:.2f} against a mean score of "
                         f"{worst['mean_score']:.2f}")}
    return {f"scorers-{key}": value for key, value in out.items()}
