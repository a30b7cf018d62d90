"""The GPU decoding path (static cache, CUDA graphs, batch-wide nucleus): its shapes and its rows, run eagerly on a
CPU against the eager engine; graph capture itself only where CUDA is."""

from __future__ import annotations

import pytest
import torch

from toxlib.generate import engine, static_decode
from toxlib.generate.api import default_batch_rows, encode_prompt, generate, row_uniforms
from toxlib.generate.config import DecodingConfig
from toxlib.generate.decoder_choice import (
    DecoderChoice,
    choose_decoder,
    cuda_graphs_enabled,
    graphs_wanted,
    reason_not_static,
)
from toxlib.generate.engine import decode_batch
from toxlib.generate.nucleus import NucleusStats
from toxlib.generate.nucleus_batch import stages
from toxlib.generate.static_decode import Decoders, static_decode_batch
from toxlib.generate.static_sizing import capacity_bucket, row_bucket
from toxlib.models import load
from toxlib.models.gpu_memory import MAX_DECODE_ROWS, decode_rows, decoding_row_bytes, model_shape

PROMPTS = ["The quick brown", "Hello", "Nucleus sampling keeps", "She said"]
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_row_buckets_are_few_and_hold_the_rows():
    assert [row_bucket(r) for r in (1, 64, 65, 400, 1024, 1025, 10_000)] == [64, 64, 128, 512, 1024, 2048, 10_240]
    assert len({row_bucket(r) for r in range(1, 8193)}) == 5 + 7  # five powers of two, then multiples of 1,024
    with pytest.raises(ValueError, match="at least one row"):
        row_bucket(0)


def test_cache_capacity_is_padded_to_a_few_sizes():
    assert capacity_bucket(16, 20) == 64 and capacity_bucket(48, 20) == 128 and capacity_bucket(45, 20) == 64
    assert {capacity_bucket(w, 20) for w in range(16, 113, 16)} == {64, 128, 192}


def _batch(lm, mode: str, samples: int, steps: int = 10):
    enc = [encode_prompt(lm, p) for p in PROMPTS]
    config = DecodingConfig(mode=mode, num_samples=samples, max_new_tokens=steps)
    uniforms = (torch.stack([row_uniforms(0, p, i, steps) for p in PROMPTS for i in range(samples)])
                if mode == "sample" else None)
    return enc, config, uniforms


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
@pytest.mark.parametrize("mode,samples", [("sample", 5), ("greedy", 1)])
def test_static_path_gives_the_eager_engines_rows(tiny_model_dirs, arch, mode, samples):
    lm = load(str(tiny_model_dirs[arch]), device="cpu")
    enc, config, uniforms = _batch(lm, mode, samples)
    # tokens the rows decode as stop tokens, so rows stop at different steps and are cut as the engine cuts them
    free = decode_batch(lm.model, enc, config, uniforms, (), lm.pad_id, width=32)
    stop_ids = (free[0][2], free[-1][5])
    eager, static = NucleusStats(), NucleusStats()
    expected = decode_batch(lm.model, enc, config, uniforms, stop_ids, lm.pad_id, stats=eager, width=32)
    rows = static_decode_batch(lm.model, enc, config, uniforms, stop_ids, lm.pad_id, stats=static, width=32,
                               graphs=False)
    assert rows == expected
    assert any(len(r) < config.max_new_tokens for r in rows)  # some rows stopped
    if mode == "sample":  # padding rows (4 x 5 = 20 rows padded to 64) are not counted
        assert sum(static.resolved_at.values()) == 20 * config.max_new_tokens


def test_a_sampler_overflow_decodes_the_batch_again_with_more_slots(tiny_model_dirs):
    lm = load(str(tiny_model_dirs["llama"]), device="cpu")
    enc, config, uniforms = _batch(lm, "sample", 5)
    expected = decode_batch(lm.model, enc, config, uniforms, lm.stop_ids, lm.pad_id, width=32)
    vocab = lm.model.config.vocab_size
    assert stages(vocab, config.top_p) == (256, "sort")  # a 300-token vocabulary: the top 256, then the sort
    decoders = Decoders()  # the caller's: the shared one is left alone
    learned = decoders.of(lm.model).capacity
    learned.slots[(64, vocab)] = (64, 1)  # one slot for the sort: every step overflows
    rows = static_decode_batch(lm.model, enc, config, uniforms, lm.stop_ids, lm.pad_id, width=32, graphs=False,
                               decoders=decoders)
    assert rows == expected
    assert learned.slots[(64, vocab)][1] > 1
    assert (64, vocab) not in static_decode.SHARED_DECODERS.of(lm.model).capacity.slots


def test_a_callers_decoders_hold_the_models_steps_until_released(tiny_model_dirs):
    lm = load(str(tiny_model_dirs["llama"]), device="cpu")
    enc, config, uniforms = _batch(lm, "greedy", 1)
    decoders = Decoders()
    static_decode_batch(lm.model, enc, config, uniforms, lm.stop_ids, lm.pad_id, width=32, graphs=False,
                        decoders=decoders)
    assert list(decoders.of(lm.model).steps.steps) == [(64, 64)]  # 4 rows in a bucket of 64, 32 + 9 positions
    static_decode.release(lm.model, decoders)
    assert not decoders.of(lm.model).steps.steps


