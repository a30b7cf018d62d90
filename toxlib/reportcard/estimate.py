"""How long a report will take on this machine, per chapter, before anything runs; and afterwards, how far off that
was.

Rates are measured, not assumed: ``measure_rates(lm)`` times the model itself on this machine (a small batch of
sampled generation and of sentence NLLs, with every cache off) and the scorer on a few texts. ``estimate_seconds``
charges a chapter's work (``toxlib.reportcard.work``) at those rates, with a Self-Debiasing token costing its seven
rows, a PPLM token its gradient steps (``PPLM_COST``) and a training token a forward and a backward pass, and adds the
chapter's fixed cost (``overhead_seconds``: the time its published run took when every row came from the sample
record: kernel start, data, bootstraps). Small calibration batches run below the chapters' batch sizes, so the
estimate leans long; the share of a chapter's work whose rows the sample record holds is not charged
(``toxlib.reportcard.held``); rows of the user's cache are charged, and cost nothing when it runs.
When the model cannot be loaded here (too large), ``flops_rates`` gives rates from its parameter count and this
machine's measured matmul rate at the efficiency the benchmarks measured for the bundled models
(``EFFICIENCY``). When the sample record holds every row a report asks for, nothing is timed (``untimed_rates``:
NaN rates, which charge nothing because no work is left to charge).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
import torch

from toxlib.benchmarks.matmul_rate import best_matmul_gflops, flops_per_token
from toxlib.data import load_rtp
from toxlib.generate import DecodingConfig, generate
from toxlib.models.perplexity import nll_rows
from toxlib.reportcard.work import ChapterWork
from toxlib.scorers import get_scorer

#: a PPLM token's cost in plain tokens: three gradient steps (a forward and a backward pass each) and the step
PPLM_COST = 10.0
#: rows a Self-Debiasing step runs per token: the prompt and its six prefixed copies
SD_ROWS = 7
#: share of the matmul rate the engine reaches (generation, reading), where the model cannot be timed here
EFFICIENCY = {"gen": 0.5, "read": 0.7}
CALIBRATION_PROMPTS = ("The weather today is", "My favourite thing about the city", "He told me that",
                       "In the morning we", "The report said", "Nobody expected the", "She opened the door and",
                       "After the meeting", "The best way to", "I can't believe", "They decided to",
                       "When I was young", "The museum", "Our team", "It is important to", "The last time")


@dataclass
class Rates:
    """Measured rates of one model on one device: tokens/s generated (``gen``) and read (``read``), texts/s scored
    (``texts``); ``how`` says whether they were timed or derived from the parameter count."""

    device: str
    gen: float
    read: float
    texts: float
    how: str


def _timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


#: each rate is the median of this many timed runs (one run is at the mercy of whatever else the machine does)
REPEATS = 3


def _median_rate(run, units) -> float:
    """The median over ``REPEATS`` timed calls of ``run`` of units done per second (``units``: a call's result ->
    the units it did)."""
    rates = []
    for _ in range(REPEATS):
        out = []
        seconds = _timed(lambda: out.append(run()))
        rates.append(units(out[0]) / seconds)
    return statistics.median(rates)


def busy_note() -> str:
    """"; the machine was busy ..." when the 1-minute load average is above the CPUs this process may use (the
    rates just timed are then low and the estimate long), else ""."""
    try:
        load, cores = os.getloadavg()[0], len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no load average on this platform
        return ""
    return (f"; the machine was busy while timing (load {load:.1f} on {cores} CPUs): the rates are low and the "
            "estimate long" if load > cores else "")


def scorer_rate(scorer: str = "distilled", n: int = 256) -> float:
    """Texts/s of ``scorer`` on ``n`` RealToxicityPrompts continuations (the kind of text and the spread of lengths
    the chapters score; the distilled scorer batches texts of one length together), cache off, after one untimed
    call that loads its weights; the median of ``REPEATS`` runs."""
    texts = [t for t in load_rtp("sample")["continuation_text"].tolist() if isinstance(t, str) and t.strip()][:n]
    get_scorer(scorer).score(texts[:4], cache=False, progress=False)
    return _median_rate(lambda: get_scorer(scorer).score(texts, cache=False, progress=False), len)


def measure_rates(lm, scorer: str = "distilled", samples: int = 2, tokens: int = 12) -> Rates:
    """Time ``lm`` on this machine: 16 prompts x ``samples`` sampled continuations of ``tokens`` tokens and the
    sentence NLLs of 64 sentences, every cache off, after one untimed warm-up of each; each rate the median of
    ``REPEATS`` runs, and ``how`` says when the machine was busy (``busy_note``)."""
    config = DecodingConfig(mode="sample", num_samples=samples, max_new_tokens=tokens, seed=1)
    prompts = list(CALIBRATION_PROMPTS)
    generate(lm, prompts[:2], config.with_(num_samples=1, max_new_tokens=2), cache=False, progress=False)
    gen = _median_rate(lambda: generate(lm, prompts, config, cache=False, progress=False),
                       lambda out: float(out["n_new_tokens"].sum()))
    sentences = [f"{p} a sentence of a dozen or so words about everyday things, number {i}."
                 for i, p in enumerate(prompts * 4)]
    method = "masked" if getattr(lm, "kind", "causal") == "masked" else "causal"
    nll_rows(lm, sentences[:2], method)
    read = _median_rate(lambda: nll_rows(lm, sentences, method), lambda rows: sum(n for _, n, _ in rows))
    return Rates(str(lm.device), gen, read, scorer_rate(scorer),
                 f"timed on this machine, median of {REPEATS} runs{busy_note()}")


def untimed_rates(device: str) -> Rates:
    """Rates for a report with no work left to charge (the sample record holds every row it asks for): NaN, not
    timed, with the reason in ``how``."""
    nan = float("nan")
    return Rates(device, nan, nan, nan, "not timed: the sample record holds every row this report asks for")


def flops_rates(arch: dict, device: str = "cpu", scorer: str = "distilled") -> Rates:
    """Rates from the parameter count (``benchmarks.matmul_rate.flops_per_token``) and this device's measured float32
    matmul rate at ``EFFICIENCY``, for a model that cannot be loaded here."""
    size = 4096 if torch.device(device).type == "cuda" else 1024
    gflops = best_matmul_gflops(torch.float32, size, size, size, repeats=3, device=device)
    per_token = flops_per_token(arch)
    return Rates(device, EFFICIENCY["gen"] * gflops * 1e9 / per_token, EFFICIENCY["read"] * gflops * 1e9 / per_token,
                 scorer_rate(scorer), f"from {arch['params'] / 1e6:,.0f}M parameters and {gflops:,.0f} GFLOP/s")


def overhead_seconds(notebook: str | Path) -> float:
    """The wall time of the notebook's published run (its run record), which read every row from the sample
    record: what a chapter costs besides computing rows. 0 when it has no run record."""
    record = nbformat.read(str(notebook), as_version=4).metadata.get("toxlib", {}).get("last_run") or {}
    return float(record.get("wall_s", 0.0))


def estimate_seconds(work: ChapterWork, rates: Rates, overhead: float = 0.0) -> float:
    """Seconds ``work`` takes at ``rates`` (see the module docstring), plus ``overhead``; work that is nothing costs
    nothing, even at rates that were not timed (``untimed_rates``)."""
    gen = work.gen_tokens + SD_ROWS * work.sd_tokens + PPLM_COST * work.pplm_tokens
    read = work.read_tokens + 3 * work.train_tokens
    return overhead + sum(units / rate for units, rate in ((gen, rates.gen), (read, rates.read),
                                                          (work.scored_texts, rates.texts)) if units)


def as_dict(rates: Rates) -> dict:
    return asdict(rates)
