"""The real alternatives the benchmarks time toxlib against, each driving transformers as its authors would.

Per workload, two ways of doing the same work without toxlib's engine:
  * the papers' loop: one call per prompt (or per sentence), as the papers' code drives the model;
  * transformers' best batched path: the same calls on whole batches of left-padded prompts (or right-padded
    sentences), ``batch_rows`` rows per call, with the key/value cache implementation that was fastest here
    (dynamic or static; ``torch.compile`` is not tried on a CPU: transformers' ``generate`` skips compilation there,
    "unable to meet the criteria").
Each returns (tokens, seconds), tokens counted as toxlib counts them: new tokens up to and including a stop token
(generation; with ``toxlib.benchmarks.equal_work.stops_off`` there is none, transformers gets no end-of-sequence
id, and every row counts ``max_new_tokens``), or scored tokens (perplexity). Self-Debiasing follows the reference
implementation (github.com/timoschick/self-debiasing, ``generation.py``): the plain input and its six prefixed copies
are rows of one ``generate`` call, and a logits processor replaces every row's scores by the debiased scores of its
plain row.
Written here because none of these is a library call; they are the baselines, not toxlib's code paths. Each runs
with the model's LM head as ``nn.Linear`` computes it (``toxlib.models.lm_head.whole_head``), not toxlib's slices.
"""

from __future__ import annotations

import time

import torch

from toxlib.generate.config import DecodingConfig
from toxlib.models.batching import pad
from toxlib.models.device import free_memory
from toxlib.models.lm_head import whole_head
from toxlib.models.perplexity import default_batch_tokens, with_start
from toxlib.steer.self_debias import apply_decay


def count_until_stop(tokens: list[int], stop_ids) -> int:
    """New tokens up to and including the first stop token (all of them if none)."""
    for i, t in enumerate(tokens):
        if t in stop_ids:
            return i + 1
    return len(tokens)


def _left_padded(lm, texts: list[str]) -> dict:
    """Token ids and mask of ``texts``, left-padded (a LanguageModel's tokenizer pads on the left)."""
    return lm.tokenizer(texts, return_tensors="pt", padding=True).to(lm.device)


def _sampling_kwargs(lm, config: DecodingConfig) -> dict:
    return dict(do_sample=True, top_p=config.top_p, top_k=0, temperature=config.temperature,
                max_new_tokens=config.max_new_tokens, num_return_sequences=config.num_samples,
                pad_token_id=lm.pad_id, eos_token_id=list(lm.stop_ids))


@torch.inference_mode()
def hf_generate(lm, prompts: list[str], config: DecodingConfig, prompts_per_call: int = 1,
                cache_implementation: str | None = None) -> tuple[int, float]:
    """``model.generate(num_return_sequences=k, top_p=...)`` on ``prompts_per_call`` prompts at a time (1: the
    papers' loop), transformers' own top-p (a full-vocabulary sort). Returns (new tokens, seconds)."""
    n_tokens, start = 0, time.perf_counter()
    extra = {"cache_implementation": cache_implementation} if cache_implementation else {}
    with whole_head(lm.model):
        for first in range(0, len(prompts), prompts_per_call):
            enc = _left_padded(lm, prompts[first:first + prompts_per_call])
            out = lm.model.generate(**enc, **_sampling_kwargs(lm, config), **extra)
            new = out[:, enc["input_ids"].shape[1]:].tolist()
            n_tokens += sum(count_until_stop(row, lm.stop_ids) for row in new)
    return n_tokens, time.perf_counter() - start


#: prompts each cache implementation of transformers' batched path is first tried on (one call each)
PROBE_PROMPTS = 4


