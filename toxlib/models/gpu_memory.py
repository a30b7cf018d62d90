"""Batch sizes on a GPU, from the memory free on it: rows of a decoding batch, tokens of a scoring pass.

A CPU's batch sizes are fixed (a few hundred rows: its matmuls are as fast at 200 rows as at 3,200, and a larger
batch's logits leave the caches). A GPU's throughput grows with the rows of a step (a step of a small model costs
about as much for 100 rows as for 2,000), so there the batch is as large as memory allows. These functions size it
from a given free-memory figure (``toxlib.models.device.free_memory`` reads a GPU's), so the arithmetic is tested on
a CPU. What a row costs:
  * decoding: its key/value cache (layers x 2 x kv heads x head dim x positions, in the model's dtype), its
    logits (vocabulary x the model's dtype, and a float32 copy) and the sampler's work on them (its exponentials
    in place, top-k candidates, a share of the rows gathered for the later stages: about 16 more bytes per
    vocabulary entry), and its activations (a few vectors of the hidden and MLP widths);
  * scoring: a token's activations through the decoder (hidden and MLP widths, a few of each in flight) and, in
    the LM head's chunks, its float32 logits.
Only ``share`` of the free memory is planned for (the rest: the allocator's fragmentation, CUDA graphs' pools,
other processes), and the result is bounded by ``MAX_DECODE_ROWS`` / ``MAX_PASS_TOKENS``.
"""

from __future__ import annotations

import torch

#: the share of the free memory a batch is planned to take
SHARE = 0.4
#: the most rows one decoding step takes on a GPU (past it the step's time grows with the rows: nothing to gain)
MAX_DECODE_ROWS = 32768
#: the most tokens one scoring pass takes on a GPU
MAX_PASS_TOKENS = 262144
#: positions a decoding batch's cache is sized for when the prompts' widths are not known yet
TYPICAL_POSITIONS = 128


def model_shape(config) -> dict:
    """layers, kv_heads, head_dim, hidden, intermediate, vocab of a transformers config (a multimodal model's text
    part)."""
    cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = cfg.num_attention_heads
    return {"layers": cfg.num_hidden_layers, "kv_heads": getattr(cfg, "num_key_value_heads", None) or heads,
            "head_dim": getattr(cfg, "head_dim", None) or cfg.hidden_size // heads, "hidden": cfg.hidden_size,
            "intermediate": getattr(cfg, "intermediate_size", None) or 4 * cfg.hidden_size, "vocab": cfg.vocab_size}


def decoding_row_bytes(shape: dict, positions: int, dtype_bytes: int) -> int:
    """Bytes one row of a decoding batch takes (see the module docstring) with room for ``positions`` positions."""
    cache = 2 * shape["layers"] * shape["kv_heads"] * shape["head_dim"] * positions * dtype_bytes
    logits = shape["vocab"] * (dtype_bytes + 4 + 16)
    activations = 8 * (shape["hidden"] + shape["intermediate"]) * 4
    return cache + logits + activations


def scoring_token_bytes(shape: dict, dtype_bytes: int) -> int:
    """Bytes one token of a scoring pass takes: its activations (8 of the hidden and MLP widths in flight) and its
    float32 logits in the LM head's chunk, with their exponentials."""
    return 8 * (shape["hidden"] + shape["intermediate"]) * dtype_bytes + 2 * 4 * shape["vocab"]


def rows_that_fit(free_bytes: int, row_bytes: int, most: int, step: int = 64, share: float = SHARE) -> int:
    """How many rows of ``row_bytes`` fit in ``share`` of ``free_bytes``: a multiple of ``step`` (at least
    ``step``), at most ``most``."""
    rows = int(share * free_bytes) // max(1, row_bytes)
    return max(step, min(most, rows // step * step))


def decode_rows(model_config, dtype: torch.dtype, free_bytes: int, positions: int = TYPICAL_POSITIONS) -> int:
    """Rows of a decoding batch that fit in ``free_bytes`` (multiples of 64, at most ``MAX_DECODE_ROWS``)."""
    size = torch.empty((), dtype=dtype).element_size()
    return rows_that_fit(free_bytes, decoding_row_bytes(model_shape(model_config), positions, size), MAX_DECODE_ROWS)


def pass_tokens(model_config, dtype: torch.dtype, free_bytes: int) -> int:
    """Tokens of a scoring pass that fit in ``free_bytes`` (multiples of 1,024, at most ``MAX_PASS_TOKENS``)."""
    size = torch.empty((), dtype=dtype).element_size()
    return rows_that_fit(free_bytes, scoring_token_bytes(model_shape(model_config), size), MAX_PASS_TOKENS, 1024)
