"""Sentence log-likelihood and perplexity: causal LMs (``sentence_nll``), masked LMs (``pseudo_nll``), cached
per (model, sentence) (``cached_nll``).

Start-token handling: a sentence is scored from the model's start token, so its first word is predicted too.
Gemma's tokenizer already puts <bos> first; SmolLM2's adds nothing, so <|endoftext|> is put first; for other
models the start token is ``lm.start_token`` (GPT-2: <|endoftext|>). The start token itself is never scored.
Batches hold sentences of one token count (no padding): in bf16, padding a batch changes the logits of its real
tokens (see ``toxlib.models.batching``), so a sentence's score would depend on which sentences shared its batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import tqdm
from toxlib.executors import resolve_executor
from toxlib.executors.blocks import chunked_rows
from toxlib.models.batching import MIN_ROWS, companions, length_batches, packs, pad, shifted_exp
from toxlib.models.device import free_memory, kernel_key
from toxlib.models.gpu_memory import pass_tokens
from toxlib.models.length_groups import can_share_a_pass, hidden_states
from toxlib.models.lm_head import head_logits
from toxlib.models.loading import text_config
from toxlib.models.spec import ModelSpec
from toxlib.store.cache import LMScoreStore

#: Bump a version when the computation changes, so cached scores are not reused across versions.
# causal v3: equal-length batches, row sums; v4: no pass or head chunk of fewer than MIN_ROWS rows
METHOD_VERSIONS = {"causal": "causal-nll-v4", "masked": "pseudo-nll-v3"}


def with_start(lm, text: str) -> list[int]:
    """A text's token ids with the model's start token first, as every causal score here reads it."""
    ids = lm.tokenizer(text).input_ids
    start = lm.start_ids
    return ids if ids[: len(start)] == start else start + ids


def _token_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """-log softmax(logits)[target] per row. logits: (N, V), overwritten (exp computed in place to save memory);
    targets: (N,). Returns (N,) float64."""
    logits = logits.float()
    target_logit = logits.gather(-1, targets[:, None]).squeeze(-1).double()
    _, total, peak = shifted_exp(logits, inplace=True)
    return total.log() + peak - target_logit


def score_table(texts: list[str], n_tokens: np.ndarray, nll_sum: np.ndarray) -> pd.DataFrame:
    """The scoring functions' output: text, n_tokens, nll_sum, perplexity = exp(nll_sum / n_tokens)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        perplexity = np.exp(nll_sum / n_tokens)
    return pd.DataFrame({"text": texts, "n_tokens": n_tokens, "nll_sum": nll_sum, "perplexity": perplexity})


