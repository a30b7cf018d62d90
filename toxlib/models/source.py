"""The language models one computation uses, each loaded once: what a chapter's compute function is handed.

    models = Models(names={"mine": "/path/to/folder"}, device="cpu")
    lm = models("mine")                          # toxlib.models.load, the first time
    models("mine", dtype="float32") is lm        # the same object: its weights are read once, on first use
    Models(given=[lm])("mine") is lm             # a model loaded before (a report's) is handed over as it is

A chapter asks for its models by name, precision and kind (``__call__``); the source gives the same
``LanguageModel`` for the same three, so a report that runs six chapters of one model loads it once, and a chapter
that asks twice (a float32 copy beside a bfloat16 run) loads each precision once. The short names, the device and
the models already loaded travel in the object, as arguments, not through the environment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import torch

from toxlib.models.loading import LanguageModel, load
from toxlib.models.names import checked_names


def _dtype_name(dtype) -> str:
    """A precision as ``load`` resolves it, by name: None and "auto" are float32 (``device.pick_dtype``)."""
    if isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    return "float32" if dtype in (None, "auto") else str(dtype)


class Models:
    """Models by (name, precision, kind), each loaded once with ``toxlib.models.load`` on ``device`` (None: the
    default device) with the short names ``names`` ({short name: folder or hub id}); ``given``: models loaded
    before, handed out under their own name, precision and kind."""

    def __init__(self, names: Mapping[str, str] | None = None, device: str | None = None,
                 given: Iterable[LanguageModel] = ()):
        self.names, self.device = checked_names(names), device
        self._loaded: dict[tuple[str, str, str], LanguageModel] = {}
        for lm in given:
            self._loaded[(lm.name, _dtype_name(lm.dtype), lm.kind)] = lm

    def __call__(self, name: str, dtype: str | torch.dtype | None = None, kind: str = "causal") -> LanguageModel:
        key = (name, _dtype_name(dtype), kind)
        if key not in self._loaded:
            self._loaded[key] = load(name, device=self.device, dtype=dtype, kind=kind, names=self.names or None)
        return self._loaded[key]

    def loaded(self) -> list[LanguageModel]:
        """The models handed out so far (or given), in the order they were first asked for."""
        return list(self._loaded.values())

    def __repr__(self) -> str:
        return f"Models({[k[0] + ' ' + k[1] for k in self._loaded]}, device={self.device!r})"
