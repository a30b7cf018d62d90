"""Toxicity scorers behind one protocol (``toxlib.scorers.base.Scorer``) and a registry by name.

    from toxlib.scorers import score
    table = score(texts, scorer="distilled")   # columns: toxicity, severe_toxicity, ..., scorer, version, error

Known names (``known_scorers()``):
  distilled       all-MiniLM-L6-v2 fine-tuned to emulate Perspective's 8 attributes on RTP texts (the default)
  bilstm          tox-block's 2018 Jigsaw BiLSTM, run in torch without TensorFlow
  profanity-svm   alt-profanity-check's TF-IDF + linear SVM (one offensive-language probability, as profanity)
  perspective     the Perspective API (key from PERSPECTIVE_API_KEY)
  hf:<id or dir>  any Hugging Face sequence classifier (hub id or local directory)
  detoxify-original, detoxify-unbiased, detoxify-multilingual   Detoxify's checkpoints from the hub

May import: common, store, data, metrics, executors, models.
"""

from __future__ import annotations

import importlib
import inspect

from toxlib.common.errors import UnknownNameError
from toxlib.models.cpu_kernels import use_strict_gemm
from toxlib.scorers.base import ATTRIBUTES, BatchScores, Scorer, attribute_columns, headline_column, score_all
from toxlib.scorers.hf import HFClassifierScorer

#: name -> ("module:Class", one-line description). Modules are imported on first use (torch models load lazily).
REGISTRY = {
    "distilled": ("toxlib.scorers.distilled:DistilledScorer",
                  "all-MiniLM-L6-v2 fine-tuned on RealToxicityPrompts texts to emulate Perspective (8 attributes)"),
    "bilstm": ("toxlib.scorers.bilstm:BiLSTMScorer",
               "tox-block 0.1.2: BiLSTM trained on the 2018 Jigsaw toxic-comment data (6 attributes)"),
    "profanity-svm": ("toxlib.scorers.profanity:ProfanitySVMScorer",
                      "alt-profanity-check 1.9.1: TF-IDF + linear SVM, one offensive-language probability"),
    "perspective": ("toxlib.scorers.perspective:PerspectiveScorer",
                    "Perspective API over HTTP (needs PERSPECTIVE_API_KEY and network)"),
}
#: Detoxify's checkpoints as published on the Hugging Face hub.
DETOXIFY = {
    "detoxify-original": "unitary/toxic-bert",
    "detoxify-unbiased": "unitary/unbiased-toxic-roberta",
    "detoxify-multilingual": "unitary/multilingual-toxic-xlm-roberta",
}
DEFAULT_SCORER = "distilled"

use_strict_gemm()  # before the scorers' first matmul: scores independent of their batch (toxlib.models.cpu_kernels)

_loaded: dict[tuple, Scorer] = {}


def known_scorers() -> dict[str, str]:
    """{name: description} of every scorer name ``get_scorer`` accepts (``hf:`` takes any classifier)."""
    names = {name: desc for name, (_, desc) in REGISTRY.items()}
    names.update({name: f"Detoxify checkpoint {hub_id} (needs the hub)" for name, hub_id in DETOXIFY.items()})
    names["hf:<hub id or directory>"] = "any Hugging Face sequence classifier"
    return names


def _scorer_class(name: str):
    module, cls = REGISTRY[name][0].split(":")
    return getattr(importlib.import_module(module), cls)


def takes_device(name: str) -> bool:
    """Whether the scorer called ``name`` runs a torch model, and so takes a ``device`` (distilled, bilstm, hf:
    and Detoxify do; profanity-svm's SVM and Perspective's HTTP calls do not)."""
    if name in REGISTRY:
        return "device" in inspect.signature(_scorer_class(name).__init__).parameters
    return name.startswith("hf:") or name in DETOXIFY


def get_scorer(name: str | Scorer = DEFAULT_SCORER, device: str | None = None, **options) -> Scorer:
    """The scorer called ``name`` (loaded once per process, device and set of options; a ``Scorer`` passes
    through). device: where a scorer with a torch model runs ("cpu", "cuda", ...; None or "auto": CUDA when
    available, else the CPU); a scorer without one (``takes_device``) runs where it always runs, whatever it is."""
    if isinstance(name, Scorer):
        return name
    if device is not None and takes_device(name):
        options["device"] = device
    key = (name, repr(sorted(options.items())))  # options may hold lists
    if key in _loaded:
        return _loaded[key]
    if name in REGISTRY:
        scorer = _scorer_class(name)(**options)
    elif name.startswith("hf:") or name in DETOXIFY:
        scorer = HFClassifierScorer(DETOXIFY.get(name, name.removeprefix("hf:")), name=name, **options)
    else:
        raise UnknownNameError(f"unknown scorer {name!r}; known: {', '.join(known_scorers())}")
    _loaded[key] = scorer
    return scorer


def score(texts, scorer: str | Scorer = DEFAULT_SCORER, cache=True, progress: bool = True, executor=None,
          device: str | None = None, **options):
    """Score texts with the named scorer on ``device`` (see ``get_scorer``); see ``Scorer.score`` for the columns
    and ``executor`` ("local", "ray"). Extra options go to the scorer."""
    return get_scorer(scorer, device=device, **options).score(texts, cache=cache, progress=progress,
                                                               executor=executor)


__all__ = ["ATTRIBUTES", "BatchScores", "DEFAULT_SCORER", "Scorer", "attribute_columns", "get_scorer",
           "headline_column", "known_scorers", "score", "score_all", "takes_device"]
