"""One decoder pass over several lengths (``toxlib.models.length_groups``) gives each length the bits of its own
pass: tiny Llama and Gemma-3 models in float32 and bf16 (the bundled model: tests/generate/test_batch_invariance.py).
bf16 is asserted where its kernels are row invariant (no AMX) and reported as xfail elsewhere. A group's own pass
has at least ``MIN_ROWS`` token rows (a smaller group beside copies of itself), as ``sentence_nll`` runs one: with
fewer, the matmuls take other kernels on some CPUs (``toxlib.models.batching.MIN_ROWS``)."""

from __future__ import annotations

import pytest
import torch

from toxlib.models import cpu_kernels, load
from toxlib.models.batching import companions
from toxlib.models.length_groups import can_share_a_pass, flat_inputs, hidden_states, length_groups

SHAPES = [(3, 5), (1, 17), (7, 12), (2, 40), (1, 2), (5, 9)]


def own_pass(model, group: torch.Tensor) -> torch.Tensor:
    """The group's hidden states from a pass of its own, beside copies of itself when it has too few tokens."""
    copies = companions(group.numel())
    return model.base_model(input_ids=group.repeat(copies, 1), use_cache=False).last_hidden_state[:len(group)]


def groups(vocab: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return [torch.randint(5, vocab, shape, generator=g) for shape in SHAPES]


BF16_WHERE_ROW_INVARIANT = pytest.param("bfloat16", marks=pytest.mark.xfail(
    not cpu_kernels.bf16_row_invariant_expected(), strict=False,
    reason="bf16 rows depend on their batch with AMX (oneDNN tiles by the number of rows)"))


@pytest.mark.parametrize("dtype", ["float32", BF16_WHERE_ROW_INVARIANT])
@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_each_group_gets_the_bits_of_its_own_pass(tiny_model_dirs, arch, dtype):
    lm = load(str(tiny_model_dirs[arch]), device="cpu", dtype=dtype)
    ids = groups(lm.model.config.vocab_size)
    with torch.inference_mode():
        alone = [own_pass(lm.model, g) for g in ids]
        together = hidden_states(lm.model, ids)
        # as one plain sequence, the concatenation attends across texts and gives other values
        flat, _ = flat_inputs(ids)
        mixed = lm.model.base_model(input_ids=flat, use_cache=False).last_hidden_state[0]
    assert [tuple(h.shape[:2]) for h in together] == SHAPES
    for a, t in zip(alone, together):
        assert torch.equal(a, t)
    assert not torch.equal(mixed[15:32], alone[1][0])
    assert lm.model.config._attn_implementation == "sdpa"


def test_the_attention_implementation_comes_back_after_an_error(tiny_model_dirs):
    lm = load(str(tiny_model_dirs["llama"]), device="cpu")
    with pytest.raises(RuntimeError, match="inside"), length_groups(lm.model, [(1, 3)]):
        assert lm.model.config._attn_implementation == "toxlib_length_groups"
        raise RuntimeError("inside")
    assert lm.model.config._attn_implementation == "sdpa"


def test_only_row_invariant_lengths_within_a_sliding_window_share_a_pass(tiny_model_dirs, monkeypatch):
    gemma = load(str(tiny_model_dirs["gemma3"]), device="cpu", dtype="float32")  # sliding window 64
    llama = load(str(tiny_model_dirs["llama"]), device="cpu", dtype="float32")
    assert cpu_kernels.strict_gemm(), "MKL's strict mode is off: float32 rows could depend on their batch"
    assert can_share_a_pass(gemma.model, 64) and not can_share_a_pass(gemma.model, 65)
    assert can_share_a_pass(llama.model, 1000)
    bf16 = load(str(tiny_model_dirs["llama"]), device="cpu", dtype="bfloat16")
    assert can_share_a_pass(bf16.model, 10) == cpu_kernels.bf16_row_invariant_expected()
    # without MKL's strict mode float32 rows move in the last bits with the rows beside them: a pass per length
    monkeypatch.setattr(cpu_kernels, "strict_gemm", lambda: False)
    assert not can_share_a_pass(llama.model, 10)
    monkeypatch.setattr(cpu_kernels, "bf16_row_invariant_expected", lambda: False)  # bf16 with AMX
    assert not can_share_a_pass(bf16.model, 10)


def test_an_untested_architecture_keeps_a_pass_per_length(tiny_model_dirs, monkeypatch):
    llama = load(str(tiny_model_dirs["llama"]), device="cpu", dtype="bfloat16")
    monkeypatch.setattr(llama.model.config, "model_type", "gpt2")
    assert not can_share_a_pass(llama.model, 10)


def test_flat_inputs_restart_positions_in_every_row():
    ids, positions = flat_inputs([torch.tensor([[7, 8], [9, 10]]), torch.tensor([[1, 2, 3]])])
    assert ids.tolist() == [[7, 8, 9, 10, 1, 2, 3]]
    assert positions.tolist() == [[0, 1, 0, 1, 0, 1, 2]]
