"""The roofline helpers: the matmul denominator (``matmul_rate``), the over-100% guard, the warm-up and the timing
cache (``timing``), and the chapter's table (``roofline``)."""

from __future__ import annotations

import json

import pandas as pd
import torch

from toxlib.benchmarks import matmul_rate, roofline, timing

ARCH = {"hidden_size": 64, "intermediate_size": 128, "non_embedding_params": 1000, "vocab_size": 10}


def test_denominator_keeps_the_best_rate_at_either_shape_and_either_time(monkeypatch):
    rates = iter([{"square": 100.0, "workload": 80.0}, {"square": 90.0, "workload": 120.0}])
    monkeypatch.setattr(matmul_rate, "matmul_rates", lambda dtype, arch, rows, device: next(rates))
    d = matmul_rate.Denominator(torch.float32, ARCH, rows=32)
    d.measure()
    d.measure()
    report = d.report()
    assert d.gflops == 120.0
    assert (report["matmul_square_gflops"], report["matmul_workload_gflops"]) == (100.0, 120.0)
    assert report["matmul_workload_shape"] == [32, 64, 128]
    # flops per token = 2 x (1000 + 10 x 64) = 3280
    assert report["roofline_tok_s"] == round(120e9 / 3280, 1)


def test_a_percentage_above_100_fails_the_benchmark(capsys):
    from toxlib.cli.bench import _finish

    assert matmul_rate.above_roofline({"roofline_pct": 99.9}) == []
    both = ("roofline_pct", "bf16_roofline_pct")
    assert matmul_rate.above_roofline({"roofline_pct": 100.8, "bf16_roofline_pct": 50.0}, both) == ["roofline_pct"]
    assert _finish({"roofline_pct": 99.9}) == 0
    assert _finish({"roofline_pct": 100.8, "bf16_roofline_pct": 50.0}, both) == 1
    out = capsys.readouterr().out
    assert json.loads(out.splitlines()[0]) == {"roofline_pct": 99.9}
    assert "error: roofline_pct above 100%" in out


def test_best_matmul_gflops_is_a_positive_rate():
    assert matmul_rate.best_matmul_gflops(torch.float32, 64, 64, 64, repeats=2) > 0


def test_the_denominator_measures_on_the_model_device_at_that_device_square(monkeypatch):
    """A GPU's rate is measured on the GPU, at 8192 cubed (2048 would leave its matrix units idle)."""
    calls = []

    def fake_rate(dtype, m, k, n, repeats=7, device="cpu"):
        calls.append((m, k, n, torch.device(device).type))
        return 1.0

    monkeypatch.setattr(matmul_rate, "best_matmul_gflops", fake_rate)
    for device, side in (("cpu", 2048), ("cuda", 8192)):
        calls.clear()
        d = matmul_rate.Denominator(torch.bfloat16, ARCH, rows=32, device=device)
        d.measure()
        assert calls == [(side, side, side, device), (32, 64, 128, device)]
        assert d.report()["matmul_square_side"] == side


def test_a_gpu_benchmark_warms_up_on_the_whole_workload(monkeypatch):
    """On a GPU the first call at each shape picks and compiles kernels, so the warm-up is the workload itself;
    on a CPU every prompt for two new tokens (the heap grows to the workload's shapes before the timed run)."""
    from types import SimpleNamespace

    from toxlib.generate import RTP_SAMPLING

    monkeypatch.setattr(matmul_rate, "matmul_rates", lambda dtype, arch, rows, device: {"square": 1e6, "workload": 1e6})
    prompts = ["a", "b", "c"]
    for device, warm_prompts, warm_tokens in (("cpu", prompts, 2), ("cuda", prompts, RTP_SAMPLING.max_new_tokens)):
        calls = []

        def fake_generate(lm, ps, config, calls=calls):
            calls.append((list(ps), config.max_new_tokens))
            return 10, 1.0

        monkeypatch.setattr(timing, "toxlib_generate", fake_generate)
        lm = SimpleNamespace(dtype=torch.bfloat16, device=torch.device(device), architecture=lambda: ARCH)
        result = timing.timed_generation(lm, prompts, RTP_SAMPLING, rows=32)
        assert calls == [(warm_prompts, warm_tokens), (prompts, RTP_SAMPLING.max_new_tokens)]
        assert result["tok_s"] == 10.0


def test_a_measurement_is_taken_once_per_key(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path))
    calls = []

    def measure():
        calls.append(1)
        return {"tok_s": 10.0 * len(calls)}

    first = timing.cached_measurement("speed", {"model": "a"}, measure)
    again = timing.cached_measurement("speed", {"model": "a"}, measure)
    other = timing.cached_measurement("speed", {"model": "b"}, measure)
    assert first == again and first["tok_s"] == 10.0 and "UTC" in first["measured"]
    assert other["tok_s"] == 20.0 and len(calls) == 2
    assert not list(tmp_path.rglob("*.partial"))


def test_chapter_timings_are_keyed_by_the_version_of_the_code_they_time(monkeypatch):
    """A timing cached for an older engine or NLL method must not be shown for the current one."""
    from toxlib.generate.config import ENGINE_TIMING_REVISION
    from toxlib.models.perplexity import METHOD_VERSIONS

    keys = {}

    def fake(kind, key, measure):
        keys[kind] = key
        return {"tok_s": 1.0, "row_tok_s": 1.0, "roofline_tok_s": 2.0, "matmul_gflops": 3.0, "measured": "now"}

    monkeypatch.setattr(roofline, "cached_measurement", fake)
    table = pd.DataFrame(roofline.measure_roofline(["smollm2-135m"]))
    assert set(keys) == {"generation", "perplexity", "self-debias"} and len(table) == 3
    assert {keys[kind]["engine"] for kind in keys} == {ENGINE_TIMING_REVISION}  # allocator changes time all three
    assert keys["perplexity"]["nll"] == METHOD_VERSIONS["causal"]
    assert (table["roofline_pct"] == 50.0).all()
