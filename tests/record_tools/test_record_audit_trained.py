"""The audit rebuilds steerings with trained weights (the vocabulary shift, PPLM's discriminator) from the record's
own copy of those weights, for generations and for steered NLLs, and says so when the record lacks them."""

from __future__ import annotations

import pytest
import torch

from toxlib.generate import DecodingConfig, generate
from toxlib.generate.steered_nll import cached_steered_nll
from toxlib.models import load
from toxlib.record_tools.audit import audit
from toxlib.record_tools.write import write_record
from toxlib.steer.pplm import PPLM
from toxlib.steer.pplm_discriminator import Discriminator
from toxlib.steer.vocab_shift import VocabShift, VocabShiftWeights
from toxlib.store.record_reader import write_sums
from toxlib.store.record_usage import note_artefact

CONFIG = DecodingConfig(num_samples=2, max_new_tokens=4, seed=3)
PROMPTS = ["The weather today", "You are such a"]
TEXTS = [" a short sentence", " another one here"]


@pytest.fixture()
def lm(tiny_model_dirs):
    return load(str(tiny_model_dirs["llama"]), device="cpu", dtype="float32")


def _vocab_shift(lm):
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    W = torch.randn(vocab, 2, generator=torch.Generator().manual_seed(0))
    return "vocab-shift", VocabShift(VocabShiftWeights(W=W))


def _pplm(lm):
    hidden = lm.model.config.get_text_config().hidden_size
    weight = torch.randn(2, hidden, generator=torch.Generator().manual_seed(0))
    return "pplm-discriminator", PPLM(Discriminator(weight=weight, bias=torch.zeros(2)), step_size=0.05)


@pytest.mark.parametrize("make", [_vocab_shift, _pplm], ids=["vocab-shift", "pplm"])
def test_a_trained_steering_is_audited_from_the_records_weights(lm, make, tmp_path, monkeypatch):
    cache, record, log = tmp_path / "cache", tmp_path / "record", tmp_path / "usage.sqlite"
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(cache))
    monkeypatch.setenv("TOXLIB_RECORD_DIR", str(record))
    monkeypatch.setenv("TOXLIB_RECORD_USAGE", str(log))
    monkeypatch.setenv("TOXLIB_RECORD_CHAPTER", "test_chapter")
    monkeypatch.delenv("TOXLIB_RECORD", raising=False)
    kind, steering = make(lm)
    weights = steering.weights if kind == "vocab-shift" else steering.discriminator
    name = f"detox/{kind}-0123456789abcdef.safetensors"
    note_artefact(name, weights.save(tmp_path / "trained" / name))  # what a chapter does with its trained file
    generate(lm, PROMPTS, CONFIG, steering=steering, progress=False)
    cached_steered_nll(lm, TEXTS, steering, batch_size=4)
    write_record(log, record, prune=True, cache=cache)
    monkeypatch.delenv("TOXLIB_RECORD_USAGE")

    rows = audit(record, n=len(PROMPTS))
    assert set(rows["kind"]) == {"generations", "lm_scores"} and (rows["rows"] > 0).all(), rows["detail"].tolist()
    assert rows["matched"].sum() == len(PROMPTS) * CONFIG.num_samples + len(TEXTS)

    # without the weights in the record the keys are listed, not audited, with the reason
    (record / "artefacts" / name).unlink()
    write_sums(record)
    rows = audit(record, n=len(PROMPTS))
    assert (rows["rows"] == 0).all() and rows["detail"].str.contains("artefacts/ do not hold").all()
