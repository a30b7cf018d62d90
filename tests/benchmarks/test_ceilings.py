"""The stand-ins of ``bench ceilings`` do what they replace at no cost, and leave nothing changed behind them."""

from __future__ import annotations

import pytest
import torch

from toxlib.benchmarks import ceilings, matmul_rate
from toxlib.generate import DecodingConfig, engine, generate
from toxlib.generate.nucleus import nucleus_sample
from toxlib.models import load


def test_the_free_sampler_takes_the_argmax_and_is_put_back(tiny_lm):
    prompts = ["The quick brown", "Language models"]
    greedy = generate(tiny_lm, prompts, DecodingConfig(mode="greedy", max_new_tokens=6), cache=False, progress=False)
    sample = DecodingConfig(mode="sample", num_samples=3, max_new_tokens=6, top_p=0.9)
    with ceilings.free_sampler():
        argmax = generate(tiny_lm, prompts, sample, cache=False, progress=False)
    assert engine.nucleus_sample is nucleus_sample
    expected = greedy.set_index("prompt")["continuation"]
    assert len(argmax) == 6
    assert (argmax["continuation"] == argmax["prompt"].map(expected)).all()


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_without_attention_a_position_sees_only_its_own_token(tiny_model_dirs, arch):
    """With attention zeroed, the last logits depend on the last token only; with it, on the whole text."""
    lm = load(str(tiny_model_dirs[arch]), device="cpu")
    ids = torch.tensor([[5, 6, 7, 9], [8, 12, 10, 9]])

    def last_logits():
        with torch.inference_mode():
            return lm.model(input_ids=ids).logits[:, -1]

    before = lm.model.config._attn_implementation
    with ceilings.no_attention(lm.model):
        zero = last_logits()
    assert torch.equal(zero[0], zero[1])
    assert lm.model.config._attn_implementation == before
    real = last_logits()
    assert not torch.allclose(real[0], real[1])
    with pytest.raises(RuntimeError, match="inside"), ceilings.no_attention(lm.model):
        raise RuntimeError("inside")
    assert lm.model.config._attn_implementation == before


def test_stops_off_decodes_every_token_and_restores_the_stop_ids(tiny_lm):
    stops = tiny_lm.stop_ids
    assert stops
    with ceilings.variant(tiny_lm, "toxlib"):
        assert tiny_lm.stop_ids == ()
        out = generate(tiny_lm, ["Hello"], DecodingConfig(mode="sample", num_samples=4, max_new_tokens=9), cache=False,
                       progress=False)
    assert tiny_lm.stop_ids == stops
    assert out["n_new_tokens"].tolist() == [9] * 4
    with pytest.raises(ValueError, match="unknown variant"), ceilings.variant(tiny_lm, "free_everything"):
        pass


@pytest.mark.data
def test_the_ceilings_report_every_variant_over_the_same_work(tiny_model_dirs, monkeypatch):
    # a 256-cubed matmul for the machine's rate: on a CPU without AVX512-BF16 or AMX, bf16 is emulated at about
    # 1 GFLOP/s and the 2048-cubed one took most of this test's 12 minutes (AMD EPYC without AVX-512)
    monkeypatch.setattr(matmul_rate, "SQUARE", 256)
    result = ceilings.generation_ceilings(str(tiny_model_dirs["llama"]), n_prompts=2, repeats=1, log=lambda *_: None)
    assert result["tokens"] == 2 * 25 * 20
    for name in ceilings.VARIANTS:
        assert result[f"{name}_tok_s"] > 0 and result[f"{name}_roofline_pct"] > 0
    shares = result["sampler_share_pct"] + result["attention_share_pct"] + result["rest_share_pct"]
    assert shares == pytest.approx(100, abs=0.2)
    assert result["rest_share_pct"] > 0
    assert result["matmul_square_side"] == 256