def fastest_batched_generate(lm, prompts: list[str], config: DecodingConfig, batch_rows: int,
                             warm: DecodingConfig, probe_prompts: int = PROBE_PROMPTS) -> dict:
    """transformers' batched path on every prompt, ``batch_rows // num_samples`` prompts per call, with the faster
    of its cache implementations (dynamic, static): each is tried first on one call of the first ``probe_prompts``
    prompts (after a warm-up call), since one can be a hundred times slower than the other on a GPU; the faster then
    runs the whole workload after a warm-up at the call's shape. Returns {"tokens", "seconds", "cache",
    "prompts_per_call", "probe_prompts", "probe_tok_s": {cache: tok/s on the probe}}."""
    per_call = max(1, batch_rows // config.num_samples)
    probe = prompts[:min(per_call, probe_prompts)]
    tried = {}
    for cache in ("dynamic", "static"):
        impl = None if cache == "dynamic" else cache
        hf_generate(lm, probe, warm, len(probe), impl)
        tokens, seconds = hf_generate(lm, probe, config, len(probe), impl)
        tried[cache] = tokens / seconds
    best = max(tried, key=tried.get)
    impl = None if best == "dynamic" else best
    hf_generate(lm, prompts[:per_call], warm, per_call, impl)
    tokens, seconds = hf_generate(lm, prompts, config, per_call, impl)
    return {"tokens": tokens, "seconds": seconds, "cache": best, "prompts_per_call": per_call,
            "probe_prompts": len(probe), "probe_tok_s": {c: round(v, 1) for c, v in tried.items()}}


class ReferenceSelfDebiasing:
    """The reference's ``SelfDebiasingLogitsProcessor``: rows are [plain inputs; prefix 1 copies; ...; prefix P
    copies], each block ``batch`` rows. The plain rows' scores are debiased with p_biased = the maximum over their
    prefixed copies' softmaxes, and every copy takes its plain row's new scores (so all copies decode alike)."""

    def __init__(self, prefixes: int, decay_constant: float, epsilon: float = 0.01):
        self.prefixes, self.decay_constant, self.epsilon = prefixes, decay_constant, epsilon

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        batch = scores.shape[0] // (1 + self.prefixes)
        plain = scores[:batch]
        p_biased = scores[batch:].float().softmax(-1).view(self.prefixes, batch, -1).amax(0)
        new, _ = apply_decay(plain, p_biased, self.decay_constant, self.epsilon)
        return new.repeat(1 + self.prefixes, 1)


@torch.inference_mode()
def reference_self_debias(lm, prompts: list[str], prefixes: tuple[str, ...], decay_constant: float,
                          max_new_tokens: int, prompts_per_call: int = 1) -> tuple[int, float]:
    """Greedy Self-Debiasing as the reference runs it, ``prompts_per_call`` prompts (x 7 rows) per ``generate``
    call (1: the papers' loop). Returns (new tokens of the plain rows, seconds)."""
    from transformers import LogitsProcessorList

    processor = LogitsProcessorList([ReferenceSelfDebiasing(len(prefixes), decay_constant)])
    n_tokens, start = 0, time.perf_counter()
    with whole_head(lm.model):
        for first in range(0, len(prompts), prompts_per_call):
            batch = prompts[first:first + prompts_per_call]
            enc = _left_padded(lm, batch + [prefix + p for prefix in prefixes for p in batch])
            out = lm.model.generate(**enc, do_sample=False, max_new_tokens=max_new_tokens, logits_processor=processor,
                                    pad_token_id=lm.pad_id, eos_token_id=list(lm.stop_ids), top_p=None, top_k=None,
                                    temperature=None)
            plain = out[:len(batch), enc["input_ids"].shape[1]:]
            n_tokens += sum(count_until_stop(row, lm.stop_ids) for row in plain.tolist())
    return n_tokens, time.perf_counter() - start


def perplexity_batch_tokens(lm, free_bytes: int | None = None) -> int:
    """Tokens per call of transformers' batched perplexity, which keeps every position's float32 logits: on a CPU
    ``toxlib.models.perplexity.default_batch_tokens`` (logits of about 512 MiB); on a GPU a quarter of its free
    memory (``free_bytes``, default the GPU's now) in float32 logits and the loss's own copy of them."""
    if lm.device.type != "cuda":
        return default_batch_tokens(lm)
    free = free_memory(lm.device) if free_bytes is None else free_bytes
    return max(64, free // 4 // (12 * len(lm.tokenizer)))


@torch.inference_mode()
def hf_perplexity(lm, texts: list[str], texts_per_call: int = 1) -> tuple[int, float]:
    """Each text's loss from ``model(input_ids, labels=...)``, ``texts_per_call`` texts at a time, right-padded
    with padding labelled -100 (1: the papers' loop, one sentence per call). Each text starts with the model's start
    token, as toxlib scores it, so both count the same tokens. Returns (scored tokens, seconds)."""
    n_tokens, start = 0, time.perf_counter()
    with whole_head(lm.model):
        for first in range(0, len(texts), texts_per_call):
            encoded = [with_start(lm, t) for t in texts[first:first + texts_per_call]]
            ids, mask = pad(encoded, lm.pad_id, lm.device, side="right")
            labels = ids.masked_fill(mask == 0, -100)
            logits = lm.model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
            targets = labels[:, 1:]
            torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                              ignore_index=-100, reduction="none")
            n_tokens += int((targets != -100).sum())
    return n_tokens, time.perf_counter() - start

