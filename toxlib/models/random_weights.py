"""A per-row temperature for random-weights models, so that their next-token distributions have a trained model's
nucleus sizes.

A model with random weights (``toxlib.benchmarks.random_weights``) has logits of about the same small spread in every
row: its next-token distribution is nearly uniform, top-p 0.9 keeps most of the vocabulary, and the nucleus sampler
always falls through to its full sort. A trained model's rows differ: SmolLM2-135M's nucleus lies within the top 256
tokens for about 70% of rows, within 2,048 for 28%, within 16,384 for 2%. So a benchmark on random weights measures
a sampler cost no trained model has. ``RowTemperature`` multiplies each position's final hidden state (after the
model's final norm, before the LM head) by exp(a + b z), z a standardised projection of that hidden state on a fixed
random direction: every logit of the row is scaled alike, a row's scale varies with its context, and (a, b) are
fitted on a CPU so that the rows' nucleus sizes fall on the trained model's ladder stages in its proportions
(``toxlib.benchmarks.random_weights.fit_logit_scale``). The fit is kept in the model's folder (``LOGIT_SCALE_FILE``)
and applied whenever ``toxlib.models.load`` reads that folder, so toxlib's paths and transformers' own (the
benchmarks' alternatives) decode the same distributions. The cost is one dot product and one scaling per position.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

#: the file in a random-weights folder that holds its fitted row temperature (written by the fit)
LOGIT_SCALE_FILE = "logit_scale.json"


def direction(hidden_size: int, seed: int) -> torch.Tensor:
    """The fixed random unit vector (hidden_size,) float32 that z projects on, from ``seed``."""
    vector = torch.randn(hidden_size, generator=torch.Generator().manual_seed(seed))
    return vector / vector.norm()


class RowTemperature(torch.nn.Module):
    """A model's final norm followed by a per-position scale: y = norm(x) x exp(a + b z), z = (u . d - mu) / sigma
    with u = y / |y| and d = ``direction(hidden, seed)``. Shapes as the norm's: (..., hidden) in, (..., hidden)
    out, in the norm's dtype (z and the scale computed in float32)."""

    def __init__(self, norm: torch.nn.Module, fit: dict, hidden_size: int):
        super().__init__()
        self.norm = norm
        self.register_buffer("d", direction(hidden_size, int(fit["direction_seed"])), persistent=False)
        self.a, self.b = float(fit["a"]), float(fit["b"])
        self.mu, self.sigma = float(fit["mu"]), float(fit["sigma"])

    def z(self, y: torch.Tensor) -> torch.Tensor:
        """The standardised projection (...) float32 of normed hidden states y (..., hidden)."""
        y = y.float()
        return ((y / y.norm(dim=-1, keepdim=True)) @ self.d.to(y.device) - self.mu) / self.sigma

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(x)
        return y * torch.exp(self.a + self.b * self.z(y)).to(y.dtype)[..., None]


def final_norm_owner(model) -> torch.nn.Module:
    """The module whose ``norm`` attribute is the final norm before the LM head (``model.model`` for Llama and
    Gemma-3); ValueError naming the model's class for an architecture without one."""
    owner = getattr(model, "model", None)
    if owner is None or not isinstance(getattr(owner, "norm", None), torch.nn.Module):
        raise ValueError(f"{type(model).__name__} has no final norm at model.model.norm: a row temperature cannot be "
                         "applied to it (random-weights copies of Llama- and Gemma-style models only)")
    return owner


def with_row_temperature(model, fit: dict) -> torch.nn.Module:
    """``model`` with ``RowTemperature(fit)`` around its final norm (in place; returns the model). A model that
    already has one gets the new fit instead."""
    owner = final_norm_owner(model)
    norm = owner.norm.norm if isinstance(owner.norm, RowTemperature) else owner.norm
    hidden = model.get_output_embeddings().in_features
    owner.norm = RowTemperature(norm, fit, hidden).to(next(norm.parameters()).device)
    return model


def read_fit(folder: str | Path) -> dict | None:
    """The fit kept in ``folder`` (``LOGIT_SCALE_FILE``), or None when it has none."""
    path = Path(folder) / LOGIT_SCALE_FILE
    return json.loads(path.read_text()) if path.is_file() else None


def apply_fit(model, folder: str | Path) -> torch.nn.Module:
    """``model`` read from ``folder``, with the row temperature fitted for it when the folder holds one."""
    fit = read_fit(folder)
    return model if fit is None else with_row_temperature(model, fit)
