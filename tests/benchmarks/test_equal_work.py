"""Every headline ratio of the benchmarks compares the same prompts, samples and tokens on both sides."""

from __future__ import annotations

import pytest

from toxlib.benchmarks.equal_work import SHAPES, UnequalWork, Work, compare, shape
from toxlib.benchmarks.generation_speed import bench_generate
from toxlib.benchmarks.perplexity_speed import bench_perplexity
from toxlib.benchmarks.self_debias_speed import bench_self_debias


def test_a_ratio_of_unequal_work_is_refused():
    # what bench generate's vs_transformers_batched used to divide: toxlib on 400 prompts by transformers on 16
    toxlib = Work("toxlib", prompts=400, rows=10_000, tokens=199_923, seconds=8.9)
    theirs = Work("transformers", prompts=16, rows=400, tokens=8_000, seconds=0.78)
    with pytest.raises(UnequalWork, match="400 prompts.*16"):
        compare(toxlib, theirs)
    same = Work("transformers", prompts=400, rows=10_000, tokens=199_923, seconds=19.6)
    result = compare(toxlib, same)
    assert result["speedup"] == 2.2 and result["work"] == {"prompts": 400, "rows": 10_000, "tokens": 199_923}
    assert result["toxlib"]["tok_s"] == round(199_923 / 8.9, 1)


def test_the_gpu_shape_runs_transformers_batched_path_on_everything():
    assert SHAPES["gpu"].prompts == 400 and SHAPES["gpu"].compare is None and SHAPES["gpu"].loop < 400
    assert SHAPES["record"].prompts == 100 and SHAPES["record"].compare == 16
    with pytest.raises(ValueError, match="known: record, gpu"):
        shape("huge")


def _check(comparisons: dict, tokens_per_row: int | None = None) -> None:
    for name, c in comparisons.items():
        assert c["toxlib"]["prompts"] == c["other"]["prompts"] == c["work"]["prompts"], name
        assert c["toxlib"]["rows"] == c["other"]["rows"] and c["toxlib"]["tokens"] == c["other"]["tokens"], name
        # the seconds are reported rounded to 3 decimals: the ratio of the true seconds lies within these bounds
        other, ours = c["other"]["seconds"], c["toxlib"]["seconds"]
        low, high = (other - 5e-4) / (ours + 5e-4), (other + 5e-4) / max(ours - 5e-4, 1e-9)
        assert low - 0.005 <= c["speedup"] <= high + 0.005, (name, c["speedup"], low, high)
        if tokens_per_row:  # stop tokens off: every row decodes max_new_tokens on both sides
            assert c["work"]["tokens"] == c["work"]["rows"] * tokens_per_row, name


def test_bench_generate_compares_equal_work(tiny_model_dirs):
    result = bench_generate(str(tiny_model_dirs["llama"]), quick=True, loop_prompts=2, log=lambda *_: None)
    comparisons = result["comparisons"]
    _check(comparisons, tokens_per_row=20)
    assert comparisons["transformers_batched"]["work"]["prompts"] == result["compare_prompts"] == 4
    assert comparisons["papers_loop"]["work"]["prompts"] == result["papers_loop_prompts"] == 2
    assert comparisons["transformers_batched"]["work"]["rows"] == 4 * 25
    assert result["vs_transformers_batched"] == comparisons["transformers_batched"]["speedup"]
    assert result["vs_papers_loop"] == comparisons["papers_loop"]["speedup"]
    assert result["shape"] == "record" and "speedup" not in result


def test_bench_perplexity_compares_equal_work(tiny_model_dirs):
    result = bench_perplexity(str(tiny_model_dirs["llama"]), quick=True, loop_sentences=50, log=lambda *_: None)
    _check(result["comparisons"])
    assert result["comparisons"]["transformers_batched"]["work"]["tokens"] == result["tokens"]
    assert result["comparisons"]["papers_loop"]["work"]["prompts"] == result["papers_loop_sentences"] == 50


def test_bench_self_debias_compares_equal_work(tiny_model_dirs):
    result = bench_self_debias(str(tiny_model_dirs["llama"]), quick=True, max_new_tokens=6, compare_prompts=8,
                               loop_prompts=3, log=lambda *_: None)
    _check(result["comparisons"], tokens_per_row=6)
    assert result["comparisons"]["transformers_batched"]["work"]["prompts"] == 8
    assert result["comparisons"]["papers_loop"]["work"]["prompts"] == result["papers_loop_prompts"] == 3
