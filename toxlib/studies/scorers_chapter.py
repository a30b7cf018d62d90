"""The scorers chapter (``notebooks/scorers.ipynb``) computed: ``compute(values, models)`` returns its
``ChapterResult``.

The distilled scorer's training data and weights (retrained with the shipped recipe when ``retrain``); every
scorer's agreement with Perspective's recorded scores on held-out RealToxicityPrompts texts (the wide table and
calibration bins with their figure); the distilled scorer before and after calibration; out-of-domain sentences;
the scorers against Perspective and humans on SASS (agreement, precision/recall/F1, per category); throughput (the
committed benchmark runs' unless ``measure``); every agreement row; the claims and the numbers the exercises quote.
``values``: every parameter of ``toxlib/chapters/scorers.py``, checked; ``models``: unused (no language model runs).
"""

from __future__ import annotations

import pandas as pd

from toxlib import data
from toxlib.benchmarks import chapter_timings
from toxlib.benchmarks.scorer_throughput import bench_texts, throughput_table
from toxlib.metrics import calibration_bins
from toxlib.metrics.baselines import prevalence_text, with_baselines
from toxlib.models.source import Models
from toxlib.papers.sass.tables import relabel, table3, table5, with_scorer_columns
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult
from toxlib.scorers import get_scorer, headline_column, score_all
from toxlib.scorers.distilled import TARGETS, DistilledScorer
from toxlib.scorers.training import TrainingConfig, train_and_save, training_summary, training_texts
from toxlib.store import paths
from toxlib.studies import scorer_comparison, scorer_fidelity
from toxlib.studies.captions.scorers import CAPTIONS

SASS_SHOWN = ["scorer", "attribute", "reference", "n", "n_positive", "pearson", "spearman", "auc"]
PRF_SHOWN = ["system", "precision", "recall", "f1", "f1_low", "f1_high", "n", "n_pred_pos"]
#: texts the throughput table warms each scorer up on, before the timed ones
WARM_UP_TEXTS = 64


def data_split(texts: pd.DataFrame) -> pd.DataFrame:
    """Texts per split and part of the training data, and the share of them Perspective scored >= 0.5."""
    return (texts.groupby(["split", "part"])
            .agg(texts=("text", "size"), toxic=("toxicity", lambda s: (s >= 0.5).mean())).reset_index())


