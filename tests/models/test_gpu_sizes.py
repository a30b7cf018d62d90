"""Perplexity and Self-Debiasing on a GPU: their batch sizes come from the GPU's free memory (computed here from a
given figure), a CPU's stay as they were; where CUDA is, their values agree with the CPU's."""

from __future__ import annotations

import pytest
import torch

from toxlib.models import load
from toxlib.models.gpu_memory import MAX_PASS_TOKENS, model_shape, pass_tokens, scoring_token_bytes
from toxlib.models.perplexity import HEAD_ROWS, SENTENCE_BATCH_TOKENS, default_pass_tokens, head_chunks, sentence_nll
from toxlib.steer.self_debias import DEFAULT_MAX_FORWARD_ROWS, SelfDebiasing, forward_rows

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _as_on_a_gpu(folder):
    lm = load(str(folder), device="cpu")
    lm.model  # noqa: B018 -- loaded on the CPU; only the device below is a GPU's, for the sizes
    lm.device = torch.device("cuda")
    return lm


def test_a_cpu_keeps_its_fixed_sizes(tiny_lm):
    assert head_chunks("cpu", 49152) == (HEAD_ROWS, 21)  # 4 MiB of float32 logits per log-sum-exp pass
    assert default_pass_tokens(tiny_lm) == SENTENCE_BATCH_TOKENS
    assert forward_rows(tiny_lm) == DEFAULT_MAX_FORWARD_ROWS
    assert SelfDebiasing().processor(tiny_lm).max_forward_rows == DEFAULT_MAX_FORWARD_ROWS


def test_a_gpus_sizes_grow_with_its_free_memory(tiny_model_dirs):
    lm = _as_on_a_gpu(tiny_model_dirs["llama"])
    shape = model_shape(lm.model.config)
    small, large = (pass_tokens(lm.model.config, torch.float32, gib << 30) for gib in (1, 100))
    assert small == int(0.4 * (1 << 30)) // scoring_token_bytes(shape, 4) // 1024 * 1024 and large == MAX_PASS_TOKENS
    # one chunk for the head and the log-sum-exp: a tenth of the free memory in float32 logits and exponentials
    assert head_chunks("cuda", 49152, free_bytes=80 << 30) == ((80 << 30) // 10 // (8 * 49152),) * 2
    assert head_chunks("cuda", 49152, free_bytes=1 << 20) == (HEAD_ROWS, HEAD_ROWS)
    assert forward_rows(lm, free_bytes=1 << 30) < forward_rows(lm, free_bytes=8 << 30)


@cuda
def test_sentence_nll_on_a_gpu_agrees_with_the_cpu(tiny_model_dirs):
    texts = ["The quick brown fox jumps over the lazy dog.", "Hello there", "A", "She said hello, and he answered."]
    cpu = sentence_nll(load(str(tiny_model_dirs["llama"]), device="cpu"), texts)
    gpu = sentence_nll(load(str(tiny_model_dirs["llama"]), device="cuda", dtype="float32"), texts)
    assert gpu["n_tokens"].tolist() == cpu["n_tokens"].tolist()
    assert gpu["nll_sum"].to_numpy() == pytest.approx(cpu["nll_sum"].to_numpy(), rel=1e-5)
