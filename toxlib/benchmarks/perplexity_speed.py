"""``python -m toxlib bench perplexity``: toxlib's sentence perplexity (``toxlib.models.perplexity.sentence_nll``)
timed on ToxiGen sentences against the matmul roofline, and at equal work against transformers' batched path and
the papers' one-sentence-per-call loop (``toxlib.benchmarks.equal_work``).

In: a model name, a dtype and a shape (``toxlib.benchmarks.equal_work.SHAPES``) or explicit sentence counts. Out:
``bench_perplexity``'s JSON-ready dict: tokens, seconds, tok/s, the denominator's figures, roofline_pct and, with the
alternatives, the comparisons and their speed-ups.
"""

from __future__ import annotations

import time

import torch

from toxlib.benchmarks.alternatives import hf_perplexity, perplexity_batch_tokens
from toxlib.benchmarks.equal_work import SHAPES, Work, compare, shape
from toxlib.benchmarks.matmul_rate import Denominator, percent
from toxlib.benchmarks.prompts import toxigen_sentences
from toxlib.benchmarks.timing import device_facts, warms_up_whole
from toxlib.models import load
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.perplexity import SENTENCE_BATCH_TOKENS, sentence_nll

#: Sentences the papers' loop (one sentence per call) scores in ``bench perplexity`` at the record's shape.
PAPERS_LOOP_SENTENCES = SHAPES["record"].sentences_loop


def timed_nll(lm, texts: list[str]) -> Work:
    """toxlib's ``sentence_nll`` of ``texts`` timed (no cache; already warmed up), as a ``Work``."""
    start = time.perf_counter()
    scores = sentence_nll(lm, texts)
    return Work("toxlib sentence_nll", len(texts), len(texts), int(scores["n_tokens"].sum()),
                time.perf_counter() - start)


def perplexity_comparisons(lm, texts: list[str], ours: Work, looped: list[str]) -> dict:
    """{"transformers_batched": ..., "papers_loop": ...} at equal work: ``ours`` (toxlib on ``texts``) against
    transformers' batched path on the same texts (sorted by length, right-padded calls of about
    ``perplexity_batch_tokens`` tokens), and toxlib on ``looped`` against the papers' loop (one sentence per call)
    on them."""
    longest = max(len(lm.tokenizer(t).input_ids) for t in texts) + 1
    per_call = max(1, perplexity_batch_tokens(lm) // longest)
    hf_perplexity(lm, texts[:8])  # warm-up
    hf_perplexity(lm, sorted(texts, key=len)[-per_call:], per_call)  # and at the largest call's shape
    theirs = Work(f"transformers model(labels=...), {per_call} sentences per call", len(texts), len(texts),
                  *hf_perplexity(lm, sorted(texts, key=len), per_call))
    ours_looped = ours if looped == texts else timed_nll(lm, looped)
    loop = Work("the papers' loop: one sentence per call", len(looped), len(looped), *hf_perplexity(lm, looped))
    return {"transformers_batched": {**compare(ours, theirs), "sentences_per_call": per_call},
            "papers_loop": compare(ours_looped, loop)}


def bench_perplexity(model: str = "smollm2-135m", quick: bool = False, dtype: str = "float32", log=print,
                     sentences: int | None = None, alternatives: bool = True, shape_name: str = "record",
                     loop_sentences: int | None = None) -> dict:
    """``toxlib.models.perplexity.sentence_nll`` on a fixed set of ToxiGen sentences (the shape's: 2,000 for the
    record's, 20,000 for a GPU's; 300 quick; or ``sentences``), no cache; with ``alternatives``, the comparisons at
    equal work (``perplexity_comparisons``): transformers' batched path on every sentence, the papers' loop on the
    first ``loop_sentences`` (the shape's 200) against toxlib on the same. Returns model, dtype, sentences, tokens,
    seconds, tok_s, the denominator's figures, roofline_pct and, with the alternatives, ``comparisons`` and their
    headline ratios vs_transformers_batched and vs_papers_loop (with both sides' tok/s)."""

    size = shape(shape_name)
    texts = toxigen_sentences(sentences or (300 if quick else size.sentences))
    lm = load(model, dtype=dtype)
    arch = lm.architecture()
    denominator = Denominator(lm.dtype, arch, SENTENCE_BATCH_TOKENS, lm.device)
    denominator.measure()
    sentence_nll(lm, texts if warms_up_whole(lm) else texts[:32])  # warm-up
    ours = timed_nll(lm, texts)
    denominator.measure()
    result = {"model": model, "shape": shape_name, "dtype": dtype, "sentences": len(texts), "tokens": ours.tokens,
              "seconds": round(ours.seconds, 2), "tok_s": round(ours.tok_s, 1), **denominator.report(),
              **device_facts(lm.device), "threads": torch.get_num_threads(), "cpu": describe_cpu()}
    result["roofline_pct"] = percent(result["tok_s"], denominator.roofline_tok_s())
    log(f"perplexity {model} {dtype}: {ours.tokens} tokens in {ours.seconds:.1f} s = {result['tok_s']} tok/s; matmul "
        f"{result['matmul_gflops']} GFLOP/s -> roofline {result['roofline_tok_s']} tok/s ({result['roofline_pct']}%)")
    if alternatives:
        looped = texts[:min(loop_sentences or size.sentences_loop, len(texts))]
        comparisons = perplexity_comparisons(lm, texts, ours, looped)
        batched, loop = comparisons["transformers_batched"], comparisons["papers_loop"]
        result.update({"papers_loop_sentences": len(looped), "papers_loop_tok_s": loop["other"]["tok_s"],
                       "transformers_batched_tok_s": batched["other"]["tok_s"],
                       "transformers_sentences_per_call": batched["sentences_per_call"],
                       "vs_papers_loop": loop["speedup"], "vs_transformers_batched": batched["speedup"],
                       "comparisons": comparisons})
        log(f"at equal work: transformers batched ({batched['sentences_per_call']} sentences per call) "
            f"{batched['other']['tok_s']} tok/s on all {len(texts)}: toxlib {batched['speedup']}x; on "
            f"{len(looped)} sentences toxlib {loop['toxlib']['tok_s']}, the papers' loop {loop['other']['tok_s']}: "
            f"{loop['speedup']}x")
    return result
