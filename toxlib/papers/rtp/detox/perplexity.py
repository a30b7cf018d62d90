"""Perplexity of held-out text under each detoxification method (RealToxicityPrompts Appendix, Table 10).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.generate.steered_nll import cached_steered_nll


def perplexity_row(method: str, scores: pd.DataFrame, reference: pd.DataFrame | None = None) -> dict:
    """Perplexity of held-out text under one method, from ``steered_nll`` rows (text, n_tokens, nll_sum).

    Returns method; perplexity over the texts the method can produce (exp of total NLL / total tokens over rows
    with a finite NLL; NaN if any row failed); n_texts; n_impossible (infinite NLL: a token sequence the method
    forbids, e.g. a banned word); n_failed (NaN NLL); and, given ``reference`` (the same texts under the base
    model), ratio = this perplexity / the reference's, both over the texts finite under both, so WORD FILTER's
    ratio is not computed over fewer texts than its reference's."""
    nll, tokens = scores["nll_sum"].to_numpy(dtype=float), scores["n_tokens"].to_numpy(dtype=float)
    failed, impossible = np.isnan(nll), np.isinf(nll)
    ok = ~failed & ~impossible
    row = {"method": method, "perplexity": float(np.exp(nll[ok].sum() / tokens[ok].sum())) if not failed.any()
           else float("nan"), "n_texts": int(len(nll)), "n_impossible": int(impossible.sum()),
           "n_failed": int(failed.sum()), "ratio": float("nan")}
    if reference is not None:
        ref, ref_tokens = reference["nll_sum"].to_numpy(dtype=float), reference["n_tokens"].to_numpy(dtype=float)
        both = ok & np.isfinite(ref)
        if both.any() and not failed.any():
            row["ratio"] = float(np.exp(nll[both].sum() / tokens[both].sum()
                                        - ref[both].sum() / ref_tokens[both].sum()))
    return row


def perplexity_table(runs: dict, base, base32, texts: list[str], pplm=None, pplm_texts: int = 0) -> pd.DataFrame:
    """Rows of :func:`perplexity_row` for every method of ``runs`` ({method: (lm, steering)}) over ``texts``
    against ``base``, and, when ``pplm`` is given and ``pplm_texts`` > 0, for PPLM and its float32 base
    (``base32``) over the first ``pplm_texts`` texts (PPLM costs about 20 s per token here). Every value is
    cached (``cached_steered_nll``), so a re-run recomputes none."""

    reference = cached_steered_nll(base, texts)
    rows = [perplexity_row(method, cached_steered_nll(lm, texts, steering), reference)
            for method, (lm, steering) in runs.items()]
    few = texts[:pplm_texts]
    if pplm is not None and few:
        reference_few = cached_steered_nll(base32, few, batch_size=len(few))
        rows += [perplexity_row("base model (PPLM subset, fp32)", reference_few, reference_few),
                 perplexity_row("PPLM", cached_steered_nll(base32, few, pplm, batch_size=len(few)), reference_few)]
    return pd.DataFrame(rows)
