"""The exact nucleus of :mod:`toxlib.generate.nucleus` over a whole batch at once, in shapes fixed in advance and
without a host synchronisation: the sampler of the GPU decoding path (:mod:`toxlib.generate.static_decode`).

``nucleus_sample`` picks the rows each stage of its top-k ladder still has to resolve with boolean indexing, and
sorts the rows past the ladder 32 at a time (``SORT_CHUNK`` bounds a CPU's float64 memory): every stage asks the
host how many rows are left, so a GPU waits for the host once per stage and step. Here every stage has a fixed
number of row slots (``capacities``): stage 0 takes every row, each later stage (the rest of the ladder, then the
full sort) gathers the rows still unresolved into its slots with ``torch.nonzero_static``, padded with a row index
past the batch, whose results are written to a sink slot and dropped. The kept set and the draw of a row are those
of ``nucleus_sample``: the same top-k, the same float64 normalisation of the candidates, the same ``draw_from_nucleus``
(tested on the same logits, row by row). A stage whose slots are too few for the rows left sets ``overflow``
(a device flag) and leaves those rows' draws wrong; the caller reads the flag once per batch and decodes the batch
again with more slots (``NucleusSlots.grown``). With the default slots (every row at every stage) nothing can
overflow.

The exponentials and their row sums are ``toxlib.models.batching.shifted_exp``'s, as ``nucleus_sample``'s (on a
GPU one batched sum, not one kernel per row).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from toxlib.generate.nucleus import K_LADDER, NucleusStats, draw_from_nucleus, keep_mask
from toxlib.models.batching import shifted_exp


def stages(vocab: int, top_p: float, ladder: tuple[int, ...] = K_LADDER) -> tuple:
    """The stages a row may be resolved at for this vocabulary: the ladder's k below ``vocab``, then "sort"
    (``top_p`` = 1 keeps the whole vocabulary: the single stage "all")."""
    if top_p >= 1.0:
        return ("all",)
    return (*(k for k in ladder if k < vocab), "sort")


@dataclass
class NucleusSlots:
    """Row slots per stage (``stages``) and what one batch found, as device tensors read once per batch.

    slots: rows each stage can take (the first stage takes every row whatever its entry says).
    overflow: () bool, set when a stage had more unresolved rows than slots; most: (stages,) int64, the most rows
    any one step sent to each stage; resolved: (stages,) int64, the rows each stage resolved (``NucleusStats``),
    of the first ``counted`` rows only (None: all; a padded batch's padding rows are not counted).
    """

    slots: tuple[int, ...]
    overflow: torch.Tensor
    most: torch.Tensor
    resolved: torch.Tensor
    counted: int | None = None

    @classmethod
    def every_row(cls, rows: int, n_stages: int, device) -> "NucleusSlots":
        """Slots for every row at every stage: never overflows."""
        return cls.of((rows,) * n_stages, device)

    @classmethod
    def of(cls, slots: tuple[int, ...], device, counted: int | None = None) -> "NucleusSlots":
        n = len(slots)
        return cls(tuple(int(s) for s in slots), torch.zeros((), dtype=torch.bool, device=device),
                   torch.zeros(n, dtype=torch.long, device=device), torch.zeros(n, dtype=torch.long, device=device),
                   counted)

    def grown(self, rows: int) -> "NucleusSlots":
        """Fresh slots for the same batch after an overflow: at least twice each overflowed stage's, and at least
        the most rows seen, at most ``rows``. Reads the device (call it after the batch)."""
        most = self.most.tolist()
        slots = tuple(min(rows, max(s, m, 2 * s if m > s else s)) for s, m in zip(self.slots, most))
        return NucleusSlots.of(slots, self.overflow.device, self.counted)

    def fitted(self, rows: int, headroom: int = 2, least: int = 32) -> tuple[int, ...]:
        """Slots for the next batch of the same shape after one that did not overflow: ``headroom`` times the most
        rows each later stage took in one step (at least ``least``, at most ``rows``), every row at the first.
        Slots a stage does not need cost a batch time at every step; too few cost a batch decoded again. Reads the
        device."""
        most = self.most.tolist()
        return (rows, *(min(rows, max(least, headroom * m)) for m in most[1:]))

    def add_to(self, stats: NucleusStats, names: tuple) -> None:
        """Add the rows each stage resolved to ``stats`` (reads the device)."""
        for name, n in zip(names, self.resolved.tolist()):
            if n:
                stats.add(name, int(n))


def default_slots(rows: int, vocab: int, names: tuple, free_bytes: int | None = None) -> tuple[int, ...]:
    """Slots per stage for a batch of ``rows``: every row at the first stage, half of them at the second, a quarter
    at the third, an eighth at the sort (at least 32 each, never more than ``rows``), the sort's further bounded
    by ``free_bytes`` (its float64 copies take about 48 bytes per candidate: a quarter of the free memory)."""
    out = []
    for i, _ in enumerate(names):
        share = max(32, rows >> i) if i else rows
        out.append(min(rows, share))
    if free_bytes is not None and names and names[-1] == "sort":
        out[-1] = max(1, min(out[-1], free_bytes // 4 // (48 * vocab)))
    return tuple(out)


def _static_groups(logits: torch.Tensor, top_p: float, top_k: int | None, ladder: tuple[int, ...],
                   state: NucleusSlots | None, overwrite: bool):
    """Yield (rows (s,) int64 indices, the sink ``len(logits)`` marking empty slots; resolved (s,) bool; probs
    (s, k) float64 and token ids (s, k) sorted by probability, descending (stage "all": the vocabulary in its own
    order); the stage's name), stage by stage, in shapes fixed by the slots. A row is resolved at exactly one
    stage unless the slots overflowed (``state.overflow``)."""
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    logits = logits.float()
    rows, vocab = logits.shape
    device = logits.device
    every = torch.arange(rows, device=device)
    if top_k:  # transformers' order: TopK keeps k logits, then TopP works on their renormalised softmax
        vals, idx = torch.topk(logits, min(top_k, vocab), dim=-1)
        yield every, torch.ones(rows, dtype=torch.bool, device=device), vals.double().softmax(-1), idx, \
            f"top_k={top_k}"
        return
    names = stages(vocab, top_p, ladder)
    slots = state.slots if state is not None else (rows,) * len(names)
    expo, total, _ = shifted_exp(logits, inplace=overwrite)
    if names == ("all",):
        probs = expo.double()
        probs /= probs.sum(-1, keepdim=True)
        if state is not None:
            state.resolved[0] += rows if state.counted is None else min(rows, state.counted)
        yield every, torch.ones(rows, dtype=torch.bool, device=device), probs, \
            torch.arange(vocab, device=device).expand(rows, vocab), "all"
        return
    pending = torch.ones(rows, dtype=torch.bool, device=device)
    for i, name in enumerate(names):
        if i == 0:
            chosen, valid = every, pending
        else:
            chosen = torch.nonzero_static(pending, size=slots[i], fill_value=rows).squeeze(-1)
            valid = chosen < rows
            if state is not None:
                left = pending.sum()
                state.overflow |= left > slots[i]
                state.most[i] = torch.maximum(state.most[i], left)
        safe = chosen.clamp(max=rows - 1)
        part = expo if i == 0 else expo[safe]
        if name == "sort":
            probs = part.double()
            probs /= probs.sum(-1, keepdim=True)
            vals, idx = torch.sort(probs, dim=-1, descending=True)
            done = valid
        else:
            vals, idx = torch.topk(part, name, dim=-1)
            vals = vals.double() / total[safe, None]
            done = valid & (vals.sum(-1) >= top_p)  # the top k reach p, so the nucleus lies inside them
        if state is not None:
            state.resolved[i] += (done if state.counted is None else done & (chosen < state.counted)).sum()
        yield chosen, done, vals, idx, name
        left_here = valid & ~done
        pending = torch.zeros(rows + 1, dtype=torch.bool, device=device).index_put_(
            (torch.where(left_here, chosen, rows),), left_here)[:rows]


def batch_nucleus_sample(logits: torch.Tensor, top_p: float, u: torch.Tensor, top_k: int | None = None,
                         stats: NucleusStats | None = None, ladder: tuple[int, ...] = K_LADDER,
                         overwrite: bool = False, state: NucleusSlots | None = None) -> torch.Tensor:
    """Draw one token per row from the top-p nucleus of softmax(logits), as ``nucleus_sample`` does, with no host
    synchronisation when ``stats`` is None.

    logits: (rows, V) float (-inf allowed), overwritten when ``overwrite``; u: (rows,) uniforms in [0, 1); top_k as
    in ``nucleus_sample``. state: the slots per stage and the batch's flags (``NucleusSlots``; None: every row at
    every stage, which cannot overflow). stats: rows per stage and time, read from the device at once (a
    synchronisation: for tests and inspection; the decoding path reads ``state`` once per batch instead).
    Returns (rows,) int64 token ids; rows a stage had no slot for are wrong, and ``state.overflow`` says so.
    """
    start = time.perf_counter()
    rows = logits.shape[0]
    own = state is None and stats is not None and not top_k
    if own:
        state = NucleusSlots.every_row(rows, len(stages(logits.shape[1], top_p, ladder)), logits.device)
    out = torch.zeros(rows + 1, dtype=torch.long, device=logits.device)  # the last slot is the sink
    for chosen, done, vals, idx, name in _static_groups(logits, top_p, top_k, ladder, state, overwrite):
        picked = draw_from_nucleus(vals, idx, top_p, u[chosen.clamp(max=rows - 1)], name)
        out.index_put_((torch.where(done, chosen, rows),), picked)
        if top_k and stats is not None:
            stats.add(name, rows)
    if own:
        state.add_to(stats, stages(logits.shape[1], top_p, ladder))
    if stats is not None:
        stats.seconds += time.perf_counter() - start
    return out[:rows]


def batch_nucleus_mask(logits: torch.Tensor, top_p: float, top_k: int | None = None,
                       ladder: tuple[int, ...] = K_LADDER, state: NucleusSlots | None = None) -> torch.Tensor:
    """The kept set of ``batch_nucleus_sample``'s code path as a (rows, V) boolean mask (for tests)."""
    rows, vocab = logits.shape
    mask = torch.zeros((rows + 1, vocab), dtype=torch.bool, device=logits.device)
    for chosen, done, vals, idx, _ in _static_groups(logits, top_p, top_k, ladder, state, False):
        kept = torch.zeros((len(chosen), vocab), dtype=torch.bool, device=logits.device).scatter(
            -1, idx, keep_mask(vals, top_p))
        mask.index_put_((torch.where(done, chosen, rows),), kept)
    return mask[:rows]
