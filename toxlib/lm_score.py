"""Sentence log-likelihood and perplexity under a causal language model.

Start-token handling: a sentence is scored from the model's start token, so its first word is predicted too.
Gemma's tokenizer already puts <bos> first; SmolLM2's adds nothing, so <|endoftext|> is put first; for other
models the start token is ``lm.start_token`` (GPT-2: <|endoftext|>). The start token itself is never scored.
Batches are right padded: with causal attention a real token never sees the padding after it, so padding does
not change any sentence's score (tested).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm


def _with_start(lm, text: str) -> list[int]:
    ids = lm.tokenizer(text).input_ids
    start = lm.start_ids
    return ids if ids[: len(start)] == start else start + ids


def _token_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """-log softmax(logits)[target] per row. logits: (N, V), overwritten (exp computed in place to save memory);
    targets: (N,). Returns (N,) float64."""
    logits = logits.float()
    target_logit = logits.gather(-1, targets[:, None]).squeeze(-1).double()
    peak = logits.amax(-1, keepdim=True)
    lse = logits.sub_(peak).exp_().sum(-1).double().log() + peak.squeeze(-1).double()
    return lse - target_logit


def default_batch_tokens(lm) -> int:
    """Tokens scored per forward pass: logits of about 512 MiB (fp32), e.g. ~2,700 tokens for a 49K vocabulary,
    ~500 for Gemma's 262K."""
    return max(64, (512 << 20) // (4 * len(lm.tokenizer)))


@torch.inference_mode()
def sentence_nll(lm, texts: list[str], batch_tokens: int | None = None, progress: bool = False) -> pd.DataFrame:
    """Per text: n_tokens (tokens scored, start token excluded), nll_sum (natural-log negative log-likelihood,
    summed) and perplexity = exp(nll_sum / n_tokens). One row per input text, in order.

    Texts are sorted by length and batched up to ``batch_tokens`` padded tokens (default ``default_batch_tokens``).
    """
    encoded = [_with_start(lm, t) for t in texts]
    order = np.argsort([len(e) for e in encoded], kind="stable")  # similar lengths together: less padding
    budget = batch_tokens or default_batch_tokens(lm)
    batches, current = [], []
    for r in order:
        if current and (len(current) + 1) * len(encoded[r]) > budget:
            batches.append(current)
            current = []
        current.append(r)
    if current:
        batches.append(current)
    nll = np.zeros(len(texts))
    count = np.zeros(len(texts), dtype=int)
    pad = lm.pad_id if lm.pad_id is not None else 0
    for rows in tqdm(batches, disable=not progress, desc=f"perplexity {lm.name}", unit="batch"):
        width = max(len(encoded[r]) for r in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(encoded[r])] = torch.tensor(encoded[r])
            mask[i, : len(encoded[r])] = 1
        ids, mask = ids.to(lm.device), mask.to(lm.device)
        logits = lm.model(input_ids=ids, attention_mask=mask).logits[:, :-1]
        scored = mask[:, 1:].bool()
        token_nll = torch.zeros(scored.shape, dtype=torch.float64, device=lm.device)
        token_nll[scored] = _token_nll(logits[scored], ids[:, 1:][scored])
        nll[rows] = token_nll.sum(-1).cpu().numpy()
        count[rows] = scored.sum(-1).cpu().numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ppl = np.exp(nll / count)
    return pd.DataFrame({"text": texts, "n_tokens": count, "nll_sum": nll, "perplexity": ppl})


def corpus_perplexity(scores: pd.DataFrame) -> float:
    """Perplexity of a set of texts as one corpus: exp(total NLL / total tokens) over ``sentence_nll`` rows."""
    return float(np.exp(scores["nll_sum"].sum() / scores["n_tokens"].sum()))
