"""Helpers shared by generation and sentence scoring: padding token lists into tensors, grouping sequences into
batches under a token budget, and row-wise exponentials with an accurate normaliser.

Batch invariance. On CPU, PyTorch's kernels give a row the same bits whatever the rows beside it, as long as
(1) every row of the batch is padded to the same width, a width fixed by the row itself, and (2) every matmul has
at least ``MIN_ROWS`` rows: a single-token step of a one-row batch takes other kernels and moves bf16 logits by
~0.2, and a prefill's LM head, which sees one row (the last position) per prompt, moved float32 step-0 logits by
~2e-5 for 1-3 prompts (measured on both bundled models; a full-sequence pass's decoder layers are not
affected). A padded width that depends on the batch (the longest prompt in it) moves logits too: right-padding
12-token rows to 17 columns moved bf16 logits by up to ~2.6 (fp32: ~4e-4), although padded positions are masked.
So scoring batches sequences of equal length (``length_batches``: no padding), and generation pads each prompt to
``bucket_width`` of its own length and batches prompts of one bucket (``length_batches`` over the buckets), with
companion rows (copies, dropped afterwards) where a forward pass would otherwise hold fewer than ``MIN_ROWS`` rows.
Which texts share a batch (which depends on what a cache already held, or on the batch size) then changes nothing.
Tested in tests/generate/test_batch_invariance.py on a bundled model.
"""

from __future__ import annotations

import torch

#: Generation pads a prompt to the next multiple of this many tokens (``bucket_width``).
WIDTH_STEP = 16

#: The fewest rows a matmul of the engine's may have: from this many rows up, a row's bits do not depend on how many
#: rows share the matmul, on every CPU measured. Measured with ``tests/models/test_cpu_kernels.py`` (linear layers of
#: both bundled models, 1-300 rows against 512): on an AMD EPYC (AVX-512, AVX512-BF16, no AMX) float32 rows differ
#: at 1, 2 and 3 rows and agree from 4, in MKL's strict mode or not; an Intel Xeon with AMX gave the same float32
#: split (1-3 rows differ, 5, 8, 15 agree); an Intel Xeon without AMX, in MKL's strict mode, agreed from 1 row in
#: float32 and differed at 1 row in bf16. Generation,
#: beam search and sentence scoring add companion rows (copies of their own rows, dropped afterwards) so no
#: forward pass, and no LM-head chunk, has fewer. The test fails on a CPU that needs more.
MIN_ROWS = 4


