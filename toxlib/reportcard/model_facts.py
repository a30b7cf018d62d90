"""What a report needs to know about a model before it runs anything, and which chapters can apply to it.

``model_facts(name, device)`` reads the model's config and tokenizer, never its weights: its kind (causal or masked),
architecture and parameter count, the token unprompted generation starts from, whether " True" and " False" are
single tokens (SASS's next-token reading), and the memory its weights need beside the memory free on the device.
``applicability(facts)`` says, per chapter, whether it applies, what it changes for this model, and why not.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch

from toxlib.chapters import chapter, model_chapters
from toxlib.chapters.report_needs import Fit
from toxlib.common.errors import ModelUnavailableError
from toxlib.models import load
from toxlib.models.bundled import BUNDLED
from toxlib.models.device import pick_device
from toxlib.models.names import target_of
from toxlib.papers.sass.prompt_classifier import ANSWERS

#: the weights' bytes times this is the memory a chapter needs (activations, the KV cache, a second copy while
#: adapting); below it the model is refused before it loads
MEMORY_FACTOR = 2.5


@dataclass
class ModelFacts:
    """Facts about a model (see the module docstring); ``notes`` says what was assumed."""

    name: str
    target: str
    kind: str
    arch: dict
    start_token: str | None
    start_note: str
    answers_single: bool
    needed_gb: float
    free_gb: float
    device: str
    notes: list[str] = field(default_factory=list)

    @property
    def params(self) -> int:
        return int(self.arch.get("params") or 0)


def _kind(target: str) -> str:
    """"masked" when the model's config names a masked-LM architecture, else "causal" (bundled models are causal)."""
    if target in BUNDLED:
        return "causal"
    from transformers import AutoConfig  # heavy: transformers' auto classes

    try:
        config = AutoConfig.from_pretrained(target)
    except Exception as exc:  # no config.json, an unreachable hub, a malformed file
        raise ModelUnavailableError(f"cannot read the config of model {target!r} ({type(exc).__name__}: {exc}); give "
                                    "a bundled name, a folder saved with save_pretrained, or a hub id the hub (or "
                                    "its local cache) serves") from None
    architectures = " ".join(getattr(config, "architectures", None) or [])
    return "masked" if "MaskedLM" in architectures else "causal"


def free_memory_gb(device: torch.device) -> float:
    """Memory free for a model on ``device``: the GPU's free memory, or the machine's available RAM."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0] / 1e9
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")) / 1e9


def model_facts(name: str, device: str | None = None, dtype: str = "float32",
                names: Mapping[str, str] | None = None, loader=None) -> ModelFacts:
    """The facts of model ``name`` (a bundled name, a folder, a hub id or a short name in ``names``: {name: folder
    or hub id}) on ``device`` in ``dtype``, read from its config and tokenizer without loading its weights;
    ``loader``: (name, dtype=, kind=) -> LanguageModel on ``device`` (a report's ``Models``, so the model read here
    is the one its chapters use), default ``toxlib.models.load``."""
    target = target_of(name, names)
    kind = _kind(target)
    dev = pick_device(device)
    lm = (loader(name, dtype=dtype, kind=kind) if loader is not None
          else load(name, device=str(dev), dtype=dtype, kind=kind, names=names))
    arch = lm.architecture()  # a weightless copy of the model on the meta device: no weights read
    tokenizer = lm.tokenizer
    try:
        start_token, start_note = lm.start_token, lm.start_note
    except (AttributeError, TypeError):
        start_token, start_note = None, "none: the tokenizer has neither a BOS nor an EOS token"
    if start_token is None:
        start_note = "none: the tokenizer has neither a BOS nor an EOS token"
    answers = [tokenizer(a, add_special_tokens=False).input_ids for a in ANSWERS]
    bytes_per = torch.finfo(getattr(torch, dtype)).bits // 8
    return ModelFacts(name=name, target=target, kind=kind, arch=arch, start_token=start_token, start_note=start_note,
                      answers_single=all(len(ids) == 1 for ids in answers),
                      needed_gb=arch["params"] * bytes_per * MEMORY_FACTOR / 1e9, free_gb=free_memory_gb(dev),
                      device=str(dev))


def applicability(facts: ModelFacts) -> dict[str, Fit]:
    """Per model chapter (``toxlib.chapters.model_chapters``): can it run on this model, and with what change
    (each chapter's ``report.fit``); none can when the model needs more memory than is free."""
    if facts.needed_gb > facts.free_gb:
        why = (f"the model needs about {facts.needed_gb:.1f} GB on {facts.device} ({facts.params / 1e9:.2f}B "
               f"parameters x {MEMORY_FACTOR} for activations and caches), and {facts.free_gb:.1f} GB are free: run "
               "it on a machine with more memory or a GPU (--device cuda)")
        return {stem: Fit(False, why) for stem in model_chapters()}
    return {stem: chapter(stem).report.fit(facts) for stem in model_chapters()}