def default_batch_tokens(lm) -> int:
    """Tokens per forward pass where a pass keeps full logits (``pseudo_nll``): logits of about 512 MiB (fp32),
    e.g. ~2,700 tokens for a 49K vocabulary, ~500 for Gemma's 262K."""
    return max(64, (512 << 20) // (4 * len(lm.tokenizer)))


#: Tokens per forward pass of ``sentence_nll``'s decoder (it keeps hidden states, not logits).
SENTENCE_BATCH_TOKENS = 4096
#: Rows per LM-head matmul in ``head_nll``: its bf16 logits are rows x vocabulary (128 MiB for Gemma's 262,144).
HEAD_ROWS = 256
#: fp32 logits per pass of ``head_nll``'s log-sum-exp: small enough to stay in the CPU's cache between the cast,
#: the max, the exponentials and the sum, instead of streaming each pass through memory.
SOFTMAX_CHUNK_BYTES = 4 << 20


def head_chunks(device, vocab: int, free_bytes: int | None = None) -> tuple[int, int]:
    """(rows per LM-head matmul, rows per log-sum-exp pass) of ``head_nll`` on ``device``: on a CPU ``HEAD_ROWS``
    and ``SOFTMAX_CHUNK_BYTES`` of float32 logits (cache-sized); on a GPU one chunk for both, as many rows as a
    tenth of ``free_bytes`` holds in float32 logits and their exponentials (default: the GPU's free memory now),
    since there each chunk is a handful of kernel launches and the host issues them one by one."""
    if torch.device(device).type == "cpu":
        return HEAD_ROWS, max(1, SOFTMAX_CHUNK_BYTES // (4 * vocab))
    free = free_memory(device) if free_bytes is None else free_bytes
    rows = max(HEAD_ROWS, free // 10 // (8 * vocab))
    return rows, rows


def head_nll(model, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """-log softmax(LM head(hidden))[target] per row, the vocabulary's logits made a chunk of rows at a time.

    model: a transformers causal LM (its ``get_output_embeddings()`` and ``final_logit_softcapping``, if any, are
    applied as its forward does). hidden: (N, H) final hidden states in the model's dtype; targets: (N,) int64.
    Returns (N,) float64. The head runs ``head_chunks``' rows at a time and the log-sum-exp over its chunks of fp32
    logits, instead of materialising N x V logits. On a CPU a row's value depends on that row alone (the head's
    matmul gives a row the same bits whatever the rows beside it, from ``MIN_ROWS`` rows up; tested), so the chunk
    sizes change the speed, not the results: no chunk has fewer than ``MIN_ROWS`` rows (a short last chunk joins
    the one before; fewer rows in all are scored beside their copies).
    """
    n = len(targets)
    if n < MIN_ROWS:
        copies = companions(n)
        return head_nll(model, hidden.repeat(copies, 1), targets.repeat(copies))[:n]
    head = model.get_output_embeddings()
    cap = getattr(text_config(model), "final_logit_softcapping", None)
    head_rows, rows = head_chunks(hidden.device, head.out_features)
    out = torch.empty(n, dtype=torch.float64, device=hidden.device)
    starts = list(range(0, n, max(head_rows, MIN_ROWS)))
    if len(starts) > 1 and n - starts[-1] < MIN_ROWS:
        starts.pop()  # the short remainder joins the chunk before it
    for s, end in zip(starts, starts[1:] + [n]):
        logits = head_logits(head, hidden[s:end])
        if cap is not None:
            logits = torch.tanh(logits / cap) * cap
        for t in range(0, len(logits), rows):
            part = logits[t:t + rows]
            out[s + t:s + t + len(part)] = _token_nll(part, targets[s + t:s + t + len(part)])
    return out


@torch.inference_mode()
def sentence_nll(lm, texts: list[str], batch_tokens: int | None = None, progress: bool = False) -> pd.DataFrame:
    """Per text: n_tokens (tokens scored, start token excluded), nll_sum (natural-log negative log-likelihood,
    summed) and perplexity = exp(nll_sum / n_tokens). One row per input text, in order.

    Texts of equal token count are batched together, up to ``batch_tokens`` tokens (default
    ``SENTENCE_BATCH_TOKENS`` on a CPU; on a GPU as many as its free memory holds, ``toxlib.models.gpu_memory``'s
    ``pass_tokens``): no padding, so a text's score is the same whatever texts share its batch (see
    ``toxlib.models.batching``). Batches of several lengths share one decoder pass, up to ``batch_tokens`` in all, each
    length attending on its own (``toxlib.models.length_groups``: bitwise the values of one pass per length, with
    larger matmuls). The decoder returns hidden states and ``head_nll`` turns only the scored positions into
    log-probabilities, a chunk at a time, instead of materialising every position's logits. The sums stay on the
    model's device until every pass is done (on a GPU, one read-back instead of one per pass).
    """

    encoded = [with_start(lm, t) for t in texts]
    budget = batch_tokens or default_pass_tokens(lm)
    # nothing after the start token: n_tokens 0, perplexity NaN
    batches = [b for b in length_batches([len(e) for e in encoded], budget) if len(encoded[b[0]]) >= 2]
    nll = np.zeros(len(texts))
    count = np.zeros(len(texts), dtype=int)
    sums = []  # (rows, (rows,) float64 on the model's device) per batch, read back at the end
    passes = packs(batches, [len(b) * len(encoded[b[0]]) for b in batches], budget,
                   [can_share_a_pass(lm.model, len(encoded[b[0]])) for b in batches])
    for pack in tqdm(passes, disable=not progress, desc=f"perplexity {lm.name}", unit="pass"):
        ids = [torch.tensor([encoded[r] for r in rows], device=lm.device) for rows in pack]  # (B, L) each
        if sum(g.numel() for g in ids) < MIN_ROWS:  # one short text: too few rows take other kernels
            hidden = [hidden_states(lm.model, [ids[0].repeat(companions(ids[0].numel()), 1)])[0][:len(ids[0])]]
        else:
            hidden = hidden_states(lm.model, ids)
        token_nll = head_nll(lm.model, torch.cat([h[:, :-1].reshape(-1, h.shape[-1]) for h in hidden]),
                             torch.cat([g[:, 1:].reshape(-1) for g in ids]))
        per_text = token_nll.split([g[:, 1:].numel() for g in ids])
        for rows, g, part in zip(pack, ids, per_text):
            sums.append((rows, part.view(len(rows), -1).sum(-1)))
            count[rows] = g.shape[1] - 1
    if sums:
        values = torch.cat([s for _, s in sums]).cpu().numpy()
        nll[np.concatenate([rows for rows, _ in sums])] = values
    return score_table(texts, count, nll)


def default_pass_tokens(lm) -> int:
    """Tokens per decoder pass of ``sentence_nll``: ``SENTENCE_BATCH_TOKENS`` on a CPU; on a GPU what its free
    memory holds (``toxlib.models.gpu_memory.pass_tokens``)."""
    if lm.device.type != "cuda":
        return SENTENCE_BATCH_TOKENS
    return pass_tokens(lm.model.config, lm.dtype, free_memory(lm.device))


@torch.inference_mode()
def pseudo_nll(lm, texts: list[str], batch_tokens: int | None = None, progress: bool = False) -> pd.DataFrame:
    """Pseudo-log-likelihood of each text under a masked LM (Salazar et al., 2020): every token that is not a
    special token is replaced in turn by the tokenizer's own mask token and scored from its masked copy.

    Returns the columns of ``sentence_nll``; perplexity is the pseudo-perplexity exp(nll_sum / n_tokens).
    (The SafeNLP reference hard-codes mask id 103, BERT-uncased's [MASK]; this uses ``tokenizer.mask_token_id``.)
    """
    tok = lm.tokenizer
    if tok.mask_token_id is None:
        raise ValueError(f"{lm.name}'s tokenizer has no mask token: pseudo-perplexity needs a masked LM")
    special = set(tok.all_special_ids)
    jobs = []  # (text index, position, token ids with that position masked, original token)
    for i, text in enumerate(texts):
        ids = tok(text).input_ids
        jobs.extend((i, pos, ids[:pos] + [tok.mask_token_id] + ids[pos + 1:], t)
                    for pos, t in enumerate(ids) if t not in special)
    nll = np.zeros(len(texts))
    count = np.zeros(len(texts), dtype=int)
    batches = length_batches([len(job[2]) for job in jobs], batch_tokens or default_batch_tokens(lm))
    for batch in tqdm(batches, disable=not progress, desc=f"pseudo-perplexity {lm.name}", unit="batch"):
        part = [jobs[j] for j in batch]
        ids, mask = pad([masked for _, _, masked, _ in part], tok.pad_token_id or 0, lm.device, side="right")
        positions = torch.tensor([pos for _, pos, _, _ in part], device=lm.device)
        targets = torch.tensor([t for _, _, _, t in part], device=lm.device)
        logits = lm.model(input_ids=ids, attention_mask=mask).logits
        token_nll = _token_nll(logits[torch.arange(len(part), device=lm.device), positions], targets).cpu()
        for (i, _, _, _), v in zip(part, token_nll.tolist()):
            nll[i] += v
            count[i] += 1
    return score_table(texts, count, nll)


def model_key(lm, method: str) -> str:
    """Cache key of a model's sentence scores: method (with its version), weights, dtype, and on a GPU the device
    class (``toxlib.models.device.kernel_key``: "|cuda"; nothing on a CPU, whose keys the record holds)."""
    kernels = kernel_key(lm.device)
    return f"{method}|{lm.weights_id}|{str(lm.dtype).removeprefix('torch.')}" + (f"|{kernels}" if kernels else "")


def nll_rows(lm, texts: list[str], method: str) -> list[tuple[str, int, float]]:
    """(text, n_tokens, nll_sum) per text from ``sentence_nll`` (method "causal") or ``pseudo_nll`` ("masked")."""
    part = {"causal": sentence_nll, "masked": pseudo_nll}[method](lm, texts)
    return list(zip(part["text"], part["n_tokens"].astype(int).tolist(), part["nll_sum"].astype(float).tolist()))


@dataclass
class NLLJob:
    """Sentence NLLs of a block of texts on a Ray actor (``sentence_nll`` or ``pseudo_nll``, see
    ``toxlib.executors.blocks``): rows (text, n_tokens, nll_sum)."""

    model: ModelSpec
    method: str

    def loaded_from(self):
        return self.model

    def load(self, device: str, threads: int | None):
        return self.model.load(device, threads)

    def run(self, lm, texts: list[str]) -> list[tuple]:
        return nll_rows(lm, texts, self.method)


def nll_chunks(lm, texts: list[str], method: str, chunk: int, executor=None):
    """Rows (text, n_tokens, nll_sum) of ``texts`` chunk by chunk: locally ``chunk`` texts at a time, in order, or
    on Ray (the same chunks, or smaller blocks) in finishing order."""
    job = NLLJob(ModelSpec.of(lm), method) if resolve_executor(executor) is not None else None
    for _, rows in chunked_rows(texts, chunk, lambda part: nll_rows(lm, part, method), job, executor,
                                what=f"{method} NLL {lm.name}"):
        yield rows


def cached_nll(lm, texts: list[str], method: str = "causal", cache: LMScoreStore | bool = True,
               chunk: int = 2048, progress: bool = True, executor=None) -> pd.DataFrame:
    """``sentence_nll`` (method "causal") or ``pseudo_nll`` (method "masked") with a per-(model, sentence) cache.

    Missing sentences are scored in chunks of ``chunk`` and each chunk is stored as it finishes, so an interrupted
    run resumes. executor: None (``TOXLIB_EXECUTOR``, default "local"), "local", "ray" or a
    ``toxlib.executors.RayExecutor``: with Ray, blocks of at most ``chunk`` sentences are scored by actors that each
    load the model once, and the driver stores them in the same cache. Returns the same columns as
    ``sentence_nll``, one row per input text, in order.
    """
    if method not in METHOD_VERSIONS:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHOD_VERSIONS)}")
    return through_store(cache, model_key(lm, METHOD_VERSIONS[method]), texts,
                          lambda todo: nll_chunks(lm, todo, method, chunk, executor),
                          progress and f"{method} NLL {lm.name}", describes(lm, method=method))


def describes(lm, **settings) -> dict:
    """What an NLL key stands for, for the record's provenance: the model's name (the key holds only its weights),
    weights, precision and ``settings``."""
    kernels = kernel_key(lm.device)
    return {"model": lm.name, "weights": lm.weights_id, "dtype": str(lm.dtype).removeprefix("torch."),
            **({"kernels": kernels} if kernels else {}), **settings}


def through_store(cache: LMScoreStore | bool, key: str, texts: list[str], score_missing, desc,
                  config: dict | None = None) -> pd.DataFrame:
    """The cached scorers' common path: look ``texts`` up under ``key``, score the missing distinct ones with
    ``score_missing(todo)`` (an iterable of row lists (text, n_tokens, nll_sum)), store each list as it arrives
    (an interrupted run resumes), and return the columns of ``sentence_nll`` for ``texts`` in order. cache: True
    (the default store, closed afterwards), an ``LMScoreStore``, or False/None (no store). desc: a progress bar's
    label, or a false value for none. config: what the key stands for (``describes``), kept with the rows.
    """
    store = LMScoreStore() if cache is True else (cache or None)
    try:
        if store is not None and config is not None:
            store.describe(key, config)
        unique = list(dict.fromkeys(texts))
        done = store.lookup(key, unique) if store is not None else {}
        todo = [t for t in unique if t not in done]
        bar = tqdm(total=len(unique), initial=len(unique) - len(todo), disable=not desc, unit="sentence",
                   desc=desc or None)
        for rows in score_missing(todo) if todo else ():
            if store is not None:
                store.add(key, rows)
            done.update({t: (n, v) for t, n, v in rows})
            bar.update(len(rows))
        bar.close()
    finally:
        if cache is True:
            store.close()
    return score_table(texts, np.array([done[t][0] for t in texts], dtype=int),
                        np.array([done[t][1] for t in texts], dtype=float))


def corpus_perplexity(scores: pd.DataFrame) -> float:
    """Perplexity of a set of texts as one corpus: exp(total NLL / total tokens) over ``sentence_nll`` rows."""
    return float(np.exp(scores["nll_sum"].sum() / scores["n_tokens"].sum()))
