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


@torch.inference_mode()
def sentence_nll(lm, texts: list[str], batch_size: int = 16, progress: bool = False) -> pd.DataFrame:
    """Per text: n_tokens (tokens scored, start token excluded), nll_sum (natural-log negative log-likelihood,
    summed) and perplexity = exp(nll_sum / n_tokens). One row per input text, in order."""
    encoded = [_with_start(lm, t) for t in texts]
    order = np.argsort([len(e) for e in encoded], kind="stable")  # similar lengths together: less padding
    nll = np.zeros(len(texts))
    count = np.zeros(len(texts), dtype=int)
    pad = lm.pad_id if lm.pad_id is not None else 0
    for start in tqdm(range(0, len(texts), batch_size), disable=not progress, desc=f"perplexity {lm.name}"):
        rows = order[start:start + batch_size]
        width = max(len(encoded[r]) for r in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(encoded[r])] = torch.tensor(encoded[r])
            mask[i, : len(encoded[r])] = 1
        ids, mask = ids.to(lm.device), mask.to(lm.device)
        logits = lm.model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
        target = ids[:, 1:].masked_fill(mask[:, 1:] == 0, -100)
        token_nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target, reduction="none",
                                                      ignore_index=-100)
        nll[rows] = token_nll.sum(-1).double().cpu().numpy()
        count[rows] = (target != -100).sum(-1).cpu().numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ppl = np.exp(nll / count)
    return pd.DataFrame({"text": texts, "n_tokens": count, "nll_sum": nll, "perplexity": ppl})


def corpus_perplexity(scores: pd.DataFrame) -> float:
    """Perplexity of a set of texts as one corpus: exp(total NLL / total tokens) over ``sentence_nll`` rows."""
    return float(np.exp(scores["nll_sum"].sum() / scores["n_tokens"].sum()))
