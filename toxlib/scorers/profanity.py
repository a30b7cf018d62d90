"""alt-profanity-check (TF-IDF + linear SVM with Platt-calibrated probabilities) as a toxlib scorer.

The package gives one number, the probability that a text is offensive, trained on a mix of offensive-language
and hate-speech data. It is reported as ``profanity`` (and nothing else), the Perspective attribute closest to what
the model learned; it is a word-level model and has no notion of context.
"""

from __future__ import annotations

import importlib.metadata

import numpy as np

from toxlib.common.errors import ModelUnavailableError
from toxlib.scorers.base import BatchScores, Scorer

PACKAGE = "alt-profanity-check"


class ProfanitySVMScorer(Scorer):
    """Scores: one column, ``profanity`` in [0, 1]."""

    name = "profanity-svm"
    attributes = ("profanity",)
    chunk_size = 4096
    description = "alt-profanity-check: TF-IDF + linear SVM, one offensive-language probability"

    def __init__(self):
        try:
            from profanity_check import predict_prob
        except ImportError:
            raise ModelUnavailableError(
                f"the profanity-svm scorer needs {PACKAGE}: pip install {PACKAGE}==1.9.1") from None
        self._predict_prob = predict_prob
        self.version = f"{PACKAGE}-{importlib.metadata.version(PACKAGE)}"

    def score_batch(self, texts: list[str]) -> BatchScores:
        return BatchScores(np.asarray(self._predict_prob(texts), dtype=float).reshape(-1, 1))
