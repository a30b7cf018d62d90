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


def test_a_fitted_row_temperature_gives_the_target_nucleus_sizes_and_travels_with_the_folder(tiny_model_dirs,
                                                                                             tmp_path):
    from toxlib.benchmarks.prompts import bench_prompts
    from toxlib.benchmarks.random_weights import fit_folder, measured_shares, target_shares
    from toxlib.models.random_weights import LOGIT_SCALE_FILE, RowTemperature, read_fit

    copy = random_weights_folder(tiny_model_dirs["llama"], tmp_path / "copy", seed=2)
    assert target_shares(copy) is None and read_fit(copy) is None  # no trained shares known: no fit
    plain_id = load(str(copy), device="cpu").weights_id
    # a 300-token vocabulary: the ladder's top 256, then the full sort; random weights need the sort everywhere
    assert measured_shares(copy, bench_prompts(2)) == {"sort": 1.0}
    target = {"256": 0.6, "sort": 0.4}
    fit = fit_folder(copy, target, fit_prompts=8, check_prompts=2)
    assert read_fit(copy) == fit and (copy / LOGIT_SCALE_FILE).is_file()
    assert fit["fit_distance"] <= 0.1 and fit["b"] > 0  # on the prompts: rows of several temperatures
    # and when the fitted copy generates (its own contexts, after the bisection of its median scale)
    assert abs(fit["measured_shares"].get("256", 0.0) - 0.6) <= 0.1 and fit["measured_distance"] <= 0.2
    lm = load(str(copy), device="cpu")
    assert isinstance(lm.model.model.norm, RowTemperature)
    assert lm.weights_id.startswith(plain_id + "+logit-scale:")  # other logits, another identity


def test_the_row_temperature_scales_every_logit_of_a_row_alike(tiny_model_dirs):
    from toxlib.models.random_weights import RowTemperature, with_row_temperature

    lm = load(str(tiny_model_dirs["llama"]), device="cpu")
    ids = torch.tensor([lm.tokenizer("The quick brown fox").input_ids])
    before = lm.model(ids).logits[0].double()
    with_row_temperature(lm.model, {"a": 1.0, "b": 0.5, "mu": 0.0, "sigma": 1.0, "direction_seed": 3})
    after = lm.model(ids).logits[0].double()
    factor = (after / before).nanmedian(-1).values  # one factor per position
    assert torch.allclose(after, before * factor[:, None], rtol=1e-4, atol=1e-6)
    assert factor.std() > 0.01  # which differs between positions
    again = with_row_temperature(lm.model, {"a": 0.0, "b": 0.0, "mu": 0.0, "sigma": 1.0, "direction_seed": 3})
    assert isinstance(again.model.norm, RowTemperature) and not isinstance(again.model.norm.norm, RowTemperature)
    assert torch.allclose(lm.model(ids).logits[0].double(), before, rtol=1e-5, atol=1e-6)  # a = b = 0: no change
