"""The LM head in vocabulary slices (``toxlib.models.lm_head``) gives the bits of ``nn.Linear`` called whole, on this
CPU, at the bundled heads' shapes and the row counts decoding meets, for the input layouts the models pass; the
patched model's logits, gradients and state dict are those of the unpatched one.

If the first test fails on a CPU, slicing would move generated texts and perplexities there: remove the patch
(``slice_lm_head``) before anything is recorded on it.
"""

from __future__ import annotations

import pytest
import torch

import toxlib.models  # noqa: F401  (MKL's strict mode, as every use of toxlib's models sets it)
from toxlib.models.lm_head import HEAD_SLICE, PROBE_ROWS, head_logits, slice_lm_head, slices_pay, whole_head

#: (hidden, vocabulary) of the bundled heads: SmolLM2-135M and Gemma-3-270M
HEADS = [(576, 49152), (640, 262144)]
ROWS = [4, 5, 17, 57, 100, 257, 400]
STRIDED_ROWS = [4, 17]


def _weight(hidden: int, vocab: int) -> torch.Tensor:
    return torch.randn(vocab, hidden, generator=torch.Generator().manual_seed(hidden)) * 0.05


def _head(weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.nn.Linear:
    """An ``nn.Linear`` holding ``weight`` (V, H): what ``head_logits`` slices, where its probe lets it."""
    head = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    with torch.no_grad():
        head.weight.copy_(weight)
        if bias is not None:
            head.bias.copy_(bias)
    return head.requires_grad_(False)


def _logits(weight, x, bias=None):
    """The head's logits as toxlib computes them: in slices where they give ``linear``'s bits on this CPU."""
    return head_logits(_head(weight, bias), x)


@pytest.mark.parametrize("hidden,vocab", HEADS)
def test_slices_give_the_whole_heads_bits_at_every_row_count(hidden, vocab):
    """Contiguous rows (a decoding step's) are sliced and keep their bits; strided rows (a prefill's last position)
    keep ``linear``'s own call, whose bits differ from the same rows made contiguous (measured on an AMD EPYC)."""
    weight = _weight(hidden, vocab)
    head = _head(weight)
    weight = head.weight
    states = torch.randn(max(ROWS), 3, hidden, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        # the probe's row counts are left out: where the probe found other bits there, head_logits gives linear's
        # own call, and where it found the same, another draw of the same shape runs the same kernels in the same
        # order (test_the_probe_sees_slices_that_differ checks the probe itself)
        for rows in (r for r in ROWS if r not in PROBE_ROWS):
            flat = states[:rows, -1].contiguous()  # a decoding step's states (rows, hidden)
            assert torch.equal(head_logits(head, flat), torch.nn.functional.linear(flat, weight)), rows
        flat = states[:5, -1].contiguous()  # (rows, 1, hidden): the same mm calls through a view, at any row count
        assert torch.equal(head_logits(head, flat[:, None]), torch.nn.functional.linear(flat[:, None], weight))
        for rows in STRIDED_ROWS:  # linear on strided rows is ~10x slower: a few row counts
            last = states[:rows, -1:]  # (rows, 1, hidden) cut from (rows, 3, hidden): a prefill's last position
            assert torch.equal(head_logits(head, last), torch.nn.functional.linear(last, weight)), rows


def test_the_probe_sees_slices_that_differ(monkeypatch):
    """The probe compares: slices with linear's bits pass it, slices one bit off at one of its row counts do not
    (whatever this CPU's own slices give, so the test holds on any CPU)."""
    from toxlib.models import lm_head

    weight = _weight(64, 3 * HEAD_SLICE)

    def slices(off_at):
        def sliced(x, w, bias=None, out=None):
            logits = torch.nn.functional.linear(x, w, bias)
            return torch.nextafter(logits, torch.tensor(float("inf"))) if x.shape[0] == off_at else logits
        return sliced

    try:
        for off_at, agree in ((None, True), (57, False)):
            lm_head._AGREE.clear()
            monkeypatch.setattr(lm_head, "sliced_logits", slices(off_at))
            assert lm_head.slices_agree(weight) is agree, off_at
    finally:
        lm_head._AGREE.clear()


def test_a_bias_is_added_as_linear_adds_it_across_slices():
    weight, bias = _weight(64, 2 * HEAD_SLICE + 100), torch.randn(2 * HEAD_SLICE + 100)
    x = torch.randn(9, 64)
    assert torch.equal(_logits(weight, x, bias), torch.nn.functional.linear(x, weight, bias))


def test_a_vocabulary_with_a_short_last_slice_and_self_debiasings_row_count():
    """GPT-2's 50,257 tokens end in a 1,105-column slice; Self-Debiasing's prefixed copies send 400 x 6 rows."""
    weight = _weight(576, 50257)
    x = torch.randn(2400, 576, generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        for rows in (4, 2400):
            assert torch.equal(_logits(weight, x[:rows]), torch.nn.functional.linear(x[:rows], weight)), rows


def test_the_switch_and_the_whole_head_block_turn_slicing_off(monkeypatch, tiny_lm):
    head = tiny_lm.model.get_output_embeddings()
    with whole_head(tiny_lm.model):
        assert "forward" not in vars(head)
    assert "forward" in vars(head)
    monkeypatch.setenv("TOXLIB_SLICED_HEAD", "0")
    assert not slices_pay(torch.nn.Linear(8, 16))


def test_slices_are_used_only_where_the_probe_finds_linears_bits(monkeypatch):
    from toxlib.models import lm_head

    head = _head(_weight(64, 3 * lm_head.HEAD_SLICE))
    assert slices_pay(head) == lm_head.slices_agree(head.weight)  # measured True on an AMD EPYC
    monkeypatch.setitem(lm_head._AGREE, (head.weight.data_ptr(), tuple(head.weight.shape)), False)
    assert not slices_pay(head)  # a CPU whose slices differ keeps linear


def test_the_bit_comparison_can_fail():
    """The same products summed with other rounding (in float64, then rounded once to float32) move the last bits of
    some logits: the comparison above would see it. (Splitting the hidden dimension in two halves used to be the
    example; on an Intel Xeon with AMX, MKL's AVX512_E1 path gave those halves' sum exactly ``linear``'s bits,
    2026-11-27, so a split is not a change on every CPU.)"""
    hidden, vocab = HEADS[0]
    weight, x = _weight(hidden, vocab), torch.randn(57, hidden, generator=torch.Generator().manual_seed(2))
    rounded_once = (x.double() @ weight.double().t()).float()
    linear = torch.nn.functional.linear(x, weight)
    assert not torch.equal(rounded_once, linear)
    assert (rounded_once - linear).abs().max() < 1e-4  # last bits only: the values are the same dot products


def test_the_patched_model_gives_the_same_logits_gradients_and_state_dict(tiny_lm):
    torch.manual_seed(0)
    model = tiny_lm.model  # loaded through LanguageModel: patched
    head = model.get_output_embeddings()
    assert "forward" in vars(head) and slices_pay(head)
    ids = torch.tensor([[5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20]])
    with torch.inference_mode():
        patched = model(ids).logits
    saved = head.forward
    del head.forward
    try:
        with torch.inference_mode():
            whole = model(ids).logits
        keys = list(model.state_dict())
        model.zero_grad()
        model(ids).logits.sum().backward()
        grad_whole = head.weight.grad.clone()
    finally:
        head.forward = saved
    assert torch.equal(patched, whole)
    assert list(model.state_dict()) == keys
    model.zero_grad()
    model(ids).logits.sum().backward()  # with gradients the patched head is nn.Linear's own call
    assert torch.equal(head.weight.grad, grad_whole)
    model.zero_grad()


def test_only_float32_heads_on_a_cpu_are_sliced():
    assert slices_pay(torch.nn.Linear(8, 16))
    assert not slices_pay(torch.nn.Linear(8, 16).to(torch.bfloat16))
    bf16 = torch.nn.Sequential()
    bf16.get_output_embeddings = lambda: head  # noqa: E731
    head = torch.nn.Linear(8, 16).to(torch.bfloat16)
    slice_lm_head(bf16)
    assert "forward" not in vars(head)
    x = torch.randn(4, 8, dtype=torch.bfloat16)
    assert torch.equal(head_logits(head, x), head(x))
