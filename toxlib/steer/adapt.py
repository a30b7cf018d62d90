"""Data-based detoxification (RealToxicityPrompts §5.1): continued pretraining of a language model on a corpus.

DAPT (domain-adaptive pretraining, Gururangan et al. 2020): continue pretraining on the non-toxic subset of a
balanced corpus (the paper's detoxifier) or on its toxic subset (the paper's reference). The caller passes the
subset to train on.

ATCON (attribute conditioning, Ficler & Goldberg 2017; Keskar et al. 2019): prepend ``<|toxic|>`` or
``<|nontoxic|>`` to (a random share of) the documents of the labelled corpus by their label and continue
pretraining; generation then prepends ``<|nontoxic|>`` to every prompt (``toxlib.steer.attribute``). The two
markers are new special tokens: added to the tokenizer, the embedding matrix resized (new rows initialised at the
mean of the old ones, transformers' ``mean_resizing``) and the new rows trained.

Document layout in training: the model's start token (its document start, ``lm.start_token``: SmolLM2's
<|endoftext|>, Gemma's <bos>), then the attribute token (ATCON), then the text's tokens, truncated to
``max_tokens``. So the first text token is learnt as the start of a document, the way unprompted generation
starts. The loss is the causal LM loss on the text tokens only (start token, attribute token and padding masked).

Recipe (``AdaptConfig``): LoRA on every linear layer of the transformer blocks (plus the new token rows for
ATCON), AdamW, linear warm-up and decay, length-bucketed batches, a fixed seed; the adapter is merged before saving,
so the saved folder is a plain transformers model that ``toxlib.models.load(folder)`` reads. The paper continued
pretraining GPT-2 on about 150K documents; on CPU the budget (``max_steps`` x ``batch_size`` x ``max_tokens``) is
a parameter and goes into the metadata.

Storage: the artefact cache (``toxlib.store.artefacts``), folder "adapted/<slug>-<method>-<key>" where the key hashes
the base model's weights_id, the method, the corpus (texts and labels, in order) and the config. ``training.json``
is written last into a temporary folder that is then renamed, so only finished trainings are ever found and reused.

Training waits until the weights are needed (``adapt``): the adapted model's rows are keyed by the training's
inputs, not its bytes, so a build whose rows of it all come from the sample record or the caches never trains.
Its tokenizer needs no training (``adapted_tokenizer``). The training's metadata (losses, steps, time) is the
recorded artefact "adapted/<folder name>.json" (``training_metadata``), so every machine shows the book's training
table where the book holds one: retrained on another CPU, the losses differ in their fifth digit.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import math
import re
import shutil
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import quiet_peft, tqdm
from toxlib.models import LanguageModel
from toxlib.models.batching import bucketed_batches
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.device import configure_cpu_threads, kernel_key, pick_device, pick_dtype
from toxlib.models.loading import TRAINING_FILE, adapted_weights_id, folder_model
from toxlib.models.schedule import linear_warmup_decay
from toxlib.store.artefacts import artefact_file, artefact_folder, cache_path
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


def corpus_sha256(corpus: pd.DataFrame) -> str:
    """sha256 of the corpus' (text, toxic) pairs in order (the order decides the batches, so it is hashed too)."""
    _check_corpus(corpus)
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


def adapted_dir(lm, corpus: pd.DataFrame, config: AdaptConfig, device: str | torch.device | None = None) -> Path:
    """The cache folder of this adaptation (``adapted_name``; it exists, with ``training.json`` inside, once
    training has finished)."""
    return cache_path(adapted_name(lm, corpus, config, device))


def adaptation_sha(lm, corpus: pd.DataFrame, config: AdaptConfig, device: str | torch.device | None = None) -> str:
    """sha256 of ``adaptation_key`` (``stable_hash``): names the cache folder; the adapted model's weights_id is
    ``toxlib.models.loading.adapted_weights_id`` of the same key."""
    return stable_hash(adaptation_key(lm, corpus, config, device))


def training_metadata(lm, corpus: pd.DataFrame, config: AdaptConfig, progress: bool = True,
                      threads: int | None = None, device: str | torch.device | None = None) -> dict:
    """The ``training.json`` of an adaptation (see ``adapt``), the recorded artefact "<adapted_name>.json"
    (``toxlib.store.artefacts``): the book's copy where it holds one, so every machine shows the same training for
    the recipe (retrained on another CPU, the losses differ in their fifth digit), else a copy of the trained
    folder's, training first (on ``threads``, on ``device``) when there is none. Rows a chapter computes beyond the
    book's come from the local training."""
    name = adapted_name(lm, corpus, config, device)

    def copy_of_trained(partial: Path) -> None:
        shutil.copyfile(_trained(name, lm, corpus, config, progress, threads, device) / META_FILE, partial)

    return json.loads(artefact_file(f"{name}.json", copy_of_trained, recorded=True).read_text())


