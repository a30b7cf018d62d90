"""``python -m toxlib bench self-debias``: Self-Debiasing (``toxlib.steer.self_debias``) and plain greedy decoding
timed on the debiasing paper's adversarial prompts against the matmul roofline (row-tokens, and with the prefills
counted), and at equal work against the reference implementation's batched way and its one-prompt-per-call loop
(``toxlib.benchmarks.alternatives.reference_self_debias``).

In: a model name, a dtype, new tokens per prompt and a shape (``toxlib.benchmarks.equal_work.SHAPES``) or explicit
prompt counts. Out: ``bench_self_debias``'s JSON-ready dict: row_tok_s, self_debias_tok_s, greedy_tok_s,
overhead_vs_greedy, the denominator's figures, roofline_pct, work_roofline_pct and, with the alternatives, the
comparisons and their speed-ups.
"""

from __future__ import annotations

import time

import torch

from toxlib.benchmarks.alternatives import reference_self_debias
from toxlib.benchmarks.equal_work import SHAPES, Work, compare, shape, stops_off
from toxlib.benchmarks.matmul_rate import Denominator, flops_per_token, percent
from toxlib.benchmarks.timing import WARM_UP_TOKENS, device_facts, warms_up_whole
from toxlib.data.rtp_prompts import load_debias_prompts
from toxlib.generate import DecodingConfig, generate
from toxlib.generate.api import default_batch_rows, encode_prompt
from toxlib.generate.static_decode import release
from toxlib.models import load
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.steer.self_debias import DEBIASING_PREFIXES, SelfDebiasing

#: Adversarial prompts of ``bench self-debias`` at the record's shape (300 per set), 20 with ``--quick``.
SELF_DEBIAS_PROMPTS = SHAPES["record"].debias_prompts


