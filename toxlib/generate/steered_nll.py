"""Teacher-forced NLL of texts under a *steered* model: what a steering makes of the model's distribution, scored
through the generation engine (its prefill, key/value cache and the steering's logits processors), so it is the
distribution ``generate`` samples from. Used for the perplexity column of the detoxification chapter (Table 10).

Columns of every result: those of ``toxlib.models.perplexity.sentence_nll`` (text, n_tokens, nll_sum, perplexity).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import tqdm
from toxlib.executors import RayExecutor, blocks_of, resolve_executor
from toxlib.executors.blocks import run_blocks, workers_for
from toxlib.generate.api import encode_prompt
from toxlib.generate.engine import call_optional, prefill
from toxlib.generate.kv_cache import cache_argument
from toxlib.generate.steering import Steering
from toxlib.models.batching import companions
from toxlib.models.perplexity import describes, model_key, score_table, through_store
from toxlib.models.spec import ModelSpec
from toxlib.store.cache import LMScoreStore
from toxlib.store.keys import stable_hash


def steered_nll_key(lm, steering=None, batch_size: int = 32) -> str:
    """The cache key of a model's NLLs under a steering: "steered-nll-v2|<weights>|<dtype>|<steering config hash
    [:16]>|batch<n>" (the record's key too, which the audit rebuilds)."""
    config = None if steering is None else steering.config()
    return f"{model_key(lm, 'steered-nll-v2')}|{stable_hash(config)[:16]}|batch{batch_size}"


def cached_steered_nll(lm, texts: list[str], steering=None, batch_size: int = 32, cache: LMScoreStore | bool = True,
                       progress: bool = False, executor=None) -> pd.DataFrame:
    """``steered_nll`` with a per-(model, steering, sentence) cache, so a re-run scores only sentences it has not
    seen. The key holds the model's weights and dtype, the steering's ``config()`` (which names its learned
    weights by hash) and ``batch_size`` (PPLM's gradient steps run in float32, where a batch's size can move the
    last bits). Returns the columns of ``sentence_nll``, one row per text, in order."""
    config = None if steering is None else steering.config()
    key = steered_nll_key(lm, steering, batch_size)

    def score_missing(todo):
        part = steered_nll(lm, todo, steering, batch_size=batch_size, progress=progress, executor=executor)
        yield list(zip(todo, part["n_tokens"].astype(int).tolist(), part["nll_sum"].astype(float).tolist()))

    return through_store(cache, key, texts, score_missing, None, describes(lm, steering=config))




