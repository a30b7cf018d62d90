"""``python -m toxlib bench score``: texts per second of each scorer on RealToxicityPrompts texts, cache off.

Texts: prompts and continuations of the RTP sample, drawn with a fixed seed (mean about 17 MiniLM tokens). Each
scorer is loaded first and warmed up on 64 other texts, so the figure is steady-state scoring (tokenization,
batching and the model; not loading). The last line printed is one JSON object.
"""

from __future__ import annotations

import time

import pandas as pd
import torch

from toxlib.benchmarks.chapter_timings import timing_table
from toxlib.benchmarks.timing import cached_measurement
from toxlib.data.rtp_prompts import load_rtp
from toxlib.scorers import get_scorer
from toxlib.store.keys import stable_hash

#: The scorers that run offline, in the order the benchmark reports them.
OFFLINE_SCORERS = ("distilled", "distilled-fp32", "distilled-bf16", "bilstm", "profanity-svm")
#: Benchmark names of the distilled scorer forced to one precision (the default, "distilled", picks its own).
DTYPE_VARIANTS = {"distilled-fp32": "float32", "distilled-bf16": "bfloat16"}


def bench_texts(n: int, seed: int = 2020) -> list[str]:
    """n RTP texts (prompts and continuations of the sample subset), drawn with a fixed seed."""

    sample = load_rtp("sample")
    texts = sample["prompt_text"].tolist() + sample["continuation_text"].tolist()
    return [texts[i] for i in torch.randperm(len(texts), generator=torch.Generator().manual_seed(seed))[:n].tolist()]


def _scorer(name: str):
    # "distilled-fp32" / "distilled-bf16": the default scorer forced to one precision, to show what each buys
    return get_scorer("distilled", dtype=DTYPE_VARIANTS[name]) if name in DTYPE_VARIANTS else get_scorer(name)


def _cached(name: str, scorer, texts: list[str], warmup: list[str]) -> dict:
    """``_timed`` measured once per scorer version, texts and machine and then read back
    (``timing.cached_measurement``; the row gains ``measured``, when it was taken), so a warm re-run of the
    scorers chapter re-times nothing."""
    key = {"scorer": name, "version": scorer.version, "texts": stable_hash([*warmup, "|", *texts])}
    return cached_measurement("scorer-throughput", key, lambda: _timed(name, scorer, texts, warmup))


def _timed(name: str, scorer, texts: list[str], warmup: list[str]) -> dict:
    scorer.score(warmup, cache=False, progress=False)
    start = time.perf_counter()
    scorer.score(texts, cache=False, progress=False)
    seconds = time.perf_counter() - start
    return {"scorer": name, "version": scorer.version, "texts": len(texts), "seconds": round(seconds, 2),
            "texts_per_s": round(len(texts) / seconds, 1), "threads": torch.get_num_threads()}


def throughput_rows(names, texts: list[str], warmup: list[str], cached: bool = False, log=lambda line: None
                    ) -> list[dict]:
    """One ``throughput`` row per scorer name, in order. A name whose scorer has the version of one already timed
    (on any CPU the default distilled scorer is its float32 variant; bf16 is its default only on a GPU that has it)
    is not timed again: its row
    copies the first one's figures and names it in ``same_as``. cached=True reads a measurement taken before on this
    machine (``_cached``; the scorers chapter); log gets one line per scorer."""
    rows, first = [], {}
    for name in names:
        scorer = _scorer(name)
        if scorer.version in first:
            row = {**first[scorer.version], "scorer": name, "same_as": first[scorer.version]["scorer"]}
            log(f"{name:16s} the same scorer as {row['same_as']} here ({row['version']}): not timed again")
        else:
            row = first[scorer.version] = (_cached if cached else _timed)(name, scorer, texts, warmup)
            log(f"{name:16s} {row['texts_per_s']:>9,.1f} texts/s  ({row['texts']} texts in {row['seconds']} s, "
                f"{row['threads']} threads, {row['version']})")
        rows.append(row)
    return rows


THROUGHPUT_COLUMNS = ["scorer", "version", "texts", "seconds", "texts_per_s", "threads", "measured", "same_as"]


def throughput_table(names, texts: list[str], warmup: list[str], measure: bool = False) -> pd.DataFrame:
    """The scorers chapter's throughput table: the committed benchmark runs' ``throughput_rows`` for the same
    scorers (names and versions) and texts (``chapter_timings.timing_table``), and with ``measure`` this machine's
    (read back from the timing cache when taken before). Columns: ``THROUGHPUT_COLUMNS``, machine, date."""
    values = {"scorers": {name: _scorer(name).version for name in names}, "texts": stable_hash([*warmup, "|", *texts])}
    return timing_table("scorers/throughput", values, measure,
                        lambda: throughput_rows(names, texts, warmup, cached=True), THROUGHPUT_COLUMNS)


def bench_score(scorers=OFFLINE_SCORERS, quick: bool = False, log=lambda line: None) -> dict:
    """``bench score``: texts/s of each of ``scorers`` on 4,000 RealToxicityPrompts texts (500 with ``quick``), after
    a warm-up on 64 others, cache off. Returns {"texts": n, "results": ``throughput_rows``}; log gets one line per
    scorer."""
    n = 500 if quick else 4000
    texts = bench_texts(n + 64)
    return {"texts": n, "results": throughput_rows(scorers, texts[64:], texts[:64], log=log)}
