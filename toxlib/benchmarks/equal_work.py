"""Ratios at equal work: a benchmark's headline ratio divides two timings of the same prompts (or sentences), the same
samples and the same tokens, and refuses anything else.

Each side of a comparison is a ``Work``: what ran, on how many prompts, how many rows (prompts x samples, or
sentences), how many tokens, in how many seconds. ``compare`` checks that both sides did the same work and gives
the other side's time over toxlib's (``speedup``, above 1 when toxlib is faster) with both sides' figures. Where a
side cannot run the whole workload in reasonable time (the papers' one-call-per-prompt loop), the benchmark times
toxlib on that side's smaller set too and compares those, and the JSON names the set's size (``prompts``); nothing
is scaled. Sampled generation stops at a stop token at different steps in different implementations, so the
timings compared run with stop tokens off on both sides (``stops_off``; transformers with no end-of-sequence id):
every row decodes exactly ``max_new_tokens`` tokens, and the token counts are checked equal.

``SHAPES``: the sizes a benchmark runs at. "record" is the sample record's (100 prompts x 25 samples for
generation, 2,000 ToxiGen sentences, 300 adversarial prompts), with the alternatives on the subsets a 2-core CPU
gets through; "gpu" is a large GPU's (400 prompts, 20,000 sentences), with transformers' batched path on the
whole workload and only the papers' loop on a subset.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Work:
    """One timed side of a comparison: ``what`` ran (toxlib, the papers' loop, transformers' batched path with its
    settings) on ``prompts`` prompts or sentences, ``rows`` rows (prompts x samples; sentences), ``tokens`` tokens
    (new tokens, or scored tokens), in ``seconds``."""

    what: str
    prompts: int
    rows: int
    tokens: int
    seconds: float

    @property
    def tok_s(self) -> float:
        return self.tokens / self.seconds

    def same_work(self, other: "Work") -> bool:
        return (self.prompts, self.rows, self.tokens) == (other.prompts, other.rows, other.tokens)

    def report(self) -> dict:
        return {**asdict(self), "seconds": round(self.seconds, 3), "tok_s": round(self.tok_s, 1)}


class UnequalWork(ValueError):
    """Two sides of a comparison did not do the same work."""


def compare(toxlib: Work, other: Work) -> dict:
    """{"work": {prompts, rows, tokens}, "toxlib": ..., "other": ... (``Work.report``), "speedup": other's seconds
    over toxlib's}; ``UnequalWork`` naming both when the prompts, rows or tokens differ."""
    if not toxlib.same_work(other):
        raise UnequalWork(f"not the same work: {toxlib.what} ran {toxlib.prompts} prompts, {toxlib.rows} rows, "
                          f"{toxlib.tokens} tokens; {other.what} ran {other.prompts}, {other.rows}, {other.tokens}: "
                          "time both on the same prompts, with stop tokens off (every row its max_new_tokens)")
    return {"work": {"prompts": toxlib.prompts, "rows": toxlib.rows, "tokens": toxlib.tokens},
            "toxlib": toxlib.report(), "other": other.report(), "speedup": round(other.seconds / toxlib.seconds, 2)}


@dataclass(frozen=True)
class Shape:
    """A benchmark's sizes: ``prompts`` (generation), ``sentences`` (perplexity), ``debias_prompts``
    (Self-Debiasing) for toxlib's headline figures; ``compare`` of them for transformers' batched path (None: all);
    ``loop`` for the papers' one-call-per-prompt (per-sentence) loop."""

    prompts: int
    compare: int | None
    loop: int
    sentences: int
    sentences_loop: int
    debias_prompts: int
    debias_compare: int | None
    debias_loop: int


SHAPES = {
    "record": Shape(prompts=100, compare=16, loop=16, sentences=2000, sentences_loop=200, debias_prompts=300,
                    debias_compare=57, debias_loop=57),
    "gpu": Shape(prompts=400, compare=None, loop=16, sentences=20000, sentences_loop=200, debias_prompts=300,
                 debias_compare=None, debias_loop=16),
}


def shape(name: str) -> Shape:
    if name not in SHAPES:
        raise ValueError(f"unknown benchmark shape {name!r}; known: {', '.join(SHAPES)}")
    return SHAPES[name]


@contextlib.contextmanager
def stops_off(lm):
    """Within the block, ``lm`` has no stop tokens, so every row decodes ``max_new_tokens`` (on toxlib's paths and
    on the alternatives, which take ``lm.stop_ids`` as transformers' end-of-sequence ids)."""
    before = lm.__dict__.get("stop_ids")
    lm.stop_ids = ()
    try:
        yield
    finally:
        if before is None:
            del lm.stop_ids
        else:
            lm.stop_ids = before
