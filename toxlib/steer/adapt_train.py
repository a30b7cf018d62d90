"""Continued pretraining itself, without caching (``toxlib.steer.adapt`` caches): the document layout, ATCON's
attribute draw, LoRA (or full fine-tuning), the batches and the optimiser loop.

In: a base ``LanguageModel``, the labelled corpus (``text``, ``toxic`` 0/1) and an ``AdaptConfig``
(``toxlib.steer.adapt_key``), with CPU threads and the device. Out: ``train``'s (merged transformers model in eval
mode, float32, on the training device; tokenizer, with the attribute tokens for ATCON; metadata dict: losses, steps,
tokens, time, machine). ``adapted_tokenizer`` gives the tokenizer training leaves without training.

Document layout: the model's start token (``lm.start_token``), then the attribute token (ATCON), then the text's
tokens, truncated to ``max_tokens``; the loss is the causal LM loss on the text tokens only (start token, attribute
token and padding masked).
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from dataclasses import asdict

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import quiet_peft, tqdm
from toxlib.models.batching import bucketed_batches
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.device import configure_cpu_threads
from toxlib.models.schedule import linear_warmup_decay
from toxlib.steer.adapt_key import (
    ATTRIBUTE_TOKENS,
    RECIPE_VERSION,
    AdaptConfig,
    check_training_corpus,
    corpus_sha256,
    training_device,
)


def adapted_tokenizer(lm, method: str):
    """A copy of ``lm``'s tokenizer as adaptation by ``method`` leaves it: for ATCON, with the attribute tokens added
    as special tokens (ids after the base vocabulary, in ``ATTRIBUTE_TOKENS`` order). Training saves this tokenizer
    beside the weights; an adapted model uses it without training."""
    tokenizer = copy.deepcopy(lm.tokenizer)
    if method == "atcon":
        tokenizer.add_tokens(list(ATTRIBUTE_TOKENS.values()), special_tokens=True)
    return tokenizer


@contextlib.contextmanager
def quiet_transformers():
    """No transformers progress bars (one per save and load of a local folder) and no info about the mean
    initialisation of new embedding rows (``toxlib.steer.adapt``'s docstring states it)."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def document_ids(tokenizer, start_id: int, text: str, attribute: str | None, max_tokens: int) -> tuple[list[int], int]:
    """(ids, n_prefix): start token, optional attribute token, then the text's tokens (no special tokens of the
    tokenizer's own), truncated to ``max_tokens``; n_prefix is the count of leading tokens not trained on
    (start and attribute)."""
    prefix = [start_id] + ([tokenizer.convert_tokens_to_ids(attribute)] if attribute else [])
    body = tokenizer(text, add_special_tokens=False).input_ids
    return (prefix + body)[:max_tokens], len(prefix)


def _attribute_draw(corpus: pd.DataFrame, config: AdaptConfig) -> list[str | None]:
    """The attribute token of every row (None: no token): ATCON tags a seeded random share of the rows."""
    if config.method != "atcon":
        return [None] * len(corpus)
    n_tagged = round(config.atcon_fraction * len(corpus))
    tagged = set(np.random.default_rng(config.seed).choice(len(corpus), size=n_tagged, replace=False).tolist())
    return [ATTRIBUTE_TOKENS[int(y)] if i in tagged else None for i, y in enumerate(corpus["toxic"])]


def train(lm, corpus: pd.DataFrame, config: AdaptConfig = AdaptConfig(), progress: bool = True,
          threads: int | None = None, device: str | torch.device | None = None):
    """Continued pretraining without caching (``adapt`` caches), on ``training_device(lm, device)``. Returns (merged
    transformers model in eval mode, float32, on that device; tokenizer, with the attribute tokens for ATCON;
    metadata dict)."""
    import transformers

    check_training_corpus(corpus)
    where = training_device(lm, device)
    if where.type == "cpu":
        configure_cpu_threads(threads)
    torch.manual_seed(config.seed)
    tokenizer = adapted_tokenizer(lm, config.method)
    model = copy.deepcopy(lm.model).float().to(where)
    new_ids = []
    if config.method == "atcon":
        new_ids = [tokenizer.convert_tokens_to_ids(t) for t in ATTRIBUTE_TOKENS.values()]
        if len(tokenizer) > model.get_input_embeddings().weight.shape[0]:
            with quiet_transformers():
                model.resize_token_embeddings(len(tokenizer))
    model = _trainable(model, config, new_ids)

    start_id = tokenizer.convert_tokens_to_ids(lm.start_token)
    attributes = _attribute_draw(corpus, config)
    docs = [document_ids(tokenizer, start_id, str(t), a, config.max_tokens)
            for t, a in zip(corpus["text"], attributes)]
    docs = [d for d in docs if len(d[0]) > d[1]]  # an empty text has no token to train on
    if not docs:
        raise ValueError("no document of the corpus has a text token")
    per_epoch = math.ceil(len(docs) / config.batch_size)
    steps = config.max_steps or per_epoch
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    warm = max(1, round(config.warmup * steps))
    schedule = linear_warmup_decay(optimizer, warm, steps)
    generator = torch.Generator().manual_seed(config.seed)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    losses, tokens_seen, target_tokens, epochs = [], 0, 0, 0
    model.train()
    started = time.perf_counter()
    bar = tqdm(total=steps, disable=not progress, unit="step",
               desc=f"{config.method} {lm.name}")
    batches = []
    while len(losses) < steps:
        if not batches:
            batches = bucketed_batches([len(d[0]) for d in docs], config.batch_size, generator)
            epochs += 1
        input_ids, attention, labels = _collate([docs[i] for i in batches.pop(0)], pad, where)
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        tokens_seen += int(attention.sum())
        target_tokens += int((labels[:, 1:] != -100).sum())
        bar.update()
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    bar.close()
    seconds = time.perf_counter() - started
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    tenth = max(1, len(losses) // 10)
    meta = {
        "version": RECIPE_VERSION, "method": config.method, "config": asdict(config),
        "base_model": lm.name, "base_weights_id": lm.weights_id, "start_token": lm.start_token,
        "corpus_size": len(corpus), "corpus_sha256": corpus_sha256(corpus),
        "corpus_toxic": int(corpus["toxic"].astype(int).sum()),
        "attribute_tokens": {t: tokenizer.convert_tokens_to_ids(t) for t in ATTRIBUTE_TOKENS.values()}
        if config.method == "atcon" else None,
        "documents_trained": len(docs), "documents_with_attribute": sum(a is not None for a in attributes),
        "steps": len(losses), "epochs": round(len(losses) / per_epoch, 3), "tokens_seen": tokens_seen,
        "target_tokens": target_tokens, "train_seconds": round(seconds, 1),
        "seconds_per_step": round(seconds / len(losses), 3), "tokens_per_second": round(tokens_seen / seconds, 1),
        "loss_first_10pct": float(np.mean(losses[:tenth])), "loss_last_10pct": float(np.mean(losses[-tenth:])),
        "loss_mean": float(np.mean(losses)), "loss_final": losses[-1],
        "trainable_params": sum(p.numel() for p in params), "threads": torch.get_num_threads(),
        "device": str(where), "cpu": describe_cpu(), "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    return model.eval(), tokenizer, meta


def _trainable(model, config: AdaptConfig, new_ids: list[int]):
    """Full fine-tuning (lora_r 0) returns the model as is; else a peft LoRA model on every linear layer of the
    blocks (not the LM head), with the new token rows trainable."""
    if config.lora_r == 0:
        return model
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=0.0, target_modules="all-linear",
                      trainable_token_indices=new_ids or None, task_type="CAUSAL_LM")
    with quiet_peft():
        return get_peft_model(model, lora)


def _collate(docs: list[tuple[list[int], int]], pad: int, device) -> tuple[torch.Tensor, ...]:
    """Right-padded (input_ids, attention_mask, labels); labels are -100 on padding and on each document's
    prefix (start and attribute tokens)."""
    width = max(len(ids) for ids, _ in docs)
    input_ids = torch.full((len(docs), width), pad, dtype=torch.long)
    attention = torch.zeros((len(docs), width), dtype=torch.long)
    labels = torch.full((len(docs), width), -100, dtype=torch.long)
    for row, (ids, n_prefix) in enumerate(docs):
        input_ids[row, :len(ids)] = torch.tensor(ids)
        attention[row, :len(ids)] = 1
        labels[row, n_prefix:len(ids)] = torch.tensor(ids[n_prefix:], dtype=torch.long)
    return input_ids.to(device), attention.to(device), labels.to(device)
