"""The benchmark's arithmetic (the benchmark itself prints figures; it is not a timed test)."""

from __future__ import annotations

from toxlib.benchmarks.alternatives import count_until_stop as _count_until_stop
from toxlib.benchmarks.generation_speed import peak_rss_mb
from toxlib.benchmarks.matmul_rate import flops_per_token


def test_flops_per_token_counts_body_and_lm_head_once():
    arch = {"non_embedding_params": 100, "vocab_size": 10, "hidden_size": 4}
    assert flops_per_token(arch) == 2 * (100 + 40)


def test_tokens_are_counted_up_to_and_including_the_stop_token():
    assert _count_until_stop([5, 6, 2, 2, 2], (2,)) == 3
    assert _count_until_stop([5, 6, 7], (2,)) == 3


def test_peak_rss_is_in_mib():
    assert 10 < peak_rss_mb() < 64 * 1024