def companions(rows: int, minimum: int = MIN_ROWS) -> int:
    """How many copies of a block of ``rows`` rows make at least ``minimum`` rows (1 when it has enough)."""
    return max(1, -(-minimum // max(rows, 1)))


def bucket_width(length: int, step: int = WIDTH_STEP) -> int:
    """The padded width of a sequence of ``length`` tokens: the next multiple of ``step`` (at least ``step``). A
    function of the length alone, so a row's padding never depends on the rows beside it."""
    return max(1, -(-length // step)) * step


def pad(sequences: list[list[int]], pad_id: int, device=None, side: str = "left",
        width: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, attention_mask), both (len(sequences), width) int64, width the longest sequence unless given (then at
    least that). side="left" right-aligns the sequences (new tokens of a batch line up for generation);
    side="right" left-aligns them (scoring a causal LM)."""
    longest = max(len(s) for s in sequences)
    if width is not None and width < longest:
        raise ValueError(f"pad(width={width}) is narrower than the longest sequence ({longest} tokens)")
    width = longest if width is None else width
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        if seq:
            cols = slice(width - len(seq), width) if side == "left" else slice(0, len(seq))
            ids[row, cols] = torch.tensor(seq, dtype=torch.long)
            mask[row, cols] = 1
    return ids.to(device), mask.to(device)


def budget_batches(lengths: list[int], budget: int) -> list[list[int]]:
    """Group positions 0..n-1, in the given order, into consecutive batches whose padded size
    (rows x longest length) stays within ``budget`` tokens (a longer sequence gets a batch of its own)."""
    batches, current, longest = [], [], 0
    for i, length in enumerate(lengths):
        if current and (len(current) + 1) * max(longest, length) > budget:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, length)
    if current:
        batches.append(current)
    return batches


def length_batches(lengths: list, budget: int | None = None, max_rows: int | None = None) -> list[list[int]]:
    """Group positions 0..n-1 into batches of sequences of one length each, shortest first, each within ``budget``
    tokens (rows x length) and ``max_rows`` rows (None: no bound; at least one row). Inside a length, positions
    keep their order. No padding is needed, so the batches are batch invariant (see the module docstring).
    ``lengths`` may be any sortable keys (generation passes bucket widths, or tuples of widths) when ``budget`` is
    None: positions are then grouped by equal key."""
    by_length: dict[int, list[int]] = {}
    for i, length in enumerate(lengths):
        by_length.setdefault(length, []).append(i)
    batches = []
    for length in sorted(by_length):
        rows = by_length[length]
        per_batch = min(len(rows), budget // max(1, length) if budget else len(rows), max_rows or len(rows))
        per_batch = max(1, per_batch)
        batches.extend(rows[b:b + per_batch] for b in range(0, len(rows), per_batch))
    return batches


def packs(items: list, sizes: list[int], budget: int, shareable: list[bool] | None = None) -> list[list]:
    """Consecutive ``items`` gathered into packs of at most ``budget`` in all (``sizes[i]``: item i's size, e.g.
    a batch's tokens); an item over the budget, or one whose ``shareable[i]`` is False, is a pack of its own.
    The items keep their order."""
    shareable = [True] * len(items) if shareable is None else shareable
    out, size, open_pack = [], 0, False
    for item, n, ok in zip(items, sizes, shareable):
        if out and ok and open_pack and size + n <= budget:
            out[-1].append(item)
            size += n
        else:
            out.append([item])
            size, open_pack = n, ok
    return out


def shifted_exp(logits: torch.Tensor, inplace: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """exp(logits - row max) and its row sum, for softmax and log-sum-exp over large vocabularies.

    logits: (rows, V) float32 (overwritten when ``inplace``). Returns (exponentials (rows, V) fp32, row sums
    (rows,) float64, row maxima (rows,) float64); log-sum-exp = log(sum) + max, probabilities = exp / sum.
    torch's fused fp32 softmax leaves row sums off 1 by up to ~3e-5 over 262K terms; the pairwise fp32 sum used
    here is within ~1e-7 of the float64 sum, and costs one pass less. On a CPU each row's values depend on that
    row only (not on how many rows are passed); on a GPU the row sums are one batched reduction (a row at a time
    would be a kernel launch per row), whose tree order is as accurate and may depend on the batch's shape.
    """
    peak = logits.amax(-1, keepdim=True)
    expo = (logits.sub_(peak) if inplace else logits - peak).exp_()
    # Row by row on a CPU: torch's sum over the last dimension of a (rows, V) tensor orders its additions
    # differently for different row counts (last-bit changes), which would make a row's value depend on its batch.
    rowwise = len(expo) > 1 and expo.device.type == "cpu"
    total = torch.stack([row.sum() for row in expo]) if rowwise else expo.sum(-1)
    return expo, total.double(), peak.squeeze(-1).double()


#: elements an elementwise op's input is padded to a multiple of (``aligned_elementwise``): twice the widest SIMD
#: vector (AVX-512: 16 float32), with room to spare
ALIGN_ELEMENTS = 64


def aligned_elementwise(op, x: torch.Tensor) -> torch.Tensor:
    """``op(x)`` for an elementwise ``op`` (torch.sigmoid, ...), each element's bits independent of ``x``'s size.

    ATen runs an elementwise op on a contiguous CPU tensor in vectors of twice the SIMD width and hands the remainder
    to a scalar loop, whose results differ in the last bits (float32 sigmoid: a row of 8 moved when the tensor had 7
    or 9 rows on an AVX2 CPU; with AVX-512 the split falls elsewhere). Flattened and zero-padded to a multiple of
    ``ALIGN_ELEMENTS``, every element goes through the vector loop, on any of these CPUs. Inputs of up to 32,768
    elements run in one thread, so no chunk boundary of a parallel split falls inside a vector either."""
    flat = x.reshape(-1)
    padded = torch.zeros(-(-flat.numel() // ALIGN_ELEMENTS) * ALIGN_ELEMENTS, dtype=x.dtype, device=x.device)
    padded[:flat.numel()] = flat
    return op(padded)[:flat.numel()].reshape(x.shape)


def tokenized_batches(tokenizer, texts: list[str], budget: int, max_length: int = 512):
    """Yield (positions, encoding) for ``texts`` tokenized once and cut into batches of texts with equal token
    counts (``length_batches``: no padding, so a text's scores do not depend on its batch), at most ``budget``
    tokens each. positions: the indices into ``texts`` of the batch's rows; encoding: the tokenizer's tensors
    (input_ids, attention_mask, ... each (rows, length))."""
    ids = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    for rows in length_batches([len(i) for i in ids], budget):
        yield rows, tokenizer.pad({"input_ids": [ids[i] for i in rows]}, return_tensors="pt")


def bucketed_batches(lengths: list[int], batch_size: int, generator: torch.Generator) -> list[list[int]]:
    """Training batches (lists of indices into ``lengths``) of similar-length texts, for the scorer and the LM
    adaptation: shuffle, sort within windows of 50 batches, shuffle the batches."""
    perm = torch.randperm(len(lengths), generator=generator).tolist()
    window = batch_size * 50
    batches = []
    for start in range(0, len(perm), window):
        chunk = sorted(perm[start:start + window], key=lambda i: lengths[i])
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
