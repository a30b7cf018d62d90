"""A device choice reaches every stage (loading for generation, perplexity and steering; scorers; adaptation), and a
GPU's rows are keyed apart from a CPU's while every CPU key stays as the sample record holds it. Only a CPU is
needed: where a stage picks its device is recorded by a stand-in for ``pick_device``, and a GPU's keys come from a
model whose ``device`` says CUDA (keys never touch the device)."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

import toxlib.models.loading as loading
import toxlib.scorers.distilled as distilled
import toxlib.scorers.hf as hf
import toxlib.steer.adapt_key as adapt_key
from toxlib.generate import RTP_SAMPLING
from toxlib.generate.api import run_identity
from toxlib.generate.config import ENGINE_VERSION
from toxlib.models import load
from toxlib.models.device import kernel_key, pick_dtype, tf32, tf32_enabled
from toxlib.models.perplexity import describes, model_key
from toxlib.models.tiny import CORPUS, tiny_classifier
from toxlib.scorers import get_scorer, takes_device
from toxlib.steer.adapt_key import AdaptConfig, adaptation_key
from toxlib.steer.adapt_train import train


@pytest.fixture()
def picked(monkeypatch):
    """Every ``pick_device`` a stage calls records its argument here and answers the CPU."""
    asked = []

    def pick(device=None):
        asked.append(device)
        return torch.device("cpu")

    for module in (loading, distilled, hf, adapt_key):
        monkeypatch.setattr(module, "pick_device", pick)
    return asked


def _on_a_gpu(lm):
    """``lm`` as a GPU's model would be keyed (its weights stay unread)."""
    lm.device = torch.device("cuda")
    return lm


def test_kernel_key_names_a_gpu_and_tf32_and_nothing_on_a_cpu():
    before = tf32_enabled()
    try:
        tf32(False)
        assert kernel_key("cpu") is None and kernel_key("cuda") == "cuda" and kernel_key("cuda:1") == "cuda"
        tf32(True)
        assert kernel_key("cuda") == "cuda+tf32" and kernel_key("cpu") is None
    finally:
        tf32(before)


def test_float32_is_the_default_on_any_device_and_bf16_is_opt_in():
    assert pick_dtype(None, torch.device("cuda")) == torch.float32 == pick_dtype("auto", torch.device("cpu"))
    assert pick_dtype("bf16", torch.device("cuda")) == torch.bfloat16


def test_load_takes_the_device_it_is_given(tiny_model_dirs, picked):
    lm = load(str(tiny_model_dirs["llama"]), device="cuda:3")
    assert picked == ["cuda:3"]
    assert next(lm.model.parameters()).device == lm.device == torch.device("cpu")


def test_generation_keys_name_a_gpu_and_keep_a_cpus(tiny_model_dirs):
    cpu = load(str(tiny_model_dirs["llama"]), device="cpu")
    key, run = run_identity(cpu, RTP_SAMPLING)
    assert set(key) == {"model", "weights", "dtype", "decoding", "steering", "engine"}  # the record's keys
    assert key["engine"] == ENGINE_VERSION
    gpu_key, gpu_run = run_identity(_on_a_gpu(load(str(tiny_model_dirs["llama"]), device="cpu")), RTP_SAMPLING)
    assert gpu_key["kernels"] == "cuda" and gpu_run != run
    assert {k: v for k, v in gpu_key.items() if k not in ("kernels", "gpu_engine")} == key


def test_nll_keys_name_a_gpu_and_keep_a_cpus(tiny_model_dirs):
    cpu = load(str(tiny_model_dirs["llama"]), device="cpu")
    assert model_key(cpu, "causal-nll-v4") == f"causal-nll-v4|{cpu.weights_id}|float32"
    assert "kernels" not in describes(cpu)
    gpu = _on_a_gpu(load(str(tiny_model_dirs["llama"]), device="cpu"))
    assert model_key(gpu, "causal-nll-v4") == f"causal-nll-v4|{gpu.weights_id}|float32|cuda"
    assert describes(gpu)["kernels"] == "cuda"


def test_scorers_take_the_device_they_are_given(tmp_path, picked):
    folder = tiny_classifier(tmp_path / "clf", ["toxic"], multi_label=True)
    scorer = get_scorer(f"hf:{folder}", device="cuda:2")
    assert picked == ["cuda:2"] and scorer.device.type == "cpu" and "cuda" not in scorer.version
    get_scorer("distilled", device="cuda:5")
    assert picked[-1] == "cuda:5"
    assert takes_device("distilled") and takes_device("bilstm") and takes_device("hf:x")
    assert not takes_device("profanity-svm") and not takes_device("perspective")


def test_a_gpus_scores_are_versioned_apart(monkeypatch):
    on_cpu = distilled.DistilledScorer(device="cpu")
    monkeypatch.setattr(distilled, "pick_device", lambda device=None: torch.device("cuda"))
    on_gpu = distilled.DistilledScorer()  # weights are read on first use only
    assert on_gpu.dtype == "float32" and on_gpu.version == f"{on_cpu.version}-cuda"
    assert on_cpu.version.endswith("-eqlen-float32")


def test_adaptation_trains_where_it_is_told_and_keys_a_gpus_training_apart(tiny_lm, picked):
    corpus = pd.DataFrame({"text": CORPUS, "toxic": [0] * len(CORPUS)})
    config = AdaptConfig(max_steps=1, batch_size=2, max_tokens=16, lora_r=2, lora_alpha=4)
    model, _, meta = train(tiny_lm, corpus, config, progress=False, device="cuda:1")
    assert picked == ["cuda:1"] and meta["device"] == "cpu" and next(model.parameters()).device.type == "cpu"
    cpu_key = adaptation_key(tiny_lm, corpus, config)
    assert "training_kernels" not in cpu_key and adaptation_key(tiny_lm, corpus, config, device="cpu") == cpu_key


def test_a_gpu_training_is_keyed_apart(tiny_lm, monkeypatch):
    """The key names a GPU's training apart from a CPU's; keyed as on a machine with a GPU (pick_device answers
    cuda), so it runs where there is none."""
    monkeypatch.setattr(adapt_key, "pick_device", lambda device=None: torch.device("cuda"))
    corpus = pd.DataFrame({"text": CORPUS, "toxic": [0] * len(CORPUS)})
    key = adaptation_key(tiny_lm, corpus, AdaptConfig(), device="cuda")
    assert key["training_kernels"] == "cuda"
    assert {k: v for k, v in key.items() if k != "training_kernels"} == adaptation_key(tiny_lm, corpus, AdaptConfig())
