"""Padding, token-budget batches and the accurate exponentials shared by generation and scoring."""

from __future__ import annotations

import torch

from toxlib.models.batching import aligned_elementwise, budget_batches, pad, shifted_exp


def test_pad_left_and_right():
    ids, mask = pad([[1, 2, 3], [4]], pad_id=0, side="left")
    assert ids.tolist() == [[1, 2, 3], [0, 0, 4]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    ids, mask = pad([[1, 2, 3], [4]], pad_id=9, side="right")
    assert ids.tolist() == [[1, 2, 3], [4, 9, 9]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]


def test_budget_batches_keep_order_and_bound_the_padded_size():
    lengths = [2, 3, 3, 5, 9, 1]
    batches = budget_batches(lengths, budget=9)
    assert [i for b in batches for i in b] == list(range(6))
    assert batches == [[0, 1, 2], [3], [4], [5]]  # 3 x 3 = 9 fits; 4 x 5 would not; 9 alone exceeds nothing else
    for b in batches:
        assert len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 9


def test_shifted_exp_gives_log_sum_exp_and_leaves_input_unless_inplace():
    logits = torch.randn(3, 1000) * 5
    copy = logits.clone()
    expo, total, peak = shifted_exp(logits)
    assert torch.equal(logits, copy)
    torch.testing.assert_close(total.log() + peak, torch.logsumexp(copy.double(), -1))
    torch.testing.assert_close(expo.double() / total[:, None], copy.double().softmax(-1), atol=1e-7, rtol=1e-5)
    shifted_exp(logits, inplace=True)
    assert not torch.equal(logits, copy)


def test_packs_gather_consecutive_items_under_the_budget():
    from toxlib.models.batching import packs

    assert packs(list("abcde"), [3, 4, 2, 9, 1], budget=9) == [["a", "b", "c"], ["d"], ["e"]]
    assert packs(list("abcd"), [1, 1, 1, 1], budget=9, shareable=[True, False, True, True]) == [
        ["a"], ["b"], ["c", "d"]]
    assert packs(list("ab"), [20, 1], budget=9) == [["a"], ["b"]]
    assert packs([], [], budget=9) == []


def test_an_aligned_elementwise_op_gives_a_row_the_same_bits_whatever_the_tensors_size():
    """torch.sigmoid alone hands a remainder to a scalar loop (on an AVX2 CPU, rows of 8 float32 moved at 7, 9, 15, ...
    rows); aligned, no row moves, in float32 and float64, and whole vector blocks keep torch's own bits."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(160, 8, dtype=dtype) * 3
        whole = aligned_elementwise(torch.sigmoid, x)
        assert all(torch.equal(aligned_elementwise(torch.sigmoid, x[:n]), whole[:n]) for n in range(1, 160))
        assert torch.equal(whole[:128], torch.sigmoid(x[:128])) and whole.shape == x.shape
