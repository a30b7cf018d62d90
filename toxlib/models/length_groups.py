"""One decoder pass over texts of several lengths, each length attending exactly as it would alone.

Why: sentence scoring batches texts of one token count (no padding: in bf16, padding changes the real tokens'
logits, see ``toxlib.models.batching``). Most lengths are rare, so most batches are small: on 2,000 ToxiGen sentences,
28 of SmolLM2's 48 batches held fewer than 1,000 tokens and ran at two thirds of the big batches' speed. Every
layer except attention works row by row, and a CPU matmul gives a row the same bits whatever the rows beside it
(float32 in MKL's strict mode, bf16 without AMX: ``toxlib.models.cpu_kernels``), so the groups can share one
pass: their tokens go through the model as one sequence of T tokens, and a registered attention function
(``ATTENTION``) cuts queries, keys and values back into each group's (rows, heads, length, dim) views, in the same
memory layout, and calls transformers' own SDPA attention on each, as the model would for that group alone.
Position ids restart at 0 in every text. The result is bitwise the hidden states of one pass per group (tested
on both bundled models).

    with length_groups(model, [(rows, length), ...]):     # groups in the order their tokens are concatenated
        hidden = model.base_model(input_ids=ids, position_ids=positions, use_cache=False).last_hidden_state

Only for decoders whose attention goes through transformers' ``AttentionInterface`` (``supports(model)``), with
causal attention and no attention mask (no padding), each length at most the model's sliding window, and only on a
CPU whose kernels are row invariant in the model's precision (``can_share_a_pass``): elsewhere (a GPU's kernels,
chosen per shape; bf16 with AMX) a row's matmul bits depend on the rows beside it, so each length keeps a pass of
its own.
"""

from __future__ import annotations

import contextlib

import torch

from toxlib.models.attention import attention_function
from toxlib.models.cpu_kernels import rows_are_batch_invariant
from toxlib.models.loading import text_config

#: the name this attention function is registered under in transformers' ``AttentionInterface``
ATTENTION = "toxlib_length_groups"

_layouts: list[list[tuple[int, int, int]]] = []  # a stack of [(offset, rows, length)], innermost last


def _grouped_attention(module, query, key, value, attention_mask, **kwargs):
    """transformers' SDPA attention per length group. query (1, heads, T, dim), key and value (1, kv_heads, T, dim):
    the concatenated groups. Returns ((1, T, heads, dim), None), as an attention function must."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if attention_mask is not None or query.shape[0] != 1:
        raise ValueError("length-group attention takes one concatenated row and no attention mask")
    out = query.new_empty((1, query.shape[2], query.shape[1], value.shape[-1]))
    for offset, rows, length in _layouts[-1]:
        n = rows * length

        def group(t: torch.Tensor) -> torch.Tensor:  # (1, h, T, d) -> this group's (rows, h, length, d)
            return t[0].transpose(0, 1)[offset:offset + n].reshape(rows, length, t.shape[1], t.shape[3]).transpose(1, 2)

        attended, _ = sdpa_attention_forward(module, group(query), group(key), group(value), None, **kwargs)
        out[0, offset:offset + n] = attended.reshape(n, *attended.shape[2:])
    return out, None


#: Architectures whose length groups are tested bitwise (the bundled models' and the tests' tiny ones); another
#: architecture (GPT-2's Conv1D layers, say) keeps a pass per length until it is tested too.
TESTED_MODEL_TYPES = frozenset({"llama", "gemma3_text"})


def supports(model) -> bool:
    """Whether ``model`` can run length groups: a tested architecture (``TESTED_MODEL_TYPES``) whose attention is
    transformers' SDPA through the ``AttentionInterface`` (the bundled models are)."""
    return (getattr(model.config, "model_type", None) in TESTED_MODEL_TYPES
            and getattr(model.config, "_attn_implementation", None) == "sdpa"
            and getattr(model, "_supports_attention_backend", False))


def window(model) -> int | None:
    """The model's smallest sliding window (Gemma-3's local layers: 512), or None: a group longer than it needs
    the window's mask, which length groups do not build."""

    return getattr(text_config(model), "sliding_window", None)


def flat_inputs(groups: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, position_ids), each (1, T): the groups' (rows, length) token ids concatenated row by row, and
    each row's positions 0..length-1."""
    ids = torch.cat([g.reshape(-1) for g in groups])[None]
    positions = torch.cat([torch.arange(g.shape[1], device=g.device).repeat(g.shape[0]) for g in groups])[None]
    return ids, positions


@contextlib.contextmanager
def length_groups(model, shapes: list[tuple[int, int]]):
    """Within the block, ``model``'s attention treats its one input row as the concatenation of groups of
    ``shapes`` [(rows, length), ...] (in order), each group causal on its own. Restores the model's attention
    implementation on exit."""

    layout, offset = [], 0
    for rows, length in shapes:
        layout.append((offset, rows, length))
        offset += rows * length
    _layouts.append(layout)
    try:
        with attention_function(model, ATTENTION, _grouped_attention):
            yield
    finally:
        _layouts.pop()


def hidden_states(model, groups: list[torch.Tensor]) -> list[torch.Tensor]:
    """The decoder's last hidden states for each group of token ids (rows, length) (no padding, positions from
    0): a list of (rows, length, hidden) in the model's dtype. One pass over all groups (``length_groups``) when
    there are several; a plain pass for one."""
    decoder = model.base_model
    if len(groups) == 1:
        return [decoder(input_ids=groups[0], use_cache=False).last_hidden_state]
    ids, positions = flat_inputs(groups)
    with length_groups(model, [tuple(g.shape) for g in groups]):
        hidden = decoder(input_ids=ids, position_ids=positions, use_cache=False).last_hidden_state[0]
    out, offset = [], 0
    for g in groups:
        out.append(hidden[offset:offset + g.numel()].view(*g.shape, -1))
        offset += g.numel()
    return out


def can_share_a_pass(model, length: int) -> bool:
    """Whether texts of ``length`` tokens may go into a shared pass of ``hidden_states``: the model supports
    length groups, runs where its rows are batch invariant (``cpu_kernels.rows_are_batch_invariant``), and the
    length fits its sliding window (if any)."""
    limit = window(model)
    invariant = rows_are_batch_invariant(model.device, model.dtype)
    return supports(model) and invariant and (limit is None or length <= limit)
