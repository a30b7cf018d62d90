"""The trained weights two detoxification methods steer with: VOCAB-SHIFT's token weights and PPLM's
discriminator, each trained once per setting and kept."""

from __future__ import annotations

import inspect

import pandas as pd

from toxlib.steer.adapt_key import corpus_sha256
from toxlib.steer.pplm_discriminator import DISCRIMINATOR_VERSION, Discriminator, train_discriminator
from toxlib.steer.vocab_shift import VERSION, VocabShiftWeights, train_vocab_shift
from toxlib.store.artefacts import artefact_file, artefact_name


def trained_once(kind: str, lm, corpus: pd.DataFrame, train, load, version: str, **settings):
    """``train(lm, corpus, **settings)`` once per (kind, version, model weights, dtype, corpus, settings with the
    trainer's defaults filled in), kept as a recorded artefact ("detox/<kind>-<key>.safetensors",
    ``toxlib.store.artefacts``: trained on another CPU the file could differ in its last bits, and with it every
    steered row's key, so the book's copy is used where there is one); later calls load the file. ``train`` returns
    an object with ``.save(path)``; ``load(path)`` reads it back. Settings that change no result (progress, batch
    sizes) are left out of the key."""
    bound = inspect.signature(train).bind(lm, corpus, **settings)
    bound.apply_defaults()
    effective = {k: v for k, v in bound.arguments.items()
                 if k not in ("lm", "corpus", "progress", "batch_tokens", "batch_size_tokens")}
    key = {"kind": kind, "version": version, "weights": lm.weights_id, "dtype": str(lm.dtype),
           "corpus": corpus_sha256(corpus), "settings": effective}
    name = artefact_name("detox", kind, key, ".safetensors")
    return load(artefact_file(name, lambda partial: train(lm, corpus, **settings).save(partial), recorded=True))


def vocab_shift_weights(lm, corpus: pd.DataFrame, **settings):
    """``toxlib.steer.vocab_shift.train_vocab_shift(lm, corpus, **settings)``, cached (see ``trained_once``)."""

    return trained_once("vocab-shift", lm, corpus, train_vocab_shift, VocabShiftWeights.load, VERSION, **settings)


def discriminator(lm, corpus: pd.DataFrame, **settings):
    """``toxlib.steer.pplm_discriminator.train_discriminator(lm, corpus, **settings)``, cached (see
    ``trained_once``)."""

    return trained_once("pplm-discriminator", lm, corpus, train_discriminator, Discriminator.load,
                        DISCRIMINATOR_VERSION, **settings)
