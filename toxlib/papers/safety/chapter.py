"""The safety_score chapter (``notebooks/safety_score.ipynb``; the safety-score paper's Tables 4, 8, 9, 10, 13 and
Figure 2) computed: ``compute(values, models)`` returns its ``ChapterResult``.

Every ToxiGen and ImplicitHate sentence (or a seeded sample) scored by every model (causal LMs by sentence
perplexity, masked LMs by pseudo-perplexity): the perplexities and their timing, the safety score per demographic
(Table 8, its p-values and Figure 2), log-perplexities (Table 9), ImplicitHate (Table 10), the models' averages beside
their architecture and the paper's correlations, bf16 against float32, the claims and the numbers the exercises
quote. ``values``: every parameter of ``toxlib/chapters/safety_score.py``, checked; ``models``: a
``toxlib.models.source.Models``.
"""

from __future__ import annotations

import pandas as pd

from toxlib.data import load_implicit_hate, load_toxigen
from toxlib.models import describe_models
from toxlib.models.source import Models
from toxlib.papers.safety import printed
from toxlib.papers.safety.captions import CAPTIONS
from toxlib.papers.safety.models import precision_fidelity, score_models, scoring_times
from toxlib.papers.safety.paper_claims import claims
from toxlib.papers.safety.printed import paper_correlations
from toxlib.papers.safety.prose import exercise_prose
from toxlib.papers.safety.scores import (
    dataset_scores,
    group_scores,
    log_perplexity_summary,
    model_averages,
    pvalue_table,
    sample_sentences,
    wide,
    with_paper_rows,
)
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult

ARCHITECTURE = ["model", "layers", "heads", "hidden_size", "params_m", "start_of_sequence"]
#: the averages a correlation across models is computed between (with three models or more)
CORRELATED = ["toxigen_average", "implicit_hate", "layers", "heads", "hidden_size", "params_m"]
FIDELITY = ["model", "sentences", "spearman_perplexity"]


def correlation_note(ours: pd.DataFrame) -> str:
    """The Pearson r of the ToxiGen average with the other averages and the architecture, across models; "" with two
    models or fewer (the chapter's text says why: with two it is ±1 by construction)."""
    if len(ours) < 3:
        return ""
    r = ours[CORRELATED].corr().loc["toxigen_average"]
    return f"Pearson r of the ToxiGen average with: {r.drop('toxigen_average').round(3).to_dict()}"


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("safety_score", v)
    caption = CAPTIONS.bind(**v)
    dtype = v["dtype"]
    toxigen, implicit = sample_sentences(load_toxigen(), load_implicit_hate(), v["max_sentences"],
                                         v["max_implicit_sentences"], v["seed"])
    runs = [(name, "causal") for name in v["models"]] + [(name, "masked") for name in v["masked_models"]]
    out.add_text("sizes", f"ToxiGen: {len(toxigen):,} sentences ({toxigen['harmful'].mean():.1%} harmful); "
                          f"ImplicitHate: {len(implicit):,} ({implicit['harmful'].mean():.1%} harmful); models: "
                          f"{len(runs)}, {dtype}")
    scored, lms, timing = score_models(runs, {"toxigen": toxigen, "implicit_hate": implicit}, dtype, loader=models)
    out.add_table("perplexities", scored.drop(columns=["target_groups"]), compress=True, shown=False)
    timing = scoring_times(lms, timing, v["measure"])  # the committed runs' seconds; yours with measure
    out.add_table("timing", timing, shown=False)
    arch = describe_models(lms)[ARCHITECTURE]
    out.add_table("timing_shown", timing.merge(arch, on="model"), caption("timing"), digits=1, file=False)

    tg = scored[scored["dataset"] == "toxigen"]
    groups = out.add_table("table8_long", group_scores(tg), shown=False)
    out.add_table("table8", with_paper_rows(wide(groups), printed.PAPER_TABLE8),
                  caption("table8", n_toxigen=len(toxigen)), turn="demographic")
    out.add_table("table8_pvalues", pvalue_table(groups), caption("table8_pvalues"), digits=4)
    out.add_figure("figure2", lambda: plots.box_with_points(
        printed.paper_table8_long(), groups, "demographic", "safety_score", "model",
        caption("fig_figure2", n_toxigen_scored=tg["id"].nunique()), "safety score (1 = ideal)", line=0.5))
    out.add_table("table9", with_paper_rows(log_perplexity_summary(tg), printed.PAPER_TABLE9), caption("table9"))
    table10 = dataset_scores(scored[scored["dataset"] == "implicit_hate"])
    out.add_table("table10", with_paper_rows(table10, printed.PAPER_TABLE10),
                  caption("table10", n_implicit=len(implicit)), digits=4)
    ours = out.add_table("model_averages", model_averages(groups, table10, arch.drop(columns="start_of_sequence")),
                         caption("model_averages"))
    out.add_text("correlations", correlation_note(ours))
    paper_r = out.add_table("paper_correlations", paper_correlations(), caption("paper_correlations"))

    other = "bfloat16" if dtype == "float32" else dtype  # the precision compared with float32
    if v["fidelity_sentences"]:
        sample = toxigen.sample(min(v["fidelity_sentences"], len(toxigen)), random_state=v["seed"])
        out.add_table("fidelity", pd.DataFrame([precision_fidelity(name, kind, sample, other, loader=models)
                                                for name, kind in runs],
                                               columns=[*FIDELITY, f"safety_{other}", "safety_float32"]),
                      caption("fidelity", other_dtype=other), digits=4)
    else:
        out.add_text("fidelity", f"{other} against float32: skipped (fidelity_sentences = 0).")
    out.add_claims(claims(tg, paper_r, dtype), caption("claims"))
    out.add_prose(exercise_prose(scored, groups, ours))
    return out
