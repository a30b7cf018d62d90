"""Random-weight copies of a model's architecture (for speed where the weights cannot go)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file

from toxlib.benchmarks.random_weights import random_weights_folder
from toxlib.common.errors import ModelUnavailableError
from toxlib.models import load


def _config(folder) -> dict:
    return json.loads((folder / "config.json").read_text())


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_the_copy_has_the_architecture_and_tokenizer_but_not_the_weights(tiny_model_dirs, tmp_path, arch):
    source = tiny_model_dirs[arch]
    copy = random_weights_folder(source, tmp_path / "copy", seed=1)
    assert _config(copy) == _config(source)
    trained, fresh = load_file(source / "model.safetensors"), load_file(copy / "model.safetensors")
    assert trained.keys() == fresh.keys()
    assert all(trained[k].shape == fresh[k].shape for k in trained)
    assert any(not torch.equal(trained[k], fresh[k]) for k in trained)
    lm, original = load(str(copy), device="cpu"), load(str(source), device="cpu")
    text = "The quick brown fox"
    assert lm.tokenizer(text).input_ids == original.tokenizer(text).input_ids
    ids = torch.tensor([lm.tokenizer(text).input_ids])
    assert lm.model(ids).logits.shape == (1, ids.shape[1], _config(source)["vocab_size"])


def test_the_same_seed_gives_the_same_weights_and_a_finished_copy_is_reused(tiny_model_dirs, tmp_path):
    source = tiny_model_dirs["llama"]
    a = random_weights_folder(source, tmp_path / "a", seed=3)
    b = random_weights_folder(source, tmp_path / "b", seed=3)
    c = random_weights_folder(source, tmp_path / "c", seed=4)
    wa, wb, wc = (load_file(f / "model.safetensors") for f in (a, b, c))
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    assert any(not torch.equal(wa[k], wc[k]) for k in wa)
    stamp = (a / "model.safetensors").stat().st_mtime_ns
    assert random_weights_folder(source, a, seed=3) == a
    assert (a / "model.safetensors").stat().st_mtime_ns == stamp
    assert not list(tmp_path.rglob("*partial*")) and not list(tmp_path.rglob(".*-saving"))


def test_a_source_without_its_tokenizer_is_refused_with_the_fix(tiny_model_dirs, tmp_path):
    source = tmp_path / "config-only"
    source.mkdir()
    shutil.copyfile(tiny_model_dirs["llama"] / "config.json", source / "config.json")
    with pytest.raises(ModelUnavailableError, match="tokenizer.json or tokenizer.model"):
        random_weights_folder(source, tmp_path / "copy")
    with pytest.raises(ModelUnavailableError, match="config.json"):
        random_weights_folder(tmp_path / "nowhere", tmp_path / "copy")


def test_the_benchmark_flag_runs_on_a_random_copy_under_the_given_name(tiny_model_dirs, capsys):
    from toxlib.cli import main

    source = str(tiny_model_dirs["llama"])
    assert main(["bench", "perplexity", "--model", source, "--random-weights", "--quick"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["model"] == source and result["weights"] == "random"
    assert result["sentences"] == 300 and 0 < result["roofline_pct"] <= 100