@torch.inference_mode()
def steered_nll(lm, texts: list[str], steering=None, batch_size: int = 32, progress: bool = False,
                executor=None) -> pd.DataFrame:
    """Per-text NLL under a *steered* model, teacher forced: what the steering makes of the model's distribution.

    The context is the unprompted prompt as generation encodes it (``steering.transform_prompt("")``: the start
    token, or e.g. an attribute token); each token of the text (``add_special_tokens=False``) is then scored from
    the logits after the steering's processors, step by step, with the processors' batch hooks called as in
    generation. Without steering this equals ``sentence_nll`` (tested), and a stateful processor that changes
    nothing (Self-Debiasing with λ = 0, PPLM with step size 0) gives it too. A token the steering forbids gets an
    infinite NLL. batch_size: texts decoded together (PPLM's cost grows with it slowly: its passes are bound by
    reading the weights); progress: a bar over batches. executor: None (``TOXLIB_EXECUTOR``, default "local"),
    "local", "ray" or a ``toxlib.executors.RayExecutor``: with Ray, blocks of whole batches (in the same length
    order) run in actors that load the model once, so the values are a local run's. Returns the columns of
    ``sentence_nll``, one row per text, in order.
    """
    ray = resolve_executor(executor)
    if ray is not None:
        return _steered_nll_on_ray(lm, list(texts), steering, batch_size, ray)
    steering = steering or Steering()
    context = encode_prompt(lm, steering.transform_prompt(""))
    processors = steering.logits_processors(lm)
    start = lm.start_ids
    targets = []
    for t in texts:
        ids = lm.tokenizer(t, add_special_tokens=False).input_ids
        targets.append(ids[len(start):] if ids[:len(start)] == start else ids)
    order = np.argsort([len(t) for t in targets], kind="stable")
    nll = np.zeros(len(texts))
    count = np.array([len(t) for t in targets])
    for b in tqdm(range(0, len(texts), batch_size), disable=not progress, desc=f"steered NLL {lm.name}"):
        own = order[b:b + batch_size]
        width = max(len(targets[r]) for r in own)
        if width == 0:
            continue
        rows = np.resize(own, len(own) * companions(len(own)))  # too few rows: copies beside them, dropped below
        target = torch.tensor([targets[r] + [targets[r][-1] if targets[r] else 0] * (width - len(targets[r]))
                               for r in rows], device=lm.device)
        live = torch.tensor([[s < len(targets[r]) for s in range(width)] for r in rows], device=lm.device)
        logits, cache, ids, mask, position = prefill(lm.model, [context] * len(rows), lm.pad_id, reserve=width)
        position = position[:, -1:]
        call_optional(processors, "start_batch", ids, mask, 1)
        total = torch.zeros(len(rows), dtype=torch.float64, device=lm.device)
        for step in range(width):
            scores = logits.float()
            for proc in processors:
                scores = proc(ids, scores)
            token = target[:, step]
            step_nll = -torch.log_softmax(scores.double(), -1).gather(-1, token[:, None]).squeeze(-1)
            total += torch.where(live[:, step], step_nll, torch.zeros_like(step_nll))
            if step == width - 1:
                break
            ids = torch.cat([ids, token[:, None]], 1)
            mask = torch.cat([mask, torch.ones_like(token)[:, None]], 1)
            position = position + 1
            logits = lm.model(input_ids=token[:, None], attention_mask=mask, position_ids=position,
                              **cache_argument(lm.model, cache), use_cache=True).logits[:, -1]
        nll[own] = total[:len(own)].cpu().numpy()
    return score_table(texts, count, nll)


@dataclass
class SteeredNLLJob:
    """``steered_nll`` of a block of texts on a Ray actor: rows (text, n_tokens, nll_sum)."""

    model: ModelSpec
    steering: Steering | None
    batch_size: int

    def loaded_from(self):
        return self.model

    def load(self, device: str, threads: int | None):
        return self.model.load(device, threads)

    def run(self, lm, texts: list[str]) -> list[tuple]:
        part = steered_nll(lm, texts, self.steering, self.batch_size)
        return list(zip(part["text"], part["n_tokens"].astype(int).tolist(), part["nll_sum"].astype(float).tolist()))


def _steered_nll_on_ray(lm, texts: list[str], steering, batch_size: int, executor: RayExecutor) -> pd.DataFrame:
    """``steered_nll`` on Ray. The texts are put in the order a local call batches them (by token count, stable)
    and cut into blocks of whole batches, so every batch holds the texts it holds locally and the values are the
    same to the bit."""
    start = lm.start_ids
    lengths = []
    for t in texts:
        ids = lm.tokenizer(t, add_special_tokens=False).input_ids
        lengths.append(len(ids) - len(start) if ids[:len(start)] == start else len(ids))
    order = np.argsort(lengths, kind="stable")
    workers = workers_for(executor, max(1, len(texts)))
    batches = -(-len(texts) // batch_size)
    per_block = executor.block_size or batch_size * max(1, -(-batches // (4 * workers)))
    per_block = max(batch_size, per_block - per_block % batch_size)  # whole batches only
    blocks = blocks_of([int(i) for i in order], per_block)
    done = {}
    job = SteeredNLLJob(ModelSpec.of(lm), steering, batch_size)
    for _, rows in run_blocks(job, [[texts[i] for i in b] for b in blocks], executor, what=f"steered NLL {lm.name}"):
        done.update({t: (n, v) for t, n, v in rows})
    return score_table(texts, np.array([done[t][0] for t in texts], dtype=int),
                       np.array([done[t][1] for t in texts], dtype=float))
