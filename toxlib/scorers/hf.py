"""Any Hugging Face sequence classifier as a toxlib scorer: a hub id (needs hub access or the local HF cache) or a
local directory, including Detoxify's checkpoints as published on the hub (``unitary/toxic-bert``, ...).

Label names are mapped to Perspective's attribute names (``LABEL_ALIASES``; ``labels=`` overrides). Multi-label
models (config ``problem_type == "multi_label_classification"`` and the Detoxify checkpoints) get a sigmoid per label;
single-label models a softmax over labels. A two-class single-label model whose labels are not recognised (LABEL_0,
LABEL_1) reports the probability of class 1 as toxicity. Labels that map to no attribute (Detoxify-unbiased's
identity labels, a "neutral" class) are dropped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from toxlib.models.batching import tokenized_batches
from toxlib.models.device import configure_cpu_threads, kernel_key, pick_device, pick_dtype
from toxlib.models.loading import from_pretrained
from toxlib.models.weights_id import hub_revision, weights_sha256
from toxlib.scorers.base import ATTRIBUTES, BatchScores, Scorer

#: lower-cased classifier label -> Perspective attribute.
LABEL_ALIASES = {
    "toxic": "toxicity", "toxicity": "toxicity", "hate": "toxicity", "offensive": "toxicity",
    "severe_toxic": "severe_toxicity", "severe_toxicity": "severe_toxicity",
    "obscene": "profanity", "profanity": "profanity",
    "threat": "threat", "insult": "insult",
    "identity_hate": "identity_attack", "identity_attack": "identity_attack",
    "sexual_explicit": "sexually_explicit", "sexually_explicit": "sexually_explicit",
    "flirtation": "flirtation",
}
MULTI_LABEL_HUB_IDS = {"unitary/toxic-bert", "unitary/unbiased-toxic-roberta", "unitary/multilingual-toxic-xlm-roberta"}


def label_columns(id2label: dict[int, str], single_label: bool, labels: dict[str, str] | None = None) -> dict[int, str]:
    """{class index: attribute} for the classes that map to a Perspective attribute."""
    aliases = {k.lower(): v for k, v in (labels or LABEL_ALIASES).items()}
    columns = {int(i): aliases[name.lower()] for i, name in id2label.items() if name.lower() in aliases}
    if not columns and single_label and len(id2label) == 2:
        columns = {1: "toxicity"}
    unknown = set(columns.values()) - set(ATTRIBUTES)
    if unknown:
        raise ValueError(f"labels map to unknown attributes {sorted(unknown)}; known: {', '.join(ATTRIBUTES)}")
    if not columns:
        raise ValueError(f"none of the classifier's labels {sorted(id2label.values())} is a known toxicity label; pass "
                         "labels={'<label>': '<attribute>'} with attributes from " + ", ".join(ATTRIBUTES))
    return columns


class HFClassifierScorer(Scorer):
    """model: a hub id or a local directory. Scores: one column per recognised label, in [0, 1]."""

    def __init__(self, model: str, name: str | None = None, labels: dict[str, str] | None = None,
                 device: str | None = None, dtype: str | None = None, batch_tokens: int = 4096,
                 max_length: int = 512, threads: int | None = None):
        self.device = pick_device(device)
        if self.device.type == "cpu":
            configure_cpu_threads(threads)
        local = Path(model).expanduser()
        folder = local.resolve() if local.is_dir() else model
        self.model, self.tokenizer = from_pretrained(model, folder, pick_dtype(dtype, self.device), "classifier")
        self.model.to(self.device).eval()
        config = self.model.config
        self.multi_label = config.problem_type == "multi_label_classification" or model in MULTI_LABEL_HUB_IDS
        self.columns = label_columns(config.id2label, not self.multi_label, labels)
        self.attributes = tuple(dict.fromkeys(self.columns.values()))
        weights = (f"sha256:{weights_sha256(folder)[:16]}" if isinstance(folder, Path)
                   else f"{model}@{hub_revision(self.model)}")
        self.name = name or f"hf:{model}"
        mapping = ",".join(f"{i}:{a}" for i, a in sorted(self.columns.items()))
        self.batch_tokens, self.max_length = batch_tokens, min(max_length, self.tokenizer.model_max_length)
        self.window = self.max_length
        kernels = kernel_key(self.device)  # a GPU's scores are cached apart from a CPU's
        self.version = (f"{weights};{'sigmoid' if self.multi_label else 'softmax'};{self.model.dtype};"
                        f"labels={mapping};max_length={self.max_length}" + (f";{kernels}" if kernels else ""))
        self.description = f"Hugging Face classifier {model} ({', '.join(self.attributes)})"

    def text_lengths(self, texts: list[str]) -> list[int]:
        """Tokens of each text, special tokens included, before the cut at ``max_length``."""
        return [len(ids) for ids in self.tokenizer(texts, truncation=False, verbose=False)["input_ids"]]

    @torch.inference_mode()
    def score_batch(self, texts: list[str]) -> BatchScores:
        values = np.full((len(texts), len(self.attributes)), np.nan)
        for rows, enc in tokenized_batches(self.tokenizer, texts, self.batch_tokens, self.max_length):
            logits = self.model(**enc.to(self.device)).logits.float()
            probs = (logits.sigmoid() if self.multi_label else logits.softmax(-1)).cpu().numpy()
            for j, attribute in enumerate(self.attributes):
                classes = [i for i, a in self.columns.items() if a == attribute]
                values[rows, j] = probs[:, classes].max(axis=1)  # two labels mapped to one attribute: the higher
        return BatchScores(values)
