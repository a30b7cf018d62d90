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

This module keeps the trained model (``adapt``, ``adapted_dir``, ``training_metadata``); what decides it and names
its folder is ``toxlib.steer.adapt_key``, the training itself ``toxlib.steer.adapt_train``. In: a base
``LanguageModel``, the labelled corpus and an ``AdaptConfig``. Out: the adapted ``LanguageModel`` (trained on first
use of its weights), its cache folder, and the training's metadata dict.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pandas as pd
import torch

from toxlib.models import LanguageModel
from toxlib.models.device import pick_dtype
from toxlib.models.loading import folder_model
from toxlib.models.weights_id import adapted_weights_id
from toxlib.steer.adapt_key import (
    META_FILE,
    AdaptConfig,
    adaptation_key,
    adapted_name,
    check_training_corpus,
    default_name,
)
from toxlib.steer.adapt_train import adapted_tokenizer, quiet_transformers, train
from toxlib.store.artefacts import artefact_file, artefact_folder, cache_path


def adapted_dir(lm, corpus: pd.DataFrame, config: AdaptConfig, device: str | torch.device | None = None) -> Path:
    """The cache folder of this adaptation (``adapted_name``; it exists, with ``training.json`` inside, once
    training has finished)."""
    return cache_path(adapted_name(lm, corpus, config, device))


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
    check_training_corpus(corpus)
    corpus = corpus.copy()  # trained later: what the key names must be what is trained, whatever the caller does
    key = adaptation_key(lm, corpus, config, device)
    artefact = adapted_name(lm, corpus, config, device)
    target = pick_dtype(dtype or lm.dtype, lm.device)
    label = name or default_name(lm, corpus, config)

    def weights() -> torch.nn.Module:
        trained = _trained(artefact, lm, corpus, config, progress, threads, device)
        with quiet_transformers():
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
        with quiet_transformers():
            _train_into(folder, lm, corpus, config, progress, threads, device)

    with _TRAINING:
        return artefact_folder(name, train_into, done_file=META_FILE)


def _train_into(folder: Path, lm, corpus, config, progress, threads, device=None) -> None:
    """Train (on ``device``) and save the model, its tokenizer and, last, ``training.json`` into ``folder`` (a
    temporary folder the artefact cache renames into place)."""
    model, tokenizer, meta = train(lm, corpus, config, progress, threads, device)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    meta["key"] = adaptation_key(lm, corpus, config, device)
    (folder / META_FILE).write_text(json.dumps(meta, indent=1))
