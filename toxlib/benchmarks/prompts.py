"""The texts the benchmarks run on: RealToxicityPrompts' prompts and ToxiGen's sentences, fixed samples of each."""

from __future__ import annotations

from toxlib.data.rtp_prompts import load_rtp
from toxlib.data.toxigen import load_toxigen


def bench_prompts(n: int, seed: int = 2020) -> list[str]:
    """n prompts drawn from the RealToxicityPrompts sample with a fixed seed."""
    return load_rtp("sample")["prompt_text"].sample(n, random_state=seed).tolist()


def toxigen_sentences(n: int) -> list[str]:
    """n distinct ToxiGen sentences (the safety-score chapter's text), a fixed sample."""

    frame = load_toxigen()
    return frame["text"].drop_duplicates().sample(n, random_state=11).tolist()
