"""Captions of the generation chapter (``notebooks/generation.ipynb``): the models, sampled and unprompted
continuations, nucleus sizes, speed, roofline and the generation cache.

Fields the chapter binds from its parameters: ``num_samples``, ``max_new_tokens``, ``top_p``, ``nucleus_prompts``,
``speed_prompts``; computed in the chapter: ``n_steps`` (decoding steps inspected), ``nucleus_samples`` (samples
per prompt in the nucleus section), ``n_prompts`` (prompts continued).
"""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("generation", {
    "models": "Architecture of the models used in this book's default runs, read from the loaded models (parameters in "
              "millions, tied input/output embeddings counted once). Both are 4-bit GGUF "
              "quantizations expanded to fp32, not the papers' GPT-2 family.",
    "examples": "First two of {num_samples} sampled continuations (nucleus p = {top_p}, up to {max_new_tokens} "
                "tokens) for three RealToxicityPrompts sample prompts, per model. May be offensive.",
    "unprompted_examples": "Unprompted continuations (from each model's start token), nucleus p = {top_p}, up to "
                           "{max_new_tokens} tokens. May be offensive.",
    "fig_nucleus_sizes": "Nucleus size per decoding step (p = {top_p}; {n_steps:,} steps: {nucleus_prompts} "
                         "prompts x {nucleus_samples} samples per model)",
    "nucleus_summary": "Nucleus sizes over every decoding step of {nucleus_prompts} prompts x {nucleus_samples} "
                       "samples per model (p = {top_p}). same as transformers: share of steps where toxlib's kept "
                       "set equals transformers' TopPLogitsWarper set. The last columns: share of nuclei within each "
                       "top-k stage (a row is resolved at the first k whose top-k mass reaches p, so a few resolve "
                       "one stage later).",
    "speed": "New tokens per second: toxlib vs one transformers generate() call per prompt "
             "(`num_return_sequences={num_samples}`, top-p {top_p}, fp32), {speed_prompts} prompts each. Small runs "
             "understate toxlib, whose batches fill up with more prompts. Each row names the machine and date of "
             "the benchmark run that timed it (measured: UTC).",
    "roofline": "Tokens per second of each path (float32) against the matmul roofline of the machine named in the "
                "row; Self-Debiasing counts every prefixed copy's tokens.",
    "cache": "Seconds for generate() on {n_prompts} prompts x {num_samples} samples: first call (possibly read from "
             "an earlier run's cache) and second call (read from the cache), on the machine named in the row.",
    "claims": "Claims checked in this chapter.",
})
