"""What decides an adaptation (``toxlib.steer.adapt``): its recipe (``AdaptConfig``, ``RECIPE_VERSION``), the
attribute tokens of ATCON, the corpus check and digest, and the key that names the trained folder.

In: a base ``LanguageModel``, the labelled corpus (a DataFrame with ``text`` and ``toxic`` 0/1) and an
``AdaptConfig``, with the device training runs on. Out: ``adaptation_key`` (a JSON-ready dict of everything that
decides the adapted weights: recipe version, base weights_id and dtype, method, corpus sha256 and size, config,
attribute tokens, a GPU's device class), its sha256 (``adaptation_sha``), the artefact name of the folder
("adapted/<base slug>-<method>-<key sha256[:16]>", ``adapted_name``) and the adapted model's default name
(``default_name``). Nothing here trains or touches the disk.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import torch

from toxlib.models.device import kernel_key, pick_device
from toxlib.models.weights_id import TRAINING_FILE
from toxlib.store.keys import stable_hash

#: Bump when the recipe (document layout, loss, optimiser) changes: it is part of every cache key.
RECIPE_VERSION = "adapt-1"
METHODS = ("dapt", "atcon")
TOXIC_TOKEN, NONTOXIC_TOKEN = "<|toxic|>", "<|nontoxic|>"
#: label (the corpus' ``toxic`` column) -> attribute token.
ATTRIBUTE_TOKENS = {1: TOXIC_TOKEN, 0: NONTOXIC_TOKEN}
META_FILE = TRAINING_FILE  # written last: a folder without it is not a finished training


@dataclass(frozen=True)
class AdaptConfig:
    """The recipe of one continued pretraining.

    method: "dapt" (train on the texts as given) or "atcon" (prepend an attribute token by label).
    max_steps: optimiser steps (None: one pass over the corpus); the corpus is reshuffled and repeated when the
      steps outrun it. batch_size: documents per step. max_tokens: tokens per document, start and attribute tokens
      included (longer documents are truncated).
    lr, weight_decay: AdamW; warmup: share of the steps with a linear warm-up, then linear decay to 0.
    lora_r: LoRA rank on every linear layer of the transformer blocks (0: full fine-tuning of every weight);
      lora_alpha: LoRA scaling numerator (the update is scaled by alpha / r).
    atcon_fraction: share of the documents (drawn at random with ``seed``) that get their attribute token; the
      others are trained on as plain documents. seed: batch order, LoRA init, new embedding rows, the ATCON draw.

    Cost on smollm2-135m, 2 CPU threads, RealToxicityPrompts-length documents (about 32 tokens, 270 per batch of
    8): 3.4 s per step (80 training tokens/s) on idle cores, 16-20 s per step when other jobs share them; the
    default 40 steps take about 2-3 minutes on idle cores.
    """

    method: str = "dapt"
    max_steps: int | None = 40
    batch_size: int = 8
    max_tokens: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.0
    warmup: float = 0.1
    lora_r: int = 16
    lora_alpha: int = 32
    atcon_fraction: float = 1.0
    seed: int = 0

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"unknown adaptation method {self.method!r}; known: {', '.join(METHODS)}")
        if not 0.0 <= self.atcon_fraction <= 1.0:
            raise ValueError(f"atcon_fraction must be in [0, 1], got {self.atcon_fraction}")
        if self.max_tokens < 3 or self.batch_size < 1 or (self.max_steps is not None and self.max_steps < 1):
            raise ValueError("max_tokens must be >= 3, batch_size and max_steps >= 1")


def check_training_corpus(corpus) -> None:
    """ValueError unless ``corpus`` is a non-empty DataFrame with columns ``text`` and ``toxic`` (0 or 1)."""
    if not isinstance(corpus, pd.DataFrame) or not {"text", "toxic"} <= set(corpus.columns):
        raise ValueError("the corpus must be a DataFrame with columns 'text' and 'toxic' (0/1)")
    if not set(corpus["toxic"].astype(int)) <= {0, 1}:
        raise ValueError("the corpus' 'toxic' column must hold 0 or 1")
    if len(corpus) == 0:
        raise ValueError("the corpus is empty")


def corpus_sha256(corpus: pd.DataFrame) -> str:
    """sha256 of the corpus' (text, toxic) pairs in order (the order decides the batches, so it is hashed too)."""
    check_training_corpus(corpus)
    pairs = [[str(t), int(y)] for t, y in zip(corpus["text"], corpus["toxic"])]
    return hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode("utf-8")).hexdigest()


def training_device(lm, device: str | torch.device | None = None) -> torch.device:
    """Where an adaptation of ``lm`` trains: ``device`` ("cpu", "cuda", ...; "auto": CUDA when available), or
    ``lm``'s own device when None."""
    return lm.device if device is None else pick_device(device)


def adaptation_key(lm, corpus: pd.DataFrame, config: AdaptConfig, device: str | torch.device | None = None) -> dict:
    """Everything that decides the adapted weights: recipe version, base weights_id and dtype (training starts
    from the base's weights as loaded: bf16-rounded ones differ from fp32), method, corpus sha256 and size, the
    config and the attribute tokens, and, for a training on a GPU (``training_device``), its device class
    (``toxlib.models.device.kernel_key``: a GPU's training is not a CPU's to the last digits; nothing on a CPU, so
    the sample record's keys stay). Its sha256 names the cache folder."""
    key = {"recipe": RECIPE_VERSION, "base_weights_id": lm.weights_id, "base_dtype": str(lm.dtype),
           "method": config.method,
           "corpus_sha256": corpus_sha256(corpus), "corpus_size": len(corpus), "config": asdict(config),
           "attribute_tokens": ATTRIBUTE_TOKENS if config.method == "atcon" else None}
    kernels = kernel_key(training_device(lm, device))
    return key | ({"training_kernels": kernels} if kernels else {})


def default_name(lm, corpus: pd.DataFrame, config: AdaptConfig) -> str:
    """"<base>+dapt-nontoxic", "<base>+dapt-toxic", "<base>+dapt-mixed" (by the corpus' labels) or "<base>+atcon"."""
    if config.method == "atcon":
        return f"{lm.name}+atcon"
    labels = set(corpus["toxic"].astype(int))
    return f"{lm.name}+dapt-{ {frozenset({0}): 'nontoxic', frozenset({1}): 'toxic'}.get(frozenset(labels), 'mixed')}"


def adapted_name(lm, corpus: pd.DataFrame, config: AdaptConfig, device: str | torch.device | None = None) -> str:
    """The artefact name of this adaptation's folder: "adapted/<base slug>-<method>-<key sha256[:16]>"."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(lm.name).name or "model")[:40]
    return f"adapted/{slug}-{config.method}-{adaptation_sha(lm, corpus, config, device)[:16]}"


def adaptation_sha(lm, corpus: pd.DataFrame, config: AdaptConfig, device: str | torch.device | None = None) -> str:
    """sha256 of ``adaptation_key`` (``stable_hash``): names the cache folder; the adapted model's weights_id is
    ``toxlib.models.weights_id.adapted_weights_id`` of the same key."""
    return stable_hash(adaptation_key(lm, corpus, config, device))
