"""Continued pretraining (DAPT, ATCON) and attribute-conditioned generation, on tiny random models."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
import torch

from toxlib.generate import DecodingConfig
from toxlib.generate.api import encode_prompt, generate
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.tiny import CORPUS
from toxlib.steer import adapt as adapt_module
from toxlib.steer import adapt_train
from toxlib.steer.adapt import adapt, adapted_dir, training_metadata
from toxlib.steer.adapt_key import ATTRIBUTE_TOKENS, META_FILE, AdaptConfig, default_name
from toxlib.steer.adapt_train import document_ids, train
from toxlib.steer.attribute import AttributeConditioning

FAST = AdaptConfig(max_steps=16, batch_size=4, max_tokens=32, lr=1e-2, lora_r=4, lora_alpha=8)


def corpus(toxic=(0, 1, 0, 1, 0), repeat=2) -> pd.DataFrame:
    return pd.DataFrame({"text": CORPUS * repeat, "toxic": list(toxic) * repeat})


@torch.no_grad()
def mean_nll(model, tokenizer, start_token, texts, attribute=None) -> float:
    """Mean NLL per text token, documents laid out as in training."""
    start = tokenizer.convert_tokens_to_ids(start_token)
    docs = [document_ids(tokenizer, start, t, attribute, 32) for t in texts]
    ids, attention, labels = adapt_train._collate(docs, tokenizer.pad_token_id, "cpu")
    return model(input_ids=ids, attention_mask=attention, labels=labels).loss.item()


def test_dapt_reduces_training_loss_and_records_metadata(tiny_lm):
    data = corpus(toxic=(0,) * 5)
    before = mean_nll(tiny_lm.model, tiny_lm.tokenizer, tiny_lm.start_token, CORPUS)
    base_weights = tiny_lm.model.get_input_embeddings().weight.clone()
    lm = adapt(tiny_lm, data, FAST, progress=False)
    after = mean_nll(lm.model, lm.tokenizer, lm.start_token, CORPUS)
    assert after < before - 0.2
    assert torch.equal(tiny_lm.model.get_input_embeddings().weight, base_weights)  # the base is untouched
    assert lm.name == f"{tiny_lm.name}+dapt-nontoxic"
    assert (lm.start_token, lm.start_note, lm.device, lm.dtype) == (tiny_lm.start_token, tiny_lm.start_note,
                                                                    tiny_lm.device, tiny_lm.dtype)
    assert lm.weights_id != tiny_lm.weights_id
    meta = training_metadata(tiny_lm, data, FAST)
    assert meta["steps"] == 16 and meta["corpus_size"] == 10 and meta["base_weights_id"] == tiny_lm.weights_id
    assert meta["config"] == dataclasses.asdict(FAST) and len(meta["corpus_sha256"]) == 64
    assert meta["loss_last_10pct"] < meta["loss_first_10pct"]
    assert meta["tokens_seen"] > meta["target_tokens"] > 0 and meta["train_seconds"] >= 0
    assert meta["documents_with_attribute"] == 0
    assert meta["cpu"] == describe_cpu()  # the machine it was trained on: retrained on another CPU, losses move


def test_full_fine_tuning_reduces_loss(tiny_lm):
    data = corpus(toxic=(1,) * 5)
    config = dataclasses.replace(FAST, lora_r=0, lr=3e-3)
    model, tokenizer, meta = train(tiny_lm, data, config, progress=False)
    assert meta["trainable_params"] == sum(p.numel() for p in tiny_lm.model.parameters())
    assert mean_nll(model, tokenizer, tiny_lm.start_token, CORPUS) < \
        mean_nll(tiny_lm.model, tiny_lm.tokenizer, tiny_lm.start_token, CORPUS) - 0.5
    assert default_name(tiny_lm, data, config).endswith("+dapt-toxic")


def test_second_call_reuses_the_cache(tiny_lm, monkeypatch):
    data = corpus(toxic=(0,) * 5, repeat=1)
    first = adapt(tiny_lm, data, FAST, progress=False, name="first")
    trained = first.model.get_input_embeddings().weight.clone()

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(adapt_module, "train", no_training)
    second = adapt(tiny_lm, data, FAST, progress=False, name="second")
    assert second.weights_id == first.weights_id and second.name == "second"
    assert torch.equal(second.model.get_input_embeddings().weight, trained)  # read from the cache folder


def test_interrupted_training_leaves_nothing_reusable(tiny_lm, monkeypatch):
    data = corpus(repeat=1)
    config = dataclasses.replace(FAST, seed=7)
    folder = adapted_dir(tiny_lm, data, config)
    calls = {"n": 0}
    collate = adapt_train._collate

    def failing_collate(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # as a user interrupting the notebook mid-training
        return collate(*args, **kwargs)

    monkeypatch.setattr(adapt_train, "_collate", failing_collate)
    with pytest.raises(KeyboardInterrupt):
        adapt(tiny_lm, data, config, progress=False).model
    assert not folder.exists()
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}")] == [
        f".{folder.name}.lock"]  # no temporary left; the empty lock file stays (see artefact_folder)

    # a folder at the final place without training.json (not written by adapt) is not trusted either
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    monkeypatch.setattr(adapt_train, "_collate", collate)
    lm = adapt(tiny_lm, data, config, progress=False)
    assert lm.model is not None and (folder / META_FILE).exists()


def test_cache_keys_differ_by_config_corpus_and_base(tiny_lm, tiny_model_dirs):
    from toxlib.models import load

    data = corpus()
    base = adapted_dir(tiny_lm, data, FAST)
    assert adapted_dir(tiny_lm, data.copy(), AdaptConfig(**dataclasses.asdict(FAST))) == base
    variants = [adapted_dir(tiny_lm, data, dataclasses.replace(FAST, **change))
                for change in ({"lr": 5e-3}, {"max_steps": 17}, {"seed": 1}, {"lora_r": 0}, {"method": "atcon"},
                               {"max_tokens": 33})]
    variants.append(adapted_dir(tiny_lm, data.iloc[::-1], FAST))
    variants.append(adapted_dir(tiny_lm, data.assign(toxic=1 - data["toxic"]), FAST))
    variants.append(adapted_dir(load(str(tiny_model_dirs["gemma3"]), device="cpu"), data, FAST))
    variants.append(adapted_dir(load(str(tiny_model_dirs["llama"]), device="cpu", dtype="bfloat16"), data, FAST))
    assert len({base, *variants}) == len(variants) + 1


def test_adapted_model_in_another_dtype_reuses_the_training(tiny_lm, monkeypatch):
    import toxlib.steer.adapt as adapt_module

    data = corpus()
    trained = adapt(tiny_lm, data, FAST, progress=False)
    assert trained.model is not None
    monkeypatch.setattr(adapt_module, "_train_into", lambda *a, **k: pytest.fail("retrained"))
    half = adapt(tiny_lm, data, FAST, progress=False, dtype="bfloat16")
    assert half.dtype == torch.bfloat16 and trained.dtype == tiny_lm.dtype
    assert half.model.get_input_embeddings().weight.dtype == torch.bfloat16
    assert half.weights_id == trained.weights_id


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_atcon_tokens_are_trained_and_survive_save_and_load(tiny_model_dirs, arch):
    from toxlib.models import load

    base = load(str(tiny_model_dirs[arch]), device="cpu")
    data = corpus()
    config = dataclasses.replace(FAST, method="atcon")
    lm = adapt(base, data, config, progress=False)
    assert lm.name == f"{base.name}+atcon"
    ids = {t: lm.tokenizer(t, add_special_tokens=False).input_ids for t in ATTRIBUTE_TOKENS.values()}
    assert all(len(v) == 1 for v in ids.values())
    assert len(lm.tokenizer) == len(base.tokenizer) + 2
    assert lm.model.get_input_embeddings().weight.shape[0] == len(lm.tokenizer)
    assert lm.tokenizer.decode(lm.tokenizer("<|nontoxic|>hello").input_ids, skip_special_tokens=True) == "hello"
    reloaded = load(str(adapted_dir(base, data, config))).tokenizer  # what a Ray worker reads from the folder
    assert {t: reloaded(t, add_special_tokens=False).input_ids for t in ATTRIBUTE_TOKENS.values()} == ids
    assert training_metadata(base, data, config)["documents_with_attribute"] == len(data)

    # the new embedding rows move in training: compare with the same run at learning rate 0 (initial rows)
    new = sorted(v[0] for v in ids.values())
    still, _, _ = train(base, data, dataclasses.replace(config, lr=0.0), progress=False)
    rows = lm.model.get_input_embeddings().weight[new]
    assert not torch.allclose(rows, still.get_input_embeddings().weight[new])
    old = len(base.tokenizer)
    assert torch.allclose(still.get_input_embeddings().weight[:old], base.model.get_input_embeddings().weight)


def test_atcon_fraction_tags_a_random_share():
    data = corpus(repeat=4)
    draw = adapt_train._attribute_draw(data, AdaptConfig(method="atcon", atcon_fraction=0.5, seed=3))
    tagged = [i for i, a in enumerate(draw) if a]
    assert len(tagged) == 10 and tagged != list(range(10))
    assert all(draw[i] == ATTRIBUTE_TOKENS[int(data["toxic"][i])] for i in tagged)
    assert adapt_train._attribute_draw(data, AdaptConfig(method="dapt")) == [None] * 20


def test_document_layout_masks_prefix_and_padding(tiny_lm):
    tok = tiny_lm.tokenizer
    start = tok.convert_tokens_to_ids(tiny_lm.start_token)
    ids, n_prefix = document_ids(tok, start, "The quick brown fox", None, 5)
    assert ids[0] == start and n_prefix == 1 and len(ids) == 5
    short, _ = document_ids(tok, start, "The", None, 5)
    input_ids, attention, labels = adapt_train._collate([(ids, 1), (short, 1)], tok.pad_token_id, "cpu")
    assert labels[0, 0] == -100 and labels[0, 1:].tolist() == ids[1:]
    assert attention[1].tolist() == [1] * len(short) + [0] * (5 - len(short))
    assert (labels[1, len(short):] == -100).all()


def test_attribute_conditioning_transforms_prompts(tiny_lm, tiny_model_dirs):
    steer = AttributeConditioning()
    assert steer.transform_prompt("So I said") == "<|nontoxic|>So I said"
    assert steer.transform_prompt("") == "<|nontoxic|>"
    assert steer.config() == {"name": "attribute-conditioning", "token": "<|nontoxic|>", "unprompted_prefix": ""}
    assert AttributeConditioning("<|toxic|>").config()["token"] == "<|toxic|>"
    with pytest.raises(ValueError, match="single token"):
        AttributeConditioning.for_model(tiny_lm)

    lm = adapt(tiny_lm, corpus(), dataclasses.replace(FAST, method="atcon"), progress=False)
    steer = AttributeConditioning.for_model(lm)
    nontoxic = lm.tokenizer.convert_tokens_to_ids("<|nontoxic|>")
    # the tiny tokenizer adds no BOS, so the unprompted prompt spells out the start token, as training saw it
    assert steer.unprompted_prefix == lm.start_token == "<bos>"
    assert encode_prompt(lm, steer.transform_prompt("")) == [*lm.start_ids, nontoxic]
    assert encode_prompt(lm, steer.transform_prompt("The fox"))[:1] == [nontoxic]


def test_adapted_model_generates(tiny_lm):
    lm = adapt(tiny_lm, corpus(), dataclasses.replace(FAST, method="atcon"), progress=False)
    config = DecodingConfig(mode="greedy", max_new_tokens=4)
    steer = AttributeConditioning.for_model(lm)
    out = generate(lm, ["The quick", ""], config, steering=steer, cache=False, progress=False)
    assert len(out) == 2 and (out["model"] == lm.name).all() and (out["n_new_tokens"] >= 1).all()
    assert out["prompt"].tolist() == ["The quick", ""]
    plain = generate(lm, ["The quick"], config, cache=False, progress=False)
    assert plain["config_hash"][0] != out["config_hash"][0]


def test_adapting_trains_only_when_the_weights_are_first_used(tiny_lm, monkeypatch):
    """A build whose rows of an adapted model all come from the record or the caches never trains it: ``adapt``
    returns at once, its tokenizer needs no training, and ``.model`` trains (once)."""
    data = corpus(toxic=(1,) * 5)
    config = dataclasses.replace(FAST, method="atcon", seed=5)
    calls = []
    real = adapt_module._train_into
    monkeypatch.setattr(adapt_module, "_train_into", lambda *a, **k: (calls.append(1), real(*a, **k)))
    lm = adapt(tiny_lm, data, config, progress=False)
    steer = AttributeConditioning.for_model(lm)  # what the chapter asks of ATCON before any row is computed
    assert calls == [] and not lm.loaded and not adapted_dir(tiny_lm, data, config).exists()
    assert lm.weights_id.startswith("adapted:") and "ATCON on 10 documents (16 steps of 4 documents)" in lm.description
    lm.model
    assert calls == [1] and lm.loaded
    again = adapt(tiny_lm, data, config, progress=False)
    assert again.model is not None and calls == [1]
    assert AttributeConditioning.for_model(again).config() == steer.config()


@pytest.mark.parametrize("method", ["dapt", "atcon"])
@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_the_tokenizer_before_training_is_the_one_training_saves(tiny_model_dirs, arch, method):
    from toxlib.models import load

    base = load(str(tiny_model_dirs[arch]), device="cpu")
    data = corpus()
    config = dataclasses.replace(FAST, method=method, max_steps=2)
    before = adapt(base, data, config, progress=False).tokenizer
    assert adapt(base, data, config, progress=False).model is not None  # trains and saves
    saved = load(str(adapted_dir(base, data, config))).tokenizer
    texts = ["<|nontoxic|>The quick brown fox", "<|toxic|>", "", "plain text, no attribute"] + CORPUS
    assert len(before) == len(saved) == len(base.tokenizer) + (2 if method == "atcon" else 0)
    assert [before(t).input_ids for t in texts] == [saved(t).input_ids for t in texts]
    assert (before.padding_side, before.pad_token_id) == (saved.padding_side, saved.pad_token_id)
    assert before.all_special_ids == saved.all_special_ids
    ids = list(range(len(saved)))
    for skip in (False, True):  # generation decodes with skip_special_tokens=True
        assert before.decode(ids, skip_special_tokens=skip) == saved.decode(ids, skip_special_tokens=skip)


def test_training_metadata_is_the_records_copy_when_it_holds_one(tiny_lm, tmp_path, monkeypatch):
    """The training table shows the training behind the record's rows on every machine: the record's
    ``artefacts/adapted/<folder>.json`` first, without training; a build logs it so ``record write`` keeps it."""
    import json
    import sqlite3

    data = corpus()
    config = dataclasses.replace(FAST, seed=11)
    folder = adapted_dir(tiny_lm, data, config)
    record = tmp_path / "record"
    held = {"steps": 16, "loss_first_10pct": 9.0, "loss_last_10pct": 1.0, "train_seconds": 1.5}
    (record / "artefacts" / "adapted").mkdir(parents=True)
    (record / "artefacts" / "adapted" / f"{folder.name}.json").write_text(json.dumps(held))
    from toxlib.store.record_reader import write_sums

    write_sums(record)
    monkeypatch.setenv("TOXLIB_RECORD_DIR", str(record))
    monkeypatch.delenv("TOXLIB_RECORD", raising=False)
    monkeypatch.setenv("TOXLIB_RECORD_USAGE", str(tmp_path / "usage.sqlite"))
    real = adapt_module._train_into
    monkeypatch.setattr(adapt_module, "_train_into", lambda *a, **k: pytest.fail("trained"))
    assert training_metadata(tiny_lm, data, config) == held
    logged = dict(sqlite3.connect(tmp_path / "usage.sqlite").execute("SELECT name, path FROM artefacts"))
    assert logged == {f"adapted/{folder.name}.json":
                      str((record / "artefacts" / "adapted" / f"{folder.name}.json").resolve())}

    monkeypatch.setenv("TOXLIB_RECORD", "off")  # the record off: trained here, the cache folder's own metadata
    monkeypatch.setattr(adapt_module, "_train_into", real)
    meta = training_metadata(tiny_lm, data, config)
    assert meta["steps"] == 16 and meta["loss_first_10pct"] != 9.0 and (folder / META_FILE).exists()


def test_the_trained_folder_loads_with_the_adapted_models_identity(tiny_lm):
    """A Ray worker reloads an adapted model from its folder (``ModelSpec``) and checks its weights_id against the
    driver's: the folder must give the training's identity, not the hash of bytes another CPU would change."""
    from toxlib.models import load
    from toxlib.models.spec import ModelSpec

    data = corpus()
    config = dataclasses.replace(FAST, max_steps=2, seed=3)
    lm = adapt(tiny_lm, data, config, progress=False)
    worker = ModelSpec.of(lm).load()
    assert worker.weights_id == lm.weights_id == load(str(adapted_dir(tiny_lm, data, config))).weights_id
    assert worker.name == lm.name and worker.start_token == lm.start_token
    assert load(str(tiny_lm.folder)).weights_id.startswith("sha256:")  # a plain folder: its bytes
