"""Batched, cached text generation.

    from toxlib.generate import generate, DecodingConfig, RTP_SAMPLING
    df = generate(lm, prompts, RTP_SAMPLING)          # 25 nucleus samples (p = 0.9) of 20 tokens per prompt

Modules: ``config`` (DecodingConfig, cache keys), ``nucleus`` (exact top-p sampling without a full sort),
``nucleus_batch`` (the same, for a whole batch in fixed shapes, on a GPU), ``engine`` (the batched decoding loop),
``decoder_choice`` (``choose_decoder``: the GPU's static path or the eager loop, and why), ``static_decode`` (the
GPU's decoding path for one batch, and the ``Decoders`` state it keeps between batches) with its parts
``static_sizing`` (row and cache buckets, the static cache), ``graphed_step`` (a step captured as a CUDA graph),
``sampler_capacity`` (the batch sampler's slots, learned across batches) and ``decode_timing``; ``api``
(``generate``: prompts in, DataFrame out, with the cache).

May import: common, store, executors, models.
"""

from toxlib.generate.api import GENERATION_COLUMNS, generate
from toxlib.generate.config import RTP_SAMPLING, DecodingConfig
from toxlib.generate.nucleus import NucleusStats, fast_nucleus_mask, nucleus_sample

__all__ = ["GENERATION_COLUMNS", "RTP_SAMPLING", "DecodingConfig", "NucleusStats", "fast_nucleus_mask", "generate",
           "nucleus_sample"]
