"""How a Ray worker gets the driver's language model: by name or path, checked against the driver's weights.

A worker does not receive the weights through the object store: it loads the model the way the driver did, from
the same name (bundled model, hub id) or the same folder (a local model, a DAPT/ATCON model in
``cache_dir()/adapted/<key>``, which must then be on a path every node sees: a shared ``TOXLIB_CACHE_DIR``), and
checks that the weights hash (``LanguageModel.weights_id``) is the driver's, so a node with other weights fails
loudly instead of writing other texts under the driver's cache key. A DAPT/ATCON folder is identified by its
training's inputs (``toxlib.models.weights_id.folder_weights_id``), not its bytes: a node that trained the same recipe
itself passes the check, and on another CPU its weights may differ in their last bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toxlib.common.errors import ModelUnavailableError
from toxlib.models import load
from toxlib.models.bundled import BUNDLED


@dataclass(frozen=True)
class ModelSpec:
    """What reloads a ``LanguageModel``: source (bundled name, hub id or folder), kind, dtype, the expected
    weights_id, and the fields the driver may have changed after loading (name, start token, description)."""

    source: str
    kind: str
    dtype: str
    weights_id: str
    name: str
    start_token: str
    start_note: str
    description: str

    @classmethod
    def of(cls, lm) -> "ModelSpec":
        """The spec of a loaded model (see the module docstring)."""

        if lm.source == "bundled":
            source = next((n for n, s in BUNDLED.items() if lm.weights_id == f"sha256:{s.gguf_sha256}"), lm.name)
        elif lm.source == "hub":
            source = lm.weights_id.removeprefix("hf:").rsplit("@", 1)[0]
        else:
            source = str(Path(lm.model.name_or_path).resolve())
        kind = "masked" if "MaskedLM" in type(lm.model).__name__ else "causal"
        return cls(source=source, kind=kind, dtype=str(lm.dtype).removeprefix("torch."), weights_id=lm.weights_id,
                   name=lm.name, start_token=lm.start_token, start_note=lm.start_note, description=lm.description)

    def load(self, device: str = "cpu", threads: int | None = None):
        """The model on this worker (``device``, ``threads``); ModelUnavailableError when its folder is missing
        here or its weights differ from the driver's."""
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # one bar per actor and load is noise in the driver's log
        if self.source.startswith("/") and not Path(self.source).is_dir():
            raise ModelUnavailableError(
                f"model folder {self.source} (model {self.name!r}) does not exist on this Ray node: put it on a path "
                "every node sees (e.g. TOXLIB_CACHE_DIR on shared storage) or copy it to the same path on each node")
        lm = load(self.source, device=device, dtype=self.dtype, threads=threads, kind=self.kind)
        if lm.weights_id != self.weights_id:
            raise ModelUnavailableError(
                f"model {self.name!r} on this Ray node has weights {lm.weights_id}, "
                f"the driver's are {self.weights_id}: give every node the same model files")
        lm.name, lm.start_token, lm.start_note, lm.description = (self.name, self.start_token, self.start_note,
                                                                   self.description)
        return lm
