"""The distilled Perspective scorer: its training data and split, the shipped weights against the held-out targets,
save/load, determinism, and the benchmark command."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from toxlib.common.errors import ModelUnavailableError
from toxlib.metrics.agreement import agreement
from toxlib.scorers.distilled import TARGETS, DistilledScorer, load_emulator, predict, save_emulator
from toxlib.scorers.training import TrainingConfig, train_emulator, training_texts


@pytest.fixture(scope="module")
def texts():
    return training_texts(seed=0)


@pytest.mark.data
def test_split_is_by_record_fixed_by_the_seed_and_free_of_evaluation_sets(texts):
    from toxlib.data import load_sass_benchmark, load_tweeteval_hate

    assert texts["text"].is_unique and texts.equals(training_texts(seed=0))
    sides = texts.groupby("record_id")["split"].nunique()
    assert (sides == 1).all()  # a record's prompt and continuation never straddle the split
    assert 0.18 < (texts["split"] == "held_out").mean() < 0.22
    assert not texts["split"].equals(training_texts(seed=1)["split"])
    evaluation = set(load_sass_benchmark()["text"]) | set(load_tweeteval_hate()["text"])
    assert not evaluation & set(texts["text"])


@pytest.mark.data
def test_calibration_records_are_carved_from_training_and_leave_the_held_out_split_as_it_was(texts):
    assert not texts.loc[texts["split"] == "held_out", "calibration"].any()
    assert (texts.groupby("record_id")["calibration"].nunique() == 1).all()  # by record
    train = texts[texts["split"] == "train"].drop_duplicates("record_id")
    assert 0.14 < train["calibration"].mean() < 0.16
    # the held-out records do not depend on the calibration share, and are the ones the detoxification chapter
    # used before calibration existed (sha256 of their sorted ids, computed from the split as of issue 20)
    assert texts["split"].equals(training_texts(seed=0, calibration=0.0)["split"])
    held = sorted(texts.loc[texts["split"] == "held_out", "record_id"].unique())
    assert len(held) == 1455
    assert hashlib.sha256(",".join(map(str, held)).encode()).hexdigest()[:16] == "68a4704d3c09ce59"


@pytest.fixture(scope="module")
def scorer():
    return DistilledScorer()


@pytest.mark.data
@pytest.mark.models
def test_shipped_weights_meet_the_held_out_targets(texts, scorer):
    from toxlib.scorers.calibration import apply_calibrators

    held = texts[texts["split"] == "held_out"]
    columns = list(TARGETS)
    # one pass of the network: the calibrated scores are the raw ones through the shipped calibrators, which the
    # scorer's own calibrated path gives exactly on every 30th held-out text (about 100, of many lengths; a text's
    # scores do not depend on its batch: test_a_texts_scores_are_the_same_bits_alone_and_among_others_of_its_length)
    raw = DistilledScorer(calibrated=False).score(held["text"], cache=False, progress=False)
    scores = raw.copy()
    scores[columns] = apply_calibrators(raw[columns].to_numpy(), scorer.calibrators, TARGETS)
    sample = np.arange(0, len(held), 30)
    direct = scorer.score(held["text"].iloc[sample], cache=False, progress=False)
    assert np.array_equal(direct[columns].to_numpy(), scores[columns].to_numpy()[sample], equal_nan=True)
    tox = agreement(held["toxicity"], scores["toxicity"])
    # issue 20's targets: Pearson >= 0.94 (0.9435 with minilm-rtp-3), AUC >= 0.97, calibration error <= 0.02
    assert tox["pearson"] >= 0.94 and tox["auc"] >= 0.97 and tox["calibration_error"] <= 0.02, tox
    assert agreement(held["toxicity"], raw["toxicity"])["calibration_error"] > tox["calibration_error"]
    assert scores[columns].stack().between(0, 1).all()


@pytest.mark.models
def test_obvious_cases_and_version_stamp(scorer):
    table = scorer.score(["You are a wonderful person.", "Shut the fuck up, you stupid idiot."],
                         cache=False, progress=False)
    # short benign sentences read 0.04-0.31: see the chapter
    assert table["toxicity"][0] < 0.5 < 0.8 < table["toxicity"][1]
    assert table["version"][0].startswith(scorer.metadata["version"]) and table["version"][0].endswith(scorer.dtype)
    assert scorer.metadata["version"] == "minilm-rtp-3" and DistilledScorer(calibrated=False).version.endswith("-raw")


@pytest.mark.data
@pytest.mark.models
def test_bf16_scores_stay_close_to_fp32(texts, scorer):
    sample = texts["text"].iloc[:300].tolist()
    fp32 = DistilledScorer(dtype="float32")
    bf16 = DistilledScorer(dtype="bfloat16")
    diff = np.abs(fp32.score(sample, cache=False, progress=False)[list(TARGETS)].to_numpy()
                  - bf16.score(sample, cache=False, progress=False)[list(TARGETS)].to_numpy())
    assert diff.max() < 0.05 and fp32.version != bf16.version


@pytest.mark.models
@pytest.mark.parametrize("avx512_bf16, amx", [(True, False), (True, True), (False, False)])
def test_auto_dtype_is_float32_on_any_cpu(monkeypatch, avx512_bf16, amx):
    """No CPU feature picks the precision: bf16 scores differ between CPUs (0.0059 for one text between an AMX and a
    non-AMX machine), so "auto" is float32 on every CPU, AMX or not."""
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    chosen = DistilledScorer(device="cpu")
    assert chosen.dtype == "float32" and chosen.version.endswith("float32")


@pytest.fixture(scope="module")
def tiny_training(texts):
    train = texts[texts["split"] == "train"]
    config = TrainingConfig(limit=48, batch_size=16)
    return train, config, train_emulator(train, config, progress=False)


@pytest.mark.data
@pytest.mark.models
def test_saved_weights_reload_with_the_adapter_merged_to_the_same_scores(tiny_training, tmp_path):
    train, _, (model, tokenizer, meta) = tiny_training
    save_emulator(model, tmp_path / "w", meta)
    reloaded, _, meta_back = load_emulator(tmp_path / "w")
    sample = train["text"].iloc[100:140].tolist()
    assert np.allclose(predict(model, tokenizer, sample), predict(reloaded, tokenizer, sample), atol=1e-5)
    assert meta_back["train_texts"] == 48


@pytest.mark.data
@pytest.mark.models
def test_training_is_deterministic_for_a_seed(tiny_training):
    train, config, (model, _, _) = tiny_training
    again, _, _ = train_emulator(train, config, progress=False)
    assert torch.equal(model.head.weight, again.head.weight)


def test_scores_from_the_cache_never_load_the_network(tmp_path):
    from toxlib.store.cache import ScoreStore

    store = ScoreStore(tmp_path / "scores.sqlite")
    texts = ["you are a wonderful person", "shut up, you idiot"]
    first = DistilledScorer(dtype="float32")
    scored = first.score(texts, cache=store, progress=False)
    again = DistilledScorer(dtype="float32")
    assert again._loaded is None and again.version == first.version
    pd.testing.assert_frame_equal(again.score(texts, cache=store, progress=False), scored)
    assert again._loaded is None


def test_missing_weights_say_how_to_train_them(tmp_path):
    with pytest.raises(ModelUnavailableError, match="train-scorer"):
        DistilledScorer(weights=tmp_path)


@pytest.mark.data
def test_bench_score_prints_texts_per_second_and_a_json_last_line():
    out = subprocess.run([sys.executable, "-m", "toxlib", "bench", "score", "--quick", "--scorers", "profanity-svm",
                          "profanity-svm"], capture_output=True, text=True, timeout=600)
    first, again = json.loads(out.stdout.strip().splitlines()[-1])["results"]
    assert first["scorer"] == "profanity-svm" and first["texts_per_s"] > 0 and "same_as" not in first
    assert again["same_as"] == "profanity-svm" and again["texts_per_s"] == first["texts_per_s"]
    assert "not timed again" in out.stdout


@pytest.mark.data
@pytest.mark.models
def test_a_finished_run_of_the_same_recipe_is_reused_and_another_recipe_trains(tmp_path, monkeypatch):
    from toxlib.scorers import training

    # small held-out and calibration shares: what is checked is the reuse, not the agreement (20 s less)
    config = TrainingConfig(limit=16, batch_size=16, held_out=0.03, calibration=0.03)
    meta = training.train_and_save(tmp_path / "w", config, progress=False)

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(training, "train_emulator", no_training)
    assert training.train_and_save(tmp_path / "w", config, progress=False) == json.loads(
        (tmp_path / "w" / "training.json").read_text()) and meta["train_texts"] == 16
    with pytest.raises(AssertionError, match="trained again"):
        training.train_and_save(tmp_path / "w", TrainingConfig(limit=16, batch_size=16, held_out=0.03,
                                                               calibration=0.03, seed=1), progress=False)
    assert training.training_summary(meta)["toxicity_pearson"] == meta["held_out"]["toxicity"]["pearson"]


@pytest.mark.models
def test_a_texts_scores_are_the_same_bits_alone_and_among_others_of_its_length(scorer):
    """What ``toxlib serve`` relies on when it pools concurrent requests' texts by token count: a lone text (one row,
    whose head matmul and float32 sigmoid took other paths and moved its scores by up to 3e-7), a very short one,
    and the same texts in one call of many lengths and counts."""
    texts = [f"comment number {i}: {'you are ' * (i % 5)}a {['nice', 'stupid', 'fine'][i % 3]} person"
             for i in range(40)] + ["ok", "a", "Hi there"]
    together = scorer.score(texts, cache=False, progress=False)
    alone = pd.concat([scorer.score([t], cache=False, progress=False) for t in texts], ignore_index=True)
    columns = list(TARGETS)
    assert (together[columns].to_numpy() == alone[columns].to_numpy()).all()
    assert len(set(scorer.batch_keys(texts))) > 5  # many lengths, several texts of most


def test_loading_the_encoder_leaves_transformers_bars_as_they_were():
    """A kernel's ``quiet_libraries()`` switches transformers' bars off; loading the scorer must not switch them back
    on (it did, and a later load of a language model drew "Loading weights" bars into a page)."""
    from transformers.utils import logging as hf_logging

    from toxlib.scorers.distilled import base_encoder

    hf_logging.disable_progress_bar()
    try:
        base_encoder()
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()
    base_encoder()
    assert hf_logging.is_progress_bar_enabled()
