"""``python -m toxlib bench ceilings``: how fast bf16 generation would be if its sampler, or its sampler and its
attention, cost nothing.

Why: ``bench generate`` gives bf16 generation as a share of the matmul roofline (``toxlib.benchmarks.matmul_rate``). A
profile names what is not a matmul (the nucleus sampler's top-k, the attention kernel for one query row, norms and
element-wise work), but the profiler's own cost inflates small operations and moves the heap. So this benchmark
measures the ceilings directly, on ``bench generate``'s prompts and rows, with stop tokens off so that every row
decodes all ``max_new_tokens`` and every variant does the same matmul work:
  * ``toxlib``: the engine as the book runs it;
  * ``free_sampler``: the nucleus sampler replaced by an argmax over the same fp32 logits (``free_sampler``), about
    the least any sampler must do (read every row of logits once);
  * ``free_sampler_and_attention``: attention replaced as well, by a function that returns zeros
    (``no_attention``; transformers then builds no attention mask either): what the matmuls, norms, rotary
    embeddings, the KV cache and the loop take on their own.
A variant's tokens/s over the roofline is the most a faster sampler (and attention) could reach while everything
else stays as it is. The stand-ins' texts are meaningless; only their times count. Outside the ``with`` blocks
nothing is changed.
"""

from __future__ import annotations

import contextlib

import torch

from toxlib.benchmarks.equal_work import stops_off
from toxlib.benchmarks.matmul_rate import Denominator, percent
from toxlib.benchmarks.prompts import bench_prompts
from toxlib.benchmarks.timing import WARM_UP_TOKENS, toxlib_generate, warms_up_whole
from toxlib.generate import RTP_SAMPLING, engine
from toxlib.generate.api import default_batch_rows
from toxlib.models import load
from toxlib.models.attention import attention_function

#: the name of the zero attention function in transformers' ``AttentionInterface``
NO_ATTENTION = "toxlib_no_attention"
VARIANTS = ("toxlib", "free_sampler", "free_sampler_and_attention")


def _argmax_sampler(logits: torch.Tensor, top_p: float, u: torch.Tensor, **_) -> torch.Tensor:
    """The free sampler: (rows,) argmax of (rows, V) logits, in the nucleus sampler's call signature."""
    return logits.argmax(-1)


@contextlib.contextmanager
def free_sampler():
    """Within the block, toxlib's decoding loop takes the argmax where it would draw from the nucleus."""

    real = engine.nucleus_sample
    engine.nucleus_sample = _argmax_sampler
    try:
        yield
    finally:
        engine.nucleus_sample = real


def _zero_attention(module, query, key, value, attention_mask, **_):
    """Attention that costs nothing: zeros of the output's shape. query (rows, heads, q, dim) -> ((rows, q, heads,
    dim), None), as an attention function must return."""
    rows, heads, q_length, _ = query.shape
    return query.new_zeros((rows, q_length, heads, value.shape[-1])), None


def no_attention(model):
    """A context within which every attention layer of ``model`` (a transformers model whose attention goes through
    the ``AttentionInterface``) returns zeros; the model's own attention implementation is restored on exit."""

    return attention_function(model, NO_ATTENTION, _zero_attention)


@contextlib.contextmanager
def variant(lm, name: str):
    """Within the block, ``lm`` decodes as the variant ``name`` of ``VARIANTS`` (stop tokens off in all of them)."""
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}")
    with contextlib.ExitStack() as stack:
        stack.enter_context(stops_off(lm))
        if name != "toxlib":
            stack.enter_context(free_sampler())
        if name == "free_sampler_and_attention":
            stack.enter_context(no_attention(lm.model))
        yield


def generation_ceilings(model: str = "smollm2-135m", quick: bool = False, n_prompts: int | None = None,
                        repeats: int = 2, log=print) -> dict:
    """bf16 generation of ``bench generate``'s prompts (4 quick, else 16; or ``n_prompts``) with RealToxicityPrompts'
    sampling, in each of ``VARIANTS``: after a warm-up of every variant, ``repeats`` rounds that time the variants
    in turn (the best of each is kept), between two measurements of the matmul rate.

    Returns model, dtype, prompts, tokens (per run: prompts x samples x new tokens), per variant ``<name>_tok_s``
    and ``<name>_roofline_pct``, the shares of toxlib's time that the sampler and the attention take
    (``sampler_share_pct``: 1 - toxlib's time / free_sampler's; ``attention_share_pct`` likewise between the two
    free variants; ``rest_share_pct``: the remainder), and the denominator's figures."""

    prompts = bench_prompts(n_prompts or (4 if quick else 16))
    lm = load(model, dtype="bfloat16")
    config = RTP_SAMPLING
    denominator = Denominator(lm.dtype, lm.architecture(), default_batch_rows(lm), lm.device)

    def run(name: str, max_new_tokens: int) -> tuple[int, float]:
        with variant(lm, name):
            return toxlib_generate(lm, prompts, config.with_(max_new_tokens=max_new_tokens))

    for name in VARIANTS:  # on a CPU every prompt for a few tokens, on a GPU the whole workload (warms_up_whole)
        run(name, config.max_new_tokens if warms_up_whole(lm) else WARM_UP_TOKENS)
    denominator.measure()
    best, tokens = {}, {}
    for _ in range(repeats):
        for name in VARIANTS:
            tokens[name], seconds = run(name, config.max_new_tokens)
            best[name] = min(best.get(name, float("inf")), seconds)
    denominator.measure()
    expected = len(prompts) * config.num_samples * config.max_new_tokens
    if set(tokens.values()) != {expected}:
        raise RuntimeError(f"the variants decoded {tokens} tokens, not {expected} each: a stop token was not "
                           "turned off")
    roofline = denominator.roofline_tok_s()
    result = {"model": model, "dtype": "bfloat16", "prompts": len(prompts), "tokens": expected}
    for name in VARIANTS:
        result[f"{name}_tok_s"] = round(expected / best[name], 1)
        result[f"{name}_roofline_pct"] = percent(expected / best[name], roofline)
    t, t_sampler, t_both = (best[name] for name in VARIANTS)
    result.update({"sampler_share_pct": round(100 * (t - t_sampler) / t, 1),
                   "attention_share_pct": round(100 * (t_sampler - t_both) / t, 1),
                   "rest_share_pct": round(100 * t_both / t, 1),
                   **denominator.report(), "threads": torch.get_num_threads()})
    log(f"ceilings {model} bf16, {expected} tokens per run: "
        + "; ".join(f"{name} {result[f'{name}_tok_s']} tok/s ({result[f'{name}_roofline_pct']}%)" for name in VARIANTS)
        + f"; roofline {result['roofline_tok_s']} tok/s at {result['matmul_gflops']} GFLOP/s")
    return result
