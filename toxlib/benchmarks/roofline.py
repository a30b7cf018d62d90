"""The generation chapter's roofline table and figure: how close the book's hot paths (generation, sentence
perplexity, Self-Debiasing) come to the machine's matmul rate (``toxlib.benchmarks.matmul_rate``).

In: the models, the workload sizes and the dtype. Out: ``chapter_roofline``'s DataFrame (model, path, tok_s,
roofline_tok_s, roofline_pct, matmul_gflops, measured, machine, date): the committed benchmark runs' rows, and when
asked this machine's (``measure_roofline``), each measurement timed once per machine and setting and
then read from the artefact cache (``toxlib.benchmarks.timing.cached_measurement``, keyed by the version of the code
path it times); ``roofline_figure``'s bars of roofline_pct. The benchmarks behind it: ``timing.timed_generation``,
``perplexity_speed.bench_perplexity``, ``self_debias_speed.bench_self_debias``.
"""

from __future__ import annotations

import pandas as pd

from toxlib.benchmarks.chapter_timings import timing_table
from toxlib.benchmarks.matmul_rate import percent
from toxlib.benchmarks.perplexity_speed import bench_perplexity
from toxlib.benchmarks.prompts import bench_prompts
from toxlib.benchmarks.self_debias_speed import bench_self_debias
from toxlib.benchmarks.timing import cached_measurement, timed_generation
from toxlib.generate import RTP_SAMPLING
from toxlib.generate.api import default_batch_rows
from toxlib.generate.config import ENGINE_TIMING_REVISION
from toxlib.models import load
from toxlib.models.perplexity import METHOD_VERSIONS
from toxlib.publish import plots
from toxlib.steer.self_debias import PREFIX_LAYOUT

ROOFLINE_COLUMNS = ["model", "path", "tok_s", "roofline_tok_s", "roofline_pct", "matmul_gflops", "measured"]


def chapter_roofline(weights: dict[str, str], speed_prompts: int = 2, sentences: int = 300, debias_prompts: int = 20,
                     self_debias_model: str = "smollm2-135m", dtype: str = "float32", measure: bool = False
                     ) -> pd.DataFrame:
    """The generation chapter's roofline table, as the committed benchmark runs timed it at the same models (names
    and ``weights`` ids, {name: weights_id}), sizes and code paths (``chapter_timings.timing_table``); with
    ``measure``, this machine's too (:func:`measure_roofline`). Columns: ``ROOFLINE_COLUMNS``, machine, date."""
    values = {"models": weights, "speed_prompts": speed_prompts, "sentences": sentences,
              "debias_prompts": debias_prompts, "self_debias_model": self_debias_model, "dtype": dtype,
              "engine": ENGINE_TIMING_REVISION, "nll": METHOD_VERSIONS["causal"], "layout": PREFIX_LAYOUT}
    return timing_table("generation/roofline", values, measure, lambda: measure_roofline(
        list(weights), speed_prompts, sentences, debias_prompts, self_debias_model, dtype), ROOFLINE_COLUMNS)


def measure_roofline(models: list[str], speed_prompts: int = 2, sentences: int = 300, debias_prompts: int = 20,
                     self_debias_model: str = "smollm2-135m", dtype: str = "float32") -> list[dict]:
    """This machine's roofline rows, each measurement cached (``cached_measurement``, keyed by the
    version of the code path it times: the engine's timing revision, and the NLL method for perplexity): per model,
    in ``dtype`` (the chapters' float32 by default), generation (RealToxicityPrompts' sampling on ``speed_prompts``
    prompts), sentence perplexity
    (``sentences`` ToxiGen sentences) and, for ``self_debias_model``, Self-Debiasing's row-tokens
    (``debias_prompts`` adversarial prompts, greedy). Keys: ``ROOFLINE_COLUMNS``."""

    rows, label = [], {"float32": "fp32", "bfloat16": "bf16"}.get(dtype, dtype)
    for name in models:
        def generation(name=name):
            lm = load(name, dtype=dtype)
            return timed_generation(lm, bench_prompts(speed_prompts), RTP_SAMPLING, default_batch_rows(lm))

        measured = {
            f"generation ({label}, 25 samples)": cached_measurement(
                "generation", {"model": name, "prompts": speed_prompts, "engine": ENGINE_TIMING_REVISION,
                               "dtype": dtype}, generation),
            f"perplexity ({label})": cached_measurement(
                "perplexity", {"model": name, "quick": sentences, "nll": METHOD_VERSIONS["causal"],
                               "engine": ENGINE_TIMING_REVISION, "dtype": dtype},
                lambda name=name: _bench_quietly(bench_perplexity, name, sentences=sentences, dtype=dtype,
                                               alternatives=False)),
        }
        if name == self_debias_model:
            measured[f"Self-Debiasing ({label}, row-tokens)"] = cached_measurement(
                "self-debias", {"model": name, "prompts": debias_prompts, "engine": ENGINE_TIMING_REVISION,
                                "layout": PREFIX_LAYOUT, "dtype": dtype},
                lambda name=name: _bench_quietly(bench_self_debias, name, prompts=debias_prompts, dtype=dtype,
                                               alternatives=False))
        for path, m in measured.items():
            tok_s = m["row_tok_s"] if "row_tok_s" in m else m["tok_s"]
            rows.append({"model": name, "path": path, "tok_s": tok_s, "roofline_tok_s": m["roofline_tok_s"],
                         "roofline_pct": percent(tok_s, m["roofline_tok_s"]),
                         "matmul_gflops": m["matmul_gflops"], "measured": m["measured"]})
    return rows


def roofline_figure(table: pd.DataFrame):
    """Bars of ``chapter_roofline``'s roofline_pct, one per (model, path), with the 100% line."""

    fig = plots.grouped_bars(table.assign(group=table["model"] + " / " + table["path"]), "group",
                             {"roofline_pct": "tokens/s as % of the matmul roofline"},
                             "Share of the matmul roofline", "tokens/s as % of the roofline (dashed: 100%)")
    fig.axes[0].axvline(100, color="black", linestyle="--", linewidth=1)
    if fig.axes[0].get_legend() is not None:
        fig.axes[0].get_legend().remove()
    return fig


def _bench_quietly(bench, name: str, **sizes) -> dict:
    return bench(name, log=lambda *_: None, **sizes)