def weights_rows(shipped: DistilledScorer, v: dict, held: pd.DataFrame) -> tuple[pd.DataFrame, float | None]:
    """(the training table: the shipped weights' summary, and with ``retrain`` a retraining's here, the largest
    difference between the two scorers over ``held``'s texts, None without ``retrain``)."""
    rows = [{"weights": "shipped", **training_summary(shipped.metadata)}]
    if not v["retrain"]:
        return pd.DataFrame(rows), None
    config = TrainingConfig(epochs=v["epochs"], seed=v["seed"], limit=v["train_limit"])
    folder = (paths.cache_dir() / "scorers" /
              f"distilled-retrained-e{v['epochs']}-s{v['seed']}-n{v['train_limit'] or 'all'}")
    rows.append({"weights": "retrained here", **training_summary(train_and_save(folder, config, threads=1))})
    difference = scorer_comparison.max_difference(shipped, DistilledScorer(weights=folder, dtype="float32"),
                                                  held["text"].tolist(), TARGETS)
    return pd.DataFrame(rows), difference


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("scorers", v)
    caption = CAPTIONS.bind(**v)
    scorers, seed = v["scorers"], v["seed"]
    texts = training_texts(seed)
    held = texts[texts["split"] == "held_out"]
    if v["held_out_limit"]:
        held = held.sample(v["held_out_limit"], random_state=seed)
    out.add_table("data_split", data_split(texts), caption("data_split", n_records=texts["record_id"].nunique()))
    shipped = DistilledScorer(dtype="float32")
    training, max_difference = weights_rows(shipped, v, held)
    if max_difference is not None:
        out.add_text("retrained", f"largest |shipped - retrained| score over {len(held):,} held-out texts, 8 "
                                  f"attributes: {max_difference:.2e}")
    else:
        out.skip("retrained")
    out.add_table("training", training, caption("training"))

    local = {name: get_scorer(name) for name in scorers}
    variant = None
    if "distilled" in local:
        variant, local[variant] = scorer_comparison.other_precision(local["distilled"])
    held_scores = score_all(local, held["text"])
    rtp_agreement = scorer_comparison.agreement_table(held_scores, held.reset_index(drop=True), "rtp_held_out",
                                                      "Perspective (recorded)")
    wide = rtp_agreement.pivot_table(index="attribute", columns="scorer", values=["pearson", "auc"]).round(3)
    wide = wide.reindex([a for a in TARGETS if a in wide.index])
    out.add_table("rtp_agreement", wide.reset_index(), caption("rtp_agreement", n_held=len(held)), file=False)
    calib = pd.concat([calibration_bins(held["toxicity"].to_numpy(), table[headline_column(table)].to_numpy())
                       .assign(scorer=label) for label, table in held_scores.items() if label != variant])
    out.add_table("calibration", calib, shown=False)
    out.add_figure("calibration", lambda: plots.calibration(
        calib, "scorer", caption("fig_calibration", n_held=len(held)),
        "scorer's toxicity (bin mean; profanity-svm: its one score)", "Perspective toxicity (bin mean)"))
    scorer_fidelity.add_fidelity(out, held)
    scorer_fidelity.add_out_of_domain(out)

    pred = relabel(data.load_sass_predictions())
    sass_scores = score_all({k: s for k, s in local.items() if k != variant}, pred["text"])
    recorded = {"Perspective (recorded)": scorer_comparison.recorded_scores(pred["perspective_toxicity"],
                                                                            "perspective", "recorded in SASS")}
    sass_agreement = scorer_comparison.sass_agreement(sass_scores, pred, recorded)
    out.add_table("sass_agreement", sass_agreement[SASS_SHOWN].round(3), caption("sass_agreement"), file=False)
    pred_local, local_systems = with_scorer_columns(pred, sass_scores)
    systems = {"PERSPECTIVE": "perspective_label", **local_systems, "GPT-3-FEW": "gpt3_few"}
    sass_prf = out.add_table("sass_prf", with_baselines(table3(pred_local, systems), pred_local["human_label"]),
                             caption("sass_prf", prevalence=prevalence_text(pred_local["human_label"], "comments")),
                             columns=PRF_SHOWN)
    per_category = out.add_table("sass_categories", table5(pred_local, {
        "human": "human_toxicity", "perspective": "perspective_toxicity",
        **{f"{k}": f"{k}_toxicity" for k in local_systems}}), caption("sass_categories"))

    bench = bench_texts(v["throughput_texts"] + WARM_UP_TEXTS)
    variants = ["distilled-fp32", "distilled-bf16"] if "distilled" in scorers else []  # each precision forced
    speed = throughput_table([*scorers, *variants], bench[WARM_UP_TEXTS:], bench[:WARM_UP_TEXTS], v["measure"])
    chapter_timings.add_timings(out, "throughput", speed, caption("throughput"), "the scorers' throughput")
    agreement_all = out.add_table("agreement", pd.concat([rtp_agreement, sass_agreement], ignore_index=True),
                                  shown=False)
    out.add_text("agreement_rows", f"agreement.csv: {len(agreement_all)} rows (scorer x attribute x dataset x "
                                   "reference)")

    recipe = shipped.metadata["config"]
    shipped_recipe = v["train_limit"] is None and (v["epochs"], seed) == (recipe["epochs"], recipe["seed"])
    out.add_claims(scorer_comparison.claims(rtp_agreement, speed, sass_prf, per_category, v["throughput_texts"],
                                            max_difference, shipped_recipe, held_scores, held), caption("claims"))
    out.add_prose(scorer_comparison.exercise_prose(per_category, agreement_all, calib))
    return out
