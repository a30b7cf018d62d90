"""The fast nucleus sampler keeps exactly transformers' top-p set and samples from the right distribution; so does
its batch-wide form for a GPU (``toxlib.generate.nucleus_batch``), each test run on both."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from transformers import TopKLogitsWarper, TopPLogitsWarper

from toxlib.generate import nucleus as ladder_sampler
from toxlib.generate import nucleus_batch
from toxlib.generate.nucleus import NucleusStats

#: (sampler, kept-set mask) of each implementation: the ladder of ``nucleus_sample`` and its batch-wide form
IMPLEMENTATIONS = {"ladder": (ladder_sampler.nucleus_sample, ladder_sampler.fast_nucleus_mask),
                   "batch": (nucleus_batch.batch_nucleus_sample, nucleus_batch.batch_nucleus_mask)}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def nucleus_sample(request):
    return IMPLEMENTATIONS[request.param][0]


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def fast_nucleus_mask(request):
    return IMPLEMENTATIONS[request.param][1]


def hf_kept(logits: torch.Tensor, top_p: float, top_k: int | None = None) -> torch.Tensor:
    scores = logits.clone()
    if top_k:
        scores = TopKLogitsWarper(top_k)(None, scores)
    return TopPLogitsWarper(top_p)(None, scores) > -float("inf")


def random_logits(rows: int, vocab: int, seed: int) -> torch.Tensor:
    """Rows with spreads from flat to peaked, so nuclei range from one token to most of the vocabulary."""
    gen = torch.Generator().manual_seed(seed)
    scale = torch.logspace(-1, 1.2, rows)[:, None]
    return torch.randn(rows, vocab, generator=gen) * scale


def exact_kept(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """The nucleus by definition, in float64: sort, keep a token while the mass before it is below p."""
    probs, order = logits.double().softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < top_p
    keep[:, 0] = True
    return torch.zeros_like(keep).scatter(-1, order, keep)


@pytest.mark.parametrize("vocab,top_p", [(50, 0.9), (1000, 0.9), (1000, 0.5), (49152, 0.9), (262144, 0.9),
                                         (262144, 0.5)])
def test_kept_set_is_the_exact_nucleus_and_transformers_set(vocab, top_p, fast_nucleus_mask):
    logits = random_logits(48, vocab, seed=vocab)
    ours, theirs, exact = fast_nucleus_mask(logits, top_p), hf_kept(logits, top_p), exact_kept(logits, top_p)
    sizes = exact.sum(-1)
    assert sizes.min() == 1 and sizes.max() > min(256, vocab // 2)  # one-token nuclei up to beyond the first top-k
    assert torch.equal(ours, exact)
    # transformers' float32 cumulative sum over 262K tokens can misplace the boundary of a huge nucleus by
    # one token; everywhere else its set is ours.
    differs = (ours != theirs).sum(-1)
    assert torch.equal(differs > 0, (theirs != exact).sum(-1) > 0)
    assert differs.max() <= 1 and (sizes[differs > 0] > 16_384).all()
    if vocab <= 49152:
        assert torch.equal(ours, theirs)


def test_kept_set_with_top_k_equals_transformers(fast_nucleus_mask):
    logits = random_logits(32, 5000, seed=3)
    assert torch.equal(fast_nucleus_mask(logits, 0.9, top_k=40), hf_kept(logits, 0.9, top_k=40))


def test_ladder_stages_resolve_the_rows_they_should(nucleus_sample):
    logits = random_logits(64, 30000, seed=5)
    st = NucleusStats()
    nucleus_sample(logits, 0.9, torch.rand(64), stats=st)
    sizes = hf_kept(logits, 0.9).sum(-1)
    # a row needs the sort exactly when the top 16,384 tokens hold less than p (its nucleus may still be smaller)
    top_mass = logits.softmax(-1).topk(16384, dim=-1).values.double().sum(-1)
    assert st.resolved_at.get("sort", 0) == int((top_mass < 0.9).sum())
    assert st.resolved_at[256] == int((logits.softmax(-1).topk(256, -1).values.double().sum(-1) >= 0.9).sum())
    assert sum(st.resolved_at.values()) == 64 and sizes.max() > 256


def test_masked_tokens_are_never_sampled_and_row_order_is_kept(nucleus_sample):
    logits = torch.randn(6, 100)
    logits[:, 50:] = -float("inf")
    logits[3] = -float("inf")
    logits[3, 77] = 0.0  # one row with a single allowed token
    for u in torch.linspace(0, 0.999, 30):
        out = nucleus_sample(logits, 0.9, torch.full((6,), float(u)))
        assert out[3] == 77 and (out[[0, 1, 2, 4, 5]] < 50).all()


@pytest.mark.parametrize("ladder,stage", [((), "sort"), ((18,), 18), ((1, 18), 18)])
def test_sample_frequencies_match_the_renormalised_nucleus(ladder, stage, nucleus_sample):
    """Chi-square goodness of fit of 60,000 draws against the exact nucleus distribution (20-token vocabulary)."""
    gen = torch.Generator().manual_seed(11)
    base = torch.randn(20, generator=gen) * 1.5
    n = 60_000
    logits = base.expand(n, 20)
    st = NucleusStats()
    draws = nucleus_sample(logits, 0.8, torch.rand(n, generator=gen, dtype=torch.float64), stats=st,
                           ladder=ladder).numpy()
    assert st.resolved_at == {stage: n}
    probs = base.softmax(-1).double()
    kept = hf_kept(base[None], 0.8)[0]
    assert set(np.unique(draws)) <= set(np.flatnonzero(kept.numpy()))  # nothing outside the nucleus, ever
    expected = (probs * kept / (probs * kept).sum()).numpy()
    counts = np.bincount(draws, minlength=20)[kept.numpy()]
    chi = stats.chisquare(counts, expected[kept.numpy()] * n)
    assert chi.pvalue > 1e-3, chi


def test_sample_frequencies_match_transformers_sampling(nucleus_sample):
    """Two-sample test: our draws against transformers' TopPLogitsWarper followed by torch.multinomial."""
    gen = torch.Generator().manual_seed(12)
    base = torch.randn(30, generator=gen) * 2
    n = 40_000
    ours = nucleus_sample(base.expand(n, 30), 0.9, torch.rand(n, generator=gen, dtype=torch.float64)).numpy()
    filtered = TopPLogitsWarper(0.9)(None, base.expand(n, 30).clone())
    theirs = torch.multinomial(filtered.softmax(-1), 1, generator=gen).squeeze(-1).numpy()
    table = np.array([np.bincount(ours, minlength=30), np.bincount(theirs, minlength=30)])
    table = table[:, table.sum(0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_chi_square_check_detects_an_off_by_one_nucleus(nucleus_sample):
    """The goodness-of-fit check above can fail: a sampler that drops the nucleus's last token is rejected."""
    gen = torch.Generator().manual_seed(11)
    base = torch.randn(20, generator=gen) * 1.5
    n = 60_000
    probs = base.softmax(-1).double()
    kept = hf_kept(base[None], 0.8)[0]
    last = int(torch.where(kept, probs, torch.ones_like(probs)).argmin())  # least likely kept token
    mass_before_last = float(probs[kept].sum() - probs[last])
    wrong = nucleus_sample(base.expand(n, 20), mass_before_last, torch.rand(n, generator=gen, dtype=torch.float64))
    counts = np.bincount(wrong.numpy(), minlength=20)[kept.numpy()]
    expected = (probs[kept] / probs[kept].sum()).numpy() * n
    assert counts[list(np.flatnonzero(kept.numpy())).index(last)] == 0
    assert stats.chisquare(counts, expected).pvalue < 1e-3


def test_top_p_one_samples_the_full_softmax(nucleus_sample):
    gen = torch.Generator().manual_seed(13)
    base = torch.randn(10, generator=gen)
    n = 50_000
    draws = nucleus_sample(base.expand(n, 10), 1.0, torch.rand(n, generator=gen, dtype=torch.float64)).numpy()
    expected = base.double().softmax(-1).numpy()
    assert stats.chisquare(np.bincount(draws, minlength=10), expected / expected.sum() * n).pvalue > 1e-3


def test_bad_top_p_is_refused(nucleus_sample):
    with pytest.raises(ValueError, match="top_p"):
        nucleus_sample(torch.randn(2, 5), 0.0, torch.rand(2))


@pytest.mark.parametrize("vocab,top_p", [(50, 0.9), (1000, 0.5), (30000, 0.9), (49152, 0.9), (49152, 1.0)])
def test_the_batch_form_draws_the_ladders_tokens_row_by_row(vocab, top_p):
    logits = random_logits(64, vocab, seed=vocab + 1)
    u = torch.rand(64, generator=torch.Generator().manual_seed(vocab), dtype=torch.float64)
    ladder, batch = NucleusStats(), NucleusStats()
    expected = ladder_sampler.nucleus_sample(logits.clone(), top_p, u, stats=ladder)
    assert torch.equal(nucleus_batch.batch_nucleus_sample(logits.clone(), top_p, u, stats=batch), expected)
    assert torch.equal(nucleus_batch.batch_nucleus_sample(logits.clone(), top_p, u, overwrite=True), expected)
    if top_p < 1:  # the same stages resolve the same rows
        assert batch.resolved_at == ladder.resolved_at


def test_too_few_slots_are_flagged_and_grown_slots_give_the_ladders_tokens():
    logits = random_logits(64, 30000, seed=7)
    u = torch.rand(64, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    expected = ladder_sampler.nucleus_sample(logits.clone(), 0.9, u)
    names = nucleus_batch.stages(30000, 0.9)
    assert names == (256, 2048, 16384, "sort")
    state = nucleus_batch.NucleusSlots.of((64, 2, 2, 2), logits.device)
    wrong = nucleus_batch.batch_nucleus_sample(logits.clone(), 0.9, u, state=state)
    assert bool(state.overflow) and not torch.equal(wrong, expected)
    for _ in range(4):  # what the decoding path does after an overflow: more slots, the batch again
        state = state.grown(64)
        tokens = nucleus_batch.batch_nucleus_sample(logits.clone(), 0.9, u, state=state)
        if not bool(state.overflow):
            break
    assert not bool(state.overflow) and torch.equal(tokens, expected)
    fitted = state.fitted(64)  # the next batch's: twice the most rows each later stage took, at least 32
    assert fitted[0] == 64 and fitted[1:] == tuple(min(64, max(32, 2 * m)) for m in state.most.tolist()[1:])
    assert max(state.slots) < 64 or state.slots.count(64) < len(state.slots)  # fewer slots than rows did it


def test_default_slots_shrink_along_the_ladder_and_follow_free_memory():
    names = nucleus_batch.stages(49152, 0.9)
    assert nucleus_batch.default_slots(2048, 49152, names) == (2048, 1024, 512, 256)
    assert nucleus_batch.default_slots(40, 49152, names) == (40, 32, 32, 32)
    # the sort's float64 copies (about 48 bytes per candidate) get a quarter of the free memory
    assert nucleus_batch.default_slots(2048, 49152, names, free_bytes=4 * 48 * 49152 * 10)[-1] == 10
