"""PPLM's attribute model for toxicity: a linear head (hidden size -> 2 classes, PPLM's ClassificationHead) on
the mean of a frozen LM's final hidden states over a text's tokens (PPLM's ``avg_hidden``), trained by Adam on a
labelled corpus. The PPLM authors' released toxicity head fits only GPT-2-medium's hidden states, so the book trains
one per model. Steering with it is :mod:`toxlib.steer.pplm`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import tqdm
from toxlib.models.batching import budget_batches, pad
from toxlib.steer.vocab_shift import check_corpus, subsample, tensor_sha256

DISCRIMINATOR_VERSION = "pplm-head-v1"  # bump when training changes: it keys the cached discriminators
NONTOXIC_CLASS, TOXIC_CLASS = 0, 1  # the discriminator's classes, as corpus["toxic"]


def encode_text(lm, text: str, max_tokens: int) -> list[int]:
    """Token ids of a text as generation encodes a prompt (``tokenizer(text)``, special tokens included), cut to
    the first ``max_tokens``; "" gives the model's start token."""
    ids = lm.tokenizer(text).input_ids[:max_tokens] if text else []
    return ids or list(lm.start_ids)


def mean_hidden(lm, texts: list[str], max_tokens: int = 32, batch_tokens: int = 4096,
                progress: bool = False) -> torch.Tensor:
    """Mean of the frozen LM's final hidden states (after the final norm, the input of the LM head) over each
    text's tokens (``encode_text``). Returns (len(texts), hidden) float32 on the CPU, rows in input order."""
    encoded = [encode_text(lm, str(t), max_tokens) for t in texts]
    order = np.argsort([len(e) for e in encoded], kind="stable")
    decoder = lm.model.get_decoder()
    out = torch.zeros(len(texts), lm.model.config.get_text_config().hidden_size)
    for batch in tqdm(budget_batches([len(encoded[r]) for r in order], batch_tokens), disable=not progress,
                      desc=f"hidden states {lm.name}", unit="batch"):
        rows = order[batch]
        ids, mask = pad([encoded[r] for r in rows], lm.pad_id or 0, lm.device, side="right")
        with torch.inference_mode():
            hidden = decoder(input_ids=ids, attention_mask=mask).last_hidden_state.float()
            m = mask[..., None].float()
            out[torch.as_tensor(rows)] = ((hidden * m).sum(1) / m.sum(1)).cpu()
    return out


@dataclass
class Discriminator:
    """PPLM's ClassificationHead: logits = mean_hidden @ weight.T + bias.

    weight: (2, hidden) float32, bias: (2,) float32 (CPU); class 0 non-toxic, class 1 toxic.
    meta: JSON-serialisable facts (model, weights id, settings, train/held-out accuracy).
    """

    weight: torch.Tensor
    bias: torch.Tensor
    meta: dict = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return tensor_sha256(self.weight, self.bias)

    def logits(self, hidden_mean: torch.Tensor) -> torch.Tensor:
        """(rows, hidden) float -> (rows, 2) class logits (float32, on hidden_mean's device)."""
        w, b = self.weight.to(hidden_mean.device), self.bias.to(hidden_mean.device)
        return hidden_mean.float() @ w.T + b

    def predict_proba(self, lm, texts: list[str], max_tokens: int | None = None) -> np.ndarray:
        """P(toxic) per text, (len(texts),) float64 in [0, 1]; texts cut to ``max_tokens`` (default: as trained)."""
        features = mean_hidden(lm, list(texts), max_tokens or self.meta.get("max_tokens", 32))
        return torch.softmax(self.logits(features), -1)[:, TOXIC_CLASS].double().numpy()

    def save(self, path: str | Path) -> Path:
        """Write the head and meta to one safetensors file (meta as JSON in its header); returns the path."""
        from safetensors.torch import save_file

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_file({"weight": self.weight.contiguous(), "bias": self.bias.contiguous()}, str(path),
                  metadata={"meta": json.dumps(self.meta)})
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Discriminator":
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            return cls(weight=f.get_tensor("weight"), bias=f.get_tensor("bias"), meta=json.loads(f.metadata()["meta"]))


def train_discriminator(lm, corpus: pd.DataFrame, max_texts: int | None = 2000, max_tokens: int = 32,
                        epochs: int = 30, lr: float = 1e-2, batch_size: int = 64, weight_decay: float = 1e-4,
                        valid_fraction: float = 0.2, seed: int = 0, batch_tokens: int = 4096,
                        progress: bool = False) -> Discriminator:
    """Train the toxicity head on the frozen ``lm``'s mean hidden states.

    corpus: DataFrame with columns text (str) and toxic (0/1 int). max_texts: texts used, drawn with ``seed``
    (None: all); max_tokens: tokens kept from the start of each text. The hidden states are computed once (the
    cost: ~2,000 texts x 32 tokens take about 2 minutes for SmolLM2-135M on 2 CPU cores); then ``epochs`` of Adam
    (lr, weight_decay, minibatches of batch_size, shuffled with ``seed``) on cross-entropy, on standardised
    features; the standardisation is folded into the returned linear layer. A share ``valid_fraction`` of the
    texts (drawn with ``seed``) is held out and only scored.
    Returns a Discriminator; meta has train_accuracy, valid_accuracy (None when nothing is held out), n_train,
    n_valid and the settings.
    """
    corpus = subsample(check_corpus(corpus), max_texts, seed)
    features = mean_hidden(lm, corpus["text"].astype(str).tolist(), max_tokens, batch_tokens, progress).double()
    labels = torch.as_tensor(corpus["toxic"].astype(int).to_numpy())
    order = torch.randperm(len(corpus), generator=torch.Generator().manual_seed(seed))
    n_valid = int(round(valid_fraction * len(corpus)))
    valid, train = order[:n_valid], order[n_valid:]
    mu = features[train].mean(0)
    sigma = features[train].std(0).clamp(min=1e-6)
    x = ((features - mu) / sigma).float()
    head = torch.nn.Linear(x.shape[1], 2)
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    optimizer = torch.optim.Adam(head.parameters(), lr=lr, weight_decay=weight_decay)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.inference_mode(False), torch.enable_grad():
        for _ in range(epochs):
            shuffled = train[torch.randperm(len(train), generator=generator)]
            for start in range(0, len(shuffled), batch_size):
                rows = shuffled[start:start + batch_size]
                loss = torch.nn.functional.cross_entropy(head(x[rows]), labels[rows])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    weight = head.weight.detach().double() / sigma
    bias = head.bias.detach().double() - weight @ mu
    disc = Discriminator(weight=weight.float(), bias=bias.float())
    predicted = disc.logits(features.float()).argmax(-1)

    def accuracy(rows):
        return float((predicted[rows] == labels[rows]).float().mean()) if len(rows) else None

    disc.meta = {"method": DISCRIMINATOR_VERSION, "model": lm.name, "weights_id": lm.weights_id,
                 "hidden_size": int(features.shape[1]), "classes": ["non-toxic", "toxic"], "max_texts": max_texts,
                 "max_tokens": max_tokens, "epochs": epochs, "lr": lr, "batch_size": batch_size,
                 "weight_decay": weight_decay, "valid_fraction": valid_fraction, "seed": seed,
                 "n_train": len(train), "n_valid": n_valid, "train_accuracy": accuracy(train),
                 "valid_accuracy": accuracy(valid)}
    return disc


# ---------------------------------------------------------------------------------------------------------------
# Steering
