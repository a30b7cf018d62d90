"""The LM head (hidden states -> vocabulary logits) in slices of the vocabulary, on a CPU in float32.

Why by hand: a decoding step's LM head is one (rows x hidden) @ (hidden x vocabulary) product whose output (400 rows
x 262,144 Gemma tokens: 420 MB of float32) does not stay in the CPU's caches, and MKL ran it at 115-144 GFLOP/s
against 150-174 for the same product computed ``HEAD_SLICE`` output columns at a time into the same output tensor
(measured on an AMD EPYC, 2 cores, MKL's strict mode, 100-400 rows, both bundled heads; ``python -m toxlib bench
generate`` gives the whole-run figures). No library call slices the output dimension for cache locality; transformers
calls ``nn.Linear`` whole.

Each output element is the same dot product over the hidden dimension either way, and MKL gives it the same bits
for contiguous rows (tested on both bundled heads at 4-2,400 rows: ``tests/models/test_lm_head.py``). Each head
is checked once on its first use (``slices_agree``); on a CPU where slicing would move a logit it keeps ``linear``.
Strided rows (a prefill's last position; for a single prompt that view is contiguous, one reason the engine
never runs a prefill of fewer than ``MIN_ROWS`` prompts) are not sliced: ``linear`` gives them other bits than the
same rows made contiguous (and takes about ten times as long: another MKL path), so slicing them would change a
batch's first token. So no generated text and no perplexity changes. Only float32 heads on a CPU are sliced, with
gradients off: a bf16 head or a GPU keeps ``nn.Linear``'s own call, and training sees the head as it was.
``TOXLIB_SLICED_HEAD=0`` turns it off (for timing the difference; nothing computed changes).
"""

from __future__ import annotations

import contextlib
import types

import torch

from toxlib.common import settings
from toxlib.models.float64 import linear_in_whole_blocks, whole_blocks

#: Output columns per slice: 2,048 was fastest of 1,024-16,384 on both bundled heads (above).
HEAD_SLICE = 2048


def sliced_logits(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                  out: torch.Tensor | None = None) -> torch.Tensor:
    """``hidden @ weight.T (+ bias)``, ``HEAD_SLICE`` vocabulary columns at a time.

    hidden: (..., H); weight: (V, H); bias: (V,) or None; out: optional (N, V) tensor to write into, N the rows of
    ``hidden`` flattened. Returns (..., V) in ``hidden``'s dtype: the values ``torch.nn.functional.linear`` gives.
    """
    rows = hidden.reshape(-1, hidden.shape[-1])
    if not rows.is_contiguous():
        # Strided rows (a prefill's last position, (rows, 1, hidden) cut from (rows, width, hidden)) take another
        # MKL path in ``linear``, with other bits than the same rows made contiguous (measured); keep that call.
        return torch.nn.functional.linear(hidden, weight, bias)
    vocab = weight.shape[0]
    out = torch.empty((rows.shape[0], vocab), dtype=hidden.dtype, device=hidden.device) if out is None else out
    for start in range(0, vocab, HEAD_SLICE):
        part = weight[start:start + HEAD_SLICE]
        if bias is None:
            torch.mm(rows, part.t(), out=out[:, start:start + HEAD_SLICE])
        else:
            torch.addmm(bias[start:start + HEAD_SLICE], rows, part.t(), out=out[:, start:start + HEAD_SLICE])
    return out.view(*hidden.shape[:-1], vocab)


#: Row counts the first use of a head checks slices against ``linear`` at (a few rows and a decoding batch's).
PROBE_ROWS = (4, 57, 400)


def slices_agree(weight: torch.Tensor) -> bool:
    """Whether ``sliced_logits`` gives ``linear``'s bits for ``weight`` (V, H) on this CPU, checked once per weight
    on seeded random rows (``PROBE_ROWS``). Measured true on an AMD EPYC; a CPU whose MKL blocks the slices
    otherwise gets ``linear`` instead, so slicing never moves a row there."""
    key = (weight.data_ptr(), tuple(weight.shape))
    if key not in _AGREE:
        x = torch.randn(max(PROBE_ROWS), weight.shape[1], generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            _AGREE[key] = all(torch.equal(sliced_logits(x[:n], weight), torch.nn.functional.linear(x[:n], weight))
                              for n in PROBE_ROWS)
    return _AGREE[key]


_AGREE: dict[tuple, bool] = {}


def slices_pay(head: torch.nn.Module) -> bool:
    """Whether ``head`` is computed in slices: a float32 ``nn.Linear`` on a CPU whose slices give its bits
    (``slices_agree``), unless ``TOXLIB_SLICED_HEAD=0``."""
    return (settings.flag("TOXLIB_SLICED_HEAD") and isinstance(head, torch.nn.Linear)
            and head.weight.device.type == "cpu" and head.weight.dtype == torch.float32
            and slices_agree(head.weight))


def head_logits(head: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """``head(hidden)``, in slices where they pay (``slices_pay``) and no gradient is wanted; a float64 head on a
    CPU in whole row blocks on one thread (``toxlib.models.float64``)."""
    if slices_pay(head) and not (torch.is_grad_enabled() and (hidden.requires_grad or head.weight.requires_grad)):
        return sliced_logits(hidden, head.weight, head.bias)
    if whole_blocks(head):  # a float64 head: one thread, whole row blocks (toxlib.models.float64)
        return linear_in_whole_blocks(head, hidden)
    return torch.nn.functional.linear(hidden, head.weight, head.bias) if isinstance(head, torch.nn.Linear) \
        else head(hidden)


def _sliced_forward(self, hidden: torch.Tensor) -> torch.Tensor:
    return head_logits(self, hidden)


@contextlib.contextmanager
def whole_head(model: torch.nn.Module):
    """Within the block, ``model``'s output embeddings are ``nn.Linear``'s own call (for timing transformers as its
    users run it); the slicing ``slice_lm_head`` installed comes back afterwards."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    saved = vars(head).pop("forward", None) if head is not None else None
    try:
        yield model
    finally:
        if saved is not None:
            head.forward = saved


def slice_lm_head(model: torch.nn.Module) -> torch.nn.Module:
    """Make ``model``'s output embeddings compute in slices (``sliced_logits``) when called without gradients, if
    they pay (``slices_pay``); the module, its weights and its state dict stay as they are (only the instance's
    ``forward`` is replaced, so pickling the model itself would need it removed: ``whole_head``). Returns ``model``."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is not None and slices_pay(head) and "forward" not in vars(head):
        head.forward = types.MethodType(_sliced_forward, head)
    return model
