"""A model's attention swapped, within a block, for a function registered in transformers' ``AttentionInterface``.

transformers looks the attention function up by ``model.config._attn_implementation`` at every forward pass, so
setting that name is enough to route every layer through another function; the name set before is restored on
exit, also after an error. Used by ``toxlib.models.length_groups`` (several lengths in one pass) and
``toxlib.benchmarks.ceilings`` (attention that costs nothing, for timing).
"""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def attention_function(model, name: str, function):
    """Within the block, ``model``'s attention layers call ``function`` (registered under ``name`` on first use; an
    attention function takes (module, query, key, value, attention_mask, **kwargs) and returns (output (rows,
    q_length, heads, dim), weights or None))."""
    from transformers import AttentionInterface

    if name not in AttentionInterface._global_mapping:
        AttentionInterface.register(name, function)
    previous = model.config._attn_implementation
    model.config._attn_implementation = name
    try:
        yield
    finally:
        model.config._attn_implementation = previous
