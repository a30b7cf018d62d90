"""Exact nucleus (top-p) sampling without sorting the whole vocabulary.

The nucleus of a distribution q over the vocabulary is the smallest top set whose mass reaches p: sort q in
descending order and keep token j when the mass of the tokens before it is below p (the first token is always
kept). This is the set transformers' ``TopPLogitsWarper`` keeps: it removes a token when the ascending cumulative
mass up to and including it is <= 1 - p, which in exact arithmetic is the same condition.

Sorting 262,144 Gemma logits per row and step dominated generation time. The nucleus is almost always small (median
about 50 tokens for both bundled models, 99th percentile about 2,000), so :func:`nucleus_sample` takes the k largest
probabilities with ``torch.topk`` for k on a short ladder (256, 2,048, 16,384) and falls back to the full sort only for
rows whose top-k mass is still below p. A row is resolved at k exactly when the top-k mass reaches p: every token
after the k-th then has at least p before it, so the nucleus lies inside the top k and the kept set is the one the
full sort gives. Nothing is approximated; tests compare the kept sets with the float64 definition and with
transformers' warper on random logits, and the sampled frequencies with the exact distribution (chi-square).

Numerics: the exponentials are fp32 and their row sum uses torch's pairwise fp32 summation (within ~1e-7 of the
float64 sum), candidate masses are divided by it in float64, and rows past the ladder are normalised and sorted in
float64. On random logits the kept set equals the float64 definition exactly (tested). transformers' warper
cumulates a fused fp32 softmax, whose row sums are off by up to ~3e-5 for 262K tokens; it now and then misplaces
the boundary of a nucleus of tens of thousands of tokens by one token, the only place where its set and ours
differ.

Sampling is by inverse CDF from one uniform number per row, over the kept tokens in vocabulary order: the caller
passes the uniforms, drawn from per-row seeded generators, so a row's sample does not depend on which other rows
share its batch (up to rounding noise in the logits, which can only matter at a boundary of width ~1e-7).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from toxlib.models.batching import shifted_exp

K_LADDER = (256, 2048, 16384)
SORT_CHUNK = 32  # rows sorted at once in the fallback (bounds its float64 memory)


@dataclass
class NucleusStats:
    """How many rows each stage of the ladder resolved (the last entry counts full sorts)."""

    resolved_at: dict = field(default_factory=dict)
    seconds: float = 0.0  # time spent in nucleus_sample

    def add(self, k: int | str, n: int) -> None:
        self.resolved_at[k] = self.resolved_at.get(k, 0) + n

    def shares(self) -> dict:
        total = sum(self.resolved_at.values()) or 1
        return {str(k): v / total for k, v in self.resolved_at.items()}


def keep_mask(values: torch.Tensor, top_p: float) -> torch.Tensor:
    """The nucleus over candidates sorted by probability, descending: keep j when the mass before j is < top_p (the
    first always; every candidate when top_p >= 1).

    values: (..., k) probabilities (any float dtype; cumulated in float64). Returns a bool mask of the same shape.
    Used by both samplers (``nucleus_sample`` and ``toxlib.generate.nucleus_batch``), so their kept sets agree.
    """
    if top_p >= 1.0:
        return torch.ones_like(values, dtype=torch.bool)
    v = values.double()
    keep = (v.cumsum(-1) - v) < top_p
    keep[..., 0] = True
    return keep


def draw_from_nucleus(values: torch.Tensor, index: torch.Tensor, top_p: float, u: torch.Tensor,
                      stage) -> torch.Tensor:
    """Inverse-CDF draw from the nucleus of rows whose candidates contain it (the draw of both samplers,
    ``nucleus_sample`` and ``toxlib.generate.nucleus_batch``).

    values: (rows, k) probabilities sorted descending (stage "all": the whole vocabulary in vocabulary order);
    index: (rows, k) their token ids; u: (rows,) in [0, 1). Returns (rows,) token ids.
    The draw walks the kept tokens in vocabulary order, not probability order: rounding noise in the logits
    (~1e-7 between batch layouts) reorders near-tied tokens, which in probability order would shift every token
    after them and change the draw; in vocabulary order it changes nothing.
    """
    keep = keep_mask(values, top_p)
    mass = torch.where(keep, values.double(), torch.zeros((), dtype=torch.float64, device=values.device))
    if stage == "sort":  # a full permutation of the vocabulary: scatter back into vocabulary order
        mass = torch.zeros_like(mass).scatter(-1, index, mass)
        index = torch.arange(mass.shape[-1], device=mass.device).expand_as(mass)
    elif stage != "all":
        order = index.argsort(-1)
        mass, index = mass.gather(-1, order), index.gather(-1, order)
    cum = mass.cumsum(-1)
    pos = torch.searchsorted(cum, u.double()[:, None].to(cum.device) * cum[:, -1:], right=True)
    return index.gather(-1, torch.minimum(pos, torch.full_like(pos, cum.shape[-1] - 1))).squeeze(-1)


def _candidate_groups(logits: torch.Tensor, top_p: float, top_k: int | None, ladder: tuple[int, ...],
                      overwrite: bool = False):
    """Split the rows into groups whose candidate tokens certainly contain the nucleus.

    Yields (rows, probs, token_ids, stage): rows (n,) row indices; probs (n, k) float64 and token_ids (n, k),
    sorted by probability, descending (stage "all", for top_p = 1: the whole vocabulary in vocabulary order).
    overwrite=True lets the exponentials be computed in place in ``logits`` (saves a copy of rows x V).
    """
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    logits = logits.float()
    rows, vocab = logits.shape
    every = torch.arange(rows, device=logits.device)
    if top_k:  # transformers' order: TopK keeps k logits, then TopP works on their renormalised softmax
        vals, idx = torch.topk(logits, min(top_k, vocab), dim=-1)
        yield every, vals.double().softmax(-1), idx, f"top_k={top_k}"
        return
    # Unnormalised exponentials with an accurate row sum (a fused fp32 softmax can move a nucleus boundary);
    # candidates are divided by it in float64.
    expo, total, _ = shifted_exp(logits, inplace=overwrite)
    todo = every
    if top_p < 1.0:
        for k in ladder:
            if k >= vocab or todo.numel() == 0:
                break
            vals, idx = torch.topk(expo if todo.numel() == rows else expo[todo], k, dim=-1)
            vals = vals.double() / total[todo, None]
            done = vals.sum(-1) >= top_p  # the top k reach p, so the nucleus lies inside them
            if done.any():
                yield todo[done], vals[done], idx[done], k
            todo = todo[~done]
    # Rows past the ladder (nuclei of tens of thousands of tokens of ~1e-6 each) are normalised and sorted in
    # float64, a few rows at a time; top_p = 1 takes every token, in vocabulary order.
    for start in range(0, todo.numel(), SORT_CHUNK):
        part = todo[start:start + SORT_CHUNK]
        probs = expo[part].double()
        probs /= probs.sum(-1, keepdim=True)
        if top_p >= 1.0:
            yield part, probs, torch.arange(vocab, device=logits.device).expand(part.numel(), vocab), "all"
        else:
            vals, idx = torch.sort(probs, dim=-1, descending=True)
            yield part, vals, idx, "sort"


def nucleus_sample(logits: torch.Tensor, top_p: float, u: torch.Tensor, top_k: int | None = None,
                   stats: NucleusStats | None = None, ladder: tuple[int, ...] = K_LADDER,
                   overwrite: bool = False) -> torch.Tensor:
    """Draw one token per row from the top-p nucleus of softmax(logits).

    logits: (rows, V) float, already temperature-scaled and processed (-inf allowed); u: (rows,) uniforms in
    [0, 1); top_k: optionally restrict to the k most likely tokens first (as transformers' TopKLogitsWarper before
    TopPLogitsWarper). overwrite: allow ``logits`` (fp32) to be overwritten, saving a copy. Returns (rows,) int64
    token ids.
    """
    start = time.perf_counter()
    out = torch.empty(logits.shape[0], dtype=torch.long, device=logits.device)
    for rows, vals, idx, stage in _candidate_groups(logits, top_p, top_k, ladder, overwrite):
        out[rows] = draw_from_nucleus(vals, idx, top_p, u[rows], stage)
        if stats is not None:
            stats.add(stage, rows.numel())
    if stats is not None:
        stats.seconds += time.perf_counter() - start
    return out


def fast_nucleus_mask(logits: torch.Tensor, top_p: float, top_k: int | None = None,
                      ladder: tuple[int, ...] = K_LADDER) -> torch.Tensor:
    """The kept set of ``nucleus_sample``'s code path as a (rows, V) boolean mask (for tests and inspection)."""
    mask = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    for rows, vals, idx, _ in _candidate_groups(logits, top_p, top_k, ladder):
        keep = keep_mask(vals, top_p)
        mask[rows] = torch.zeros((rows.numel(), logits.shape[1]), dtype=torch.bool, device=logits.device).scatter(
            -1, idx, keep)
    return mask