def adapted_tokenizer(lm, method: str):
    """A copy of ``lm``'s tokenizer as adaptation by ``method`` leaves it: for ATCON, with the attribute tokens added
    as special tokens (ids after the base vocabulary, in ``ATTRIBUTE_TOKENS`` order). Training saves this tokenizer
    beside the weights; an adapted model uses it without training."""
    tokenizer = copy.deepcopy(lm.tokenizer)
    if method == "atcon":
        tokenizer.add_tokens(list(ATTRIBUTE_TOKENS.values()), special_tokens=True)
    return tokenizer


def adapt(lm, corpus: pd.DataFrame, config: AdaptConfig = AdaptConfig(), name: str | None = None,
          progress: bool = True, threads: int | None = None, dtype: str | torch.dtype | None = None,
          device: str | torch.device | None = None) -> LanguageModel:
    """``lm`` continued-pretrained on ``corpus`` (DAPT or ATCON), trained the first time its weights are used (or
    read from the cache folder a finished training left).

    lm: the base ``toxlib.models.LanguageModel`` (left untouched: training runs on a copy, in float32, on its device).
    corpus: DataFrame with columns ``text`` (str) and ``toxic`` (0/1). DAPT trains on every row as given (pass the
      non-toxic or the toxic subset); ATCON prepends ``<|toxic|>``/``<|nontoxic|>`` by ``toxic`` to a random
      ``config.atcon_fraction`` of the rows. The corpus must already be disjoint from the evaluation prompts.
    config: the recipe (``AdaptConfig``). name: the returned model's name (default ``default_name``).
    threads: CPU threads for training (default: the usable cores). dtype: precision of the returned model (default
      ``lm``'s; e.g. train from a float32 base and generate in bfloat16). device: where it trains (default ``lm``'s
      device; ``training_device``); the returned model generates on ``lm``'s.

    Returns a ``LanguageModel`` on ``lm``'s device and ``dtype`` with ``lm``'s start token and start note, the
    tokenizer ``adapted_tokenizer`` gives, and weights_id "adapted:<sha256 of adaptation_key>[:32]" (the training's
    inputs, so its cached and recorded rows are found on any CPU). Nothing is trained here: the first use of its
    ``.model`` trains into ``adapted_dir`` unless a finished training is there, so a chapter whose rows of this
    model all come from the sample record or the caches never trains (about 30 s per adaptation of the book's on
    2 CPU cores). ``training_metadata`` gives what the training recorded. Its ``architecture()`` needs the weights
    (there is no folder before training), so it trains too.
    """
    _check_corpus(corpus)
    corpus = corpus.copy()  # trained later: what the key names must be what is trained, whatever the caller does
    key = adaptation_key(lm, corpus, config, device)
    artefact = adapted_name(lm, corpus, config, device)
    target = pick_dtype(dtype or lm.dtype, lm.device)
    label = name or default_name(lm, corpus, config)

    def weights() -> torch.nn.Module:
        trained = _trained(artefact, lm, corpus, config, progress, threads, device)
        with _quiet_transformers():
            return folder_model(label, trained, target, "causal")

    adapted = LanguageModel(label, lm.device, target, adapted_weights_id(key), "local", weights,
                            lambda: adapted_tokenizer(lm, config.method), start_token=lm.start_token,
                            start_note=lm.start_note)
    budget = f"{config.max_steps} steps" if config.max_steps else "one pass"
    adapted.description = (f"{lm.description}, {config.method.upper()} on {len(corpus)} documents ({budget} of "
                           f"{config.batch_size} documents)")
    return adapted


_TRAINING = threading.Lock()  # one training at a time per process: two models of one recipe share its folder


def _trained(name: str, lm, corpus: pd.DataFrame, config: AdaptConfig, progress: bool,
             threads: int | None, device: str | torch.device | None = None) -> Path:
    """The cache folder of artefact ``name`` with a finished training in it (trained now unless one is there)."""
    def train_into(folder: Path) -> None:
        with _quiet_transformers():
            _train_into(folder, lm, corpus, config, progress, threads, device)

    with _TRAINING:
        return artefact_folder(name, train_into, done_file=META_FILE)


@contextlib.contextmanager
def _quiet_transformers():
    """No transformers progress bars (one per save and load of a local folder) and no info about the mean
    initialisation of new embedding rows (the module docstring states it)."""
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


def _train_into(folder: Path, lm, corpus, config, progress, threads, device=None) -> None:
    """Train (on ``device``) and save the model, its tokenizer and, last, ``training.json`` into ``folder`` (a
    temporary folder the artefact cache renames into place)."""
    model, tokenizer, meta = train(lm, corpus, config, progress, threads, device)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    meta["key"] = adaptation_key(lm, corpus, config, device)
    (folder / META_FILE).write_text(json.dumps(meta, indent=1))


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

    _check_corpus(corpus)
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
            with _quiet_transformers():
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


def _check_corpus(corpus) -> None:
    if not isinstance(corpus, pd.DataFrame) or not {"text", "toxic"} <= set(corpus.columns):
        raise ValueError("the corpus must be a DataFrame with columns 'text' and 'toxic' (0/1)")
    if not set(corpus["toxic"].astype(int)) <= {0, 1}:
        raise ValueError("the corpus' 'toxic' column must hold 0 or 1")
    if len(corpus) == 0:
        raise ValueError("the corpus is empty")