def self_debias_comparisons(lm, compared: list[str], looped: list[str], steering, max_new_tokens: int) -> dict:
    """{"transformers_batched": ..., "papers_loop": ...} at equal work, stop tokens off (every plain row decodes
    ``max_new_tokens``): toxlib's Self-Debiasing against the reference implementation's way (the plain input and
    its prefixed copies as rows of one ``generate`` call, ``reference_self_debias``) with ``default_batch_rows //
    copies`` prompts per call on ``compared``, and against one prompt per call (the papers' loop) on ``looped``.
    Tokens are the plain rows' new tokens on both sides."""
    greedy = DecodingConfig(mode="greedy", max_new_tokens=max_new_tokens)
    prefixes = tuple(steering.prefixes)
    per_call = max(1, default_batch_rows(lm) // (1 + len(prefixes)))

    def ours(prompts):
        start = time.perf_counter()
        out = generate(lm, prompts, greedy, steering=steering, cache=False, progress=False)
        return Work("toxlib Self-Debiasing", len(prompts), len(prompts), int(out["n_new_tokens"].sum()),
                    time.perf_counter() - start)

    with stops_off(lm):
        warm = greedy if warms_up_whole(lm) else greedy.with_(max_new_tokens=WARM_UP_TOKENS)
        generate(lm, compared, warm, steering=steering, cache=False, progress=False)
        mine = ours(compared)
        mine_looped = mine if looped == compared else ours(looped)
        release(lm.model)
        reference_self_debias(lm, compared[:2], prefixes, steering.decay_constant, WARM_UP_TOKENS, 2)  # warm-up
        batched = Work(f"the reference's generate(), {per_call} prompts x {1 + len(prefixes)} rows per call",
                       len(compared), len(compared),
                       *reference_self_debias(lm, compared, prefixes, steering.decay_constant, max_new_tokens,
                                              per_call))
        loop = Work("the reference's generate(), one prompt per call", len(looped), len(looped),
                    *reference_self_debias(lm, looped, prefixes, steering.decay_constant, max_new_tokens))
    return {"transformers_batched": {**compare(mine, batched), "prompts_per_call": per_call},
            "papers_loop": compare(mine_looped, loop)}


def bench_self_debias(model: str = "smollm2-135m", quick: bool = False, dtype: str = "float32",
                      max_new_tokens: int = 20, log=print, prompts: int | None = None,
                      alternatives: bool = True, shape_name: str = "record", compare_prompts: int | None = None,
                      loop_prompts: int | None = None) -> dict:
    """Self-Debiasing (the paper's six prefixes, λ 100) and plain greedy decoding on the debiasing paper's first
    300 adversarial prompts (20 quick; or ``prompts``), 20 new tokens, no cache. row_tok_s counts every prefixed
    copy's tokens (new tokens x 7); overhead_vs_greedy is Self-Debiasing's time over plain greedy's.

    row_tok_s counts the decoding steps only, but each of the 7 copies also runs its prompt through the model
    first (a prefill as long as the decoding, for 20-token prompts and 20 new tokens). ``work_roofline_pct`` counts
    both: the matmul flops of the prompts' tokens in every copy (2 x non-embedding parameters each: a prefill
    computes the LM head at its last position only; the prefixes' own tokens, run once per batch, are left out)
    and of the row-tokens (``flops_per_token``), over the time and the matmul rate; ``prefill_tokens`` is that
    count of prompt tokens. With ``alternatives``, the comparisons at equal work (``self_debias_comparisons``): the
    reference implementation's batched way on the shape's comparison prompts (57 for the record's shape: 400 rows;
    all for a GPU's) and its one-prompt-per-call loop on the shape's loop prompts, each against toxlib on the same
    prompts; tokens/s count the plain rows' new tokens, as ``self_debias_tok_s`` does."""

    size = shape(shape_name)
    n_prompts = prompts or (20 if quick else size.debias_prompts)
    prompts = load_debias_prompts("adversarial")["prompt_text"].head(n_prompts).tolist()
    lm = load(model, dtype=dtype)
    arch = lm.architecture()
    greedy = DecodingConfig(mode="greedy", max_new_tokens=max_new_tokens)
    steering = SelfDebiasing(DEBIASING_PREFIXES, decay_constant=100.0)
    copies = 1 + len(DEBIASING_PREFIXES)
    denominator = Denominator(lm.dtype, arch, default_batch_rows(lm), lm.device)
    denominator.measure()
    warm = greedy if warms_up_whole(lm) else greedy.with_(max_new_tokens=WARM_UP_TOKENS)
    for kw in ({"steering": steering}, {}):
        generate(lm, prompts, warm, cache=False, progress=False, **kw)

    def timed(**kw):
        start = time.perf_counter()
        out = generate(lm, prompts, greedy, cache=False, progress=False, **kw)
        return int(out["n_new_tokens"].sum()), time.perf_counter() - start

    sd_tokens, sd_s = timed(steering=steering)
    plain_tokens, plain_s = timed()
    denominator.measure()
    result = {"model": model, "shape": shape_name, "dtype": dtype, "prompts": len(prompts),
              "max_new_tokens": max_new_tokens, "prefixes": len(DEBIASING_PREFIXES), "self_debias_s": round(sd_s, 2),
              "row_tok_s": round(sd_tokens * copies / sd_s, 1), "self_debias_tok_s": round(sd_tokens / sd_s, 1),
              "greedy_tok_s": round(plain_tokens / plain_s, 1), "overhead_vs_greedy": round(sd_s / plain_s, 2),
              **denominator.report(), **device_facts(lm.device), "threads": torch.get_num_threads(),
              "cpu": describe_cpu()}
    result["roofline_pct"] = percent(result["row_tok_s"], denominator.roofline_tok_s())
    prefill_tokens = copies * sum(len(encode_prompt(lm, p)) for p in prompts)
    work = prefill_tokens * 2.0 * arch["non_embedding_params"] + sd_tokens * copies * flops_per_token(arch)
    result.update({"prefill_tokens": prefill_tokens,
                   "work_roofline_pct": percent(work / sd_s, denominator.gflops * 1e9)})
    log(f"self-debiasing {model} {dtype}: {result['row_tok_s']} row-tok/s ({result['roofline_pct']}% of "
        f"{result['roofline_tok_s']}; prefills counted too: {result['work_roofline_pct']}%); greedy "
        f"{result['greedy_tok_s']} tok/s; overhead {result['overhead_vs_greedy']}x")
    if alternatives:
        compared = prompts[:min(compare_prompts or size.debias_compare or len(prompts), len(prompts))]
        looped = compared[:min(loop_prompts or size.debias_loop, len(compared))]
        comparisons = self_debias_comparisons(lm, compared, looped, steering, max_new_tokens)
        batched, loop = comparisons["transformers_batched"], comparisons["papers_loop"]
        result.update({"compare_prompts": len(compared), "papers_loop_prompts": len(looped),
                       "papers_loop_tok_s": loop["other"]["tok_s"],
                       "transformers_batched_tok_s": batched["other"]["tok_s"],
                       "vs_papers_loop": loop["speedup"], "vs_transformers_batched": batched["speedup"],
                       "comparisons": comparisons})
        log(f"at equal work (stop tokens off): on {len(compared)} prompts toxlib {batched['toxlib']['tok_s']} tok/s, "
            f"the reference batched ({batched['prompts_per_call']} prompts per call) {batched['other']['tok_s']}: "
            f"{batched['speedup']}x; on {len(looped)} prompts one per call {loop['other']['tok_s']}: "
            f"{loop['speedup']}x")
    return result
