"""The trained weights two detoxification methods steer with: VOCAB-SHIFT's token weights and PPLM's discriminator.
"""

from __future__ import annotations

import pandas as pd

from toxlib.steer.adapt import corpus_sha256
from toxlib.steer.pplm_discriminator import DISCRIMINATOR_VERSION, Discriminator, train_discriminator
from toxlib.steer.vocab_shift import VERSION, VocabShiftWeights, train_vocab_shift
from toxlib.store.keys import stable_hash
from toxlib.store.paths import cache_dir, written_atomically
from toxlib.store.record import note_artefact, recorded_artefact


def _cached_weights(kind: str, lm, corpus: pd.DataFrame, train, load, version: str, **settings):
    """``train(lm, corpus, **settings)`` once per (kind, version, model weights, dtype, corpus, settings with the
    trainer's defaults filled in) and kept under ``cache_dir()/detox``; later calls load the file. ``train``
    returns an object with ``.save(path)``; ``load(path)`` reads it back. Settings that change no result
    (progress, batch sizes) are left out of the key. Written to a temporary file and renamed, so an interrupted run
    leaves nothing that looks finished. The sample record's copy (``toxlib.store.record.recorded_artefact``) comes
    first: trained on another CPU the file could differ in its last bits, and with it every steered row's key."""
    import inspect

    bound = inspect.signature(train).bind(lm, corpus, **settings)
    bound.apply_defaults()
    effective = {k: v for k, v in bound.arguments.items()
                 if k not in ("lm", "corpus", "progress", "batch_tokens", "batch_size_tokens")}
    key = stable_hash({"kind": kind, "version": version, "weights": lm.weights_id, "dtype": str(lm.dtype),
                       "corpus": corpus_sha256(corpus), "settings": effective})[:16]
    name = f"detox/{kind}-{key}.safetensors"
    path = recorded_artefact(name) or cache_dir() / name
    if not path.exists():
        with written_atomically(path) as partial:
            train(lm, corpus, **settings).save(partial)
    note_artefact(name, path)
    return load(path)


def vocab_shift_weights(lm, corpus: pd.DataFrame, **settings):
    """``toxlib.steer.vocab_shift.train_vocab_shift(lm, corpus, **settings)``, cached (see ``_cached_weights``)."""

    return _cached_weights("vocab-shift", lm, corpus, train_vocab_shift, VocabShiftWeights.load, VERSION, **settings)


def discriminator(lm, corpus: pd.DataFrame, **settings):
    """``toxlib.steer.pplm_discriminator.train_discriminator(lm, corpus, **settings)``, cached (see
    ``_cached_weights``)."""

    return _cached_weights("pplm-discriminator", lm, corpus, train_discriminator, Discriminator.load,
                           DISCRIMINATOR_VERSION, **settings)