def test_the_chooser_names_the_loop_and_why(tiny_model_dirs, monkeypatch):
    llama = load(str(tiny_model_dirs["llama"]), device="cpu").model
    sample, gpu = DecodingConfig(max_new_tokens=20), torch.device("cuda")
    assert choose_decoder(llama, sample, [], 16) == ("eager", False, "cpu: eager loop")
    monkeypatch.delenv("TOXLIB_CUDA_GRAPHS", raising=False)
    assert cuda_graphs_enabled() and not graphs_wanted(torch.device("cpu"))
    assert choose_decoder(llama, sample, [], 16, gpu) == ("static", True, "cuda: graphed static decoding")
    steered = choose_decoder(llama, sample, [lambda ids, scores: scores], 16, gpu)
    assert steered.loop == "eager" and "processors" in steered.reason and steered.reason.startswith("cuda, ")
    monkeypatch.setenv("TOXLIB_CUDA_GRAPHS", "0")
    off = choose_decoder(llama, sample, [], 16, gpu)
    assert off.loop == "static" and not off.graphs and "TOXLIB_CUDA_GRAPHS=0" in off.reason


def test_generate_passes_the_callers_decoders_down(tiny_model_dirs, monkeypatch):
    lm = load(str(tiny_model_dirs["llama"]), device="cpu")
    seen = []
    real = engine.static_decode_batch
    monkeypatch.setattr(engine, "choose_decoder", lambda *a: DecoderChoice("static", False, "a test"))
    monkeypatch.setattr(engine, "static_decode_batch", lambda *a, **k: seen.append(k["decoders"]) or real(*a, **k))
    decoders = Decoders()
    generate(lm, PROMPTS[:2], DecodingConfig(num_samples=2, max_new_tokens=4), cache=False, progress=False,
             decoders=decoders)
    assert seen and all(d is decoders for d in seen)


def test_steering_beams_and_a_full_window_take_the_eager_loop(tiny_model_dirs):
    llama = load(str(tiny_model_dirs["llama"]), device="cpu").model
    gemma = load(str(tiny_model_dirs["gemma3"]), device="cpu").model  # sliding window of 64 positions
    sample = DecodingConfig(max_new_tokens=20)
    assert reason_not_static(llama, sample, [], 16) is None
    assert "processors" in reason_not_static(llama, sample, [lambda ids, scores: scores], 16)
    assert "model.generate" in reason_not_static(llama, DecodingConfig(mode="beam"), [], 16)
    assert reason_not_static(gemma, sample, [], 16) is None
    assert "sliding window" in reason_not_static(gemma, sample, [], 64)


def test_a_gpus_batch_rows_follow_its_free_memory(tiny_model_dirs, tiny_lm):
    config = load(str(tiny_model_dirs["llama"]), device="cpu").model.config
    shape = model_shape(config)
    per_row = decoding_row_bytes(shape, 128, 4)
    assert per_row == 2 * shape["layers"] * shape["kv_heads"] * shape["head_dim"] * 128 * 4 + \
        shape["vocab"] * 24 + 8 * (shape["hidden"] + shape["intermediate"]) * 4
    rows = [decode_rows(config, torch.float32, gib << 30) for gib in (1, 8, 64)]
    assert rows == sorted(rows) and all(r % 64 == 0 for r in rows)
    assert rows[0] == int(0.4 * (1 << 30)) // per_row // 64 * 64
    assert rows[-1] == MAX_DECODE_ROWS  # a tiny model fills no GPU
    assert decode_rows(config, torch.bfloat16, 1 << 30) > rows[0]  # bf16 halves the cache
    assert default_batch_rows(tiny_lm) == 400  # a CPU keeps its fixed batch
    on_a_gpu = load(str(tiny_model_dirs["llama"]), device="cpu")
    on_a_gpu.model  # noqa: B018 -- loaded here; the device below is only what default_batch_rows reads
    on_a_gpu.device = torch.device("cuda")
    assert default_batch_rows(on_a_gpu, free_bytes=1 << 30) == rows[0]


@cuda
@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_graphed_steps_give_the_eager_steps_rows_on_a_gpu(tiny_model_dirs, arch):
    lm = load(str(tiny_model_dirs[arch]), device="cuda", dtype="float32")
    enc, config, uniforms = _batch(lm, "sample", 25, steps=20)
    plain = static_decode_batch(lm.model, enc, config, uniforms, lm.stop_ids, lm.pad_id, width=32, graphs=False)
    graphed = static_decode_batch(lm.model, enc, config, uniforms, lm.stop_ids, lm.pad_id, width=32, graphs=True)
    again = static_decode_batch(lm.model, enc, config, uniforms, lm.stop_ids, lm.pad_id, width=32, graphs=True)
    assert graphed == plain and again == plain
    assert decode_batch(lm.model, enc, config, uniforms, lm.stop_ids, lm.pad_id, width=32) == plain  # dispatched


@cuda
def test_a_gpu_batch_is_sized_from_its_free_memory_now(tiny_model_dirs):
    lm = load(str(tiny_model_dirs["llama"]), device="cuda", dtype="float32")
    assert 64 <= default_batch_rows(lm) <= MAX_DECODE_ROWS
