"""What names a model's weights in cache and record keys (its ``weights_id``), so that rows are never keyed by a
name whose weights can change under it.

``hub_revision(model)``: a hub model's commit, else the sha256 of its loaded parameters (``parameters_sha256``);
``folder_weights_id(folder)``: a folder trained by ``toxlib.steer.adapt`` by its training's inputs
(``adapted_weights_id``), any other folder by the sha256 of its weight files (``weights_sha256``, cached by their
paths, sizes and times), with its random-weights logit scale when it has one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from toxlib.common.digest import file_sha256
from toxlib.common.errors import ModelUnavailableError
from toxlib.models.random_weights import LOGIT_SCALE_FILE
from toxlib.store import paths
from toxlib.store.artefacts import artefact_json, artefact_name
from toxlib.store.keys import stable_hash

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def hub_revision(model) -> str:
    """What names a hub model's weights in cache keys: the commit the hub (or its local cache) served, else, where no
    commit is known (an offline cache or a mirror that does not record it), "sha256:<hex>" of the loaded parameters
    (``parameters_sha256``), so that rows are never keyed by a name whose weights can change under it."""
    commit = getattr(model.config, "_commit_hash", None)
    return commit if commit else f"sha256:{parameters_sha256(model)}"


def parameters_sha256(model) -> str:
    """sha256 over a model's state dict as loaded: each tensor's name, dtype, shape and bytes, in name order
    (~1 s per 500 MB)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}|{flat.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


#: the file ``toxlib.steer.adapt`` writes last into a folder it trained; its "key" holds the training's inputs
TRAINING_FILE = "training.json"


def adapted_weights_id(training_key: dict) -> str:
    """weights_id of a model continued-pretrained from ``training_key`` (``toxlib.steer.adapt.adaptation_key``):
    "adapted:<sha256 of the key>[:32]". Keyed by the training's inputs, not the weights' bytes: retrained on another
    CPU they differ in their last bits, and the rows the sample record holds for the training must still be found."""
    return f"adapted:{stable_hash(training_key)[:32]}"


def folder_weights_id(folder: Path) -> str:
    """weights_id of a local model folder: ``adapted_weights_id`` of its training for a folder ``toxlib.steer.adapt``
    trained (its ``TRAINING_FILE`` names the key), so loading that folder (a Ray worker does) finds the same rows as
    the adapted model; else "sha256:<hex>" of its weight files (``weights_sha256``), followed by "+logit-scale:<hex>"
    of the fit when the folder holds a random-weights row temperature (``toxlib.models.random_weights``: the same
    weights then give other logits)."""
    training = folder / TRAINING_FILE
    if training.is_file():
        try:
            key = json.loads(training.read_text()).get("key")
        except (ValueError, AttributeError):  # not a training.json of toxlib.steer.adapt's
            key = None
        if isinstance(key, dict) and folder.name.endswith(stable_hash(key)[:16]):  # the folder adapt names by it
            return adapted_weights_id(key)
    fit = folder / LOGIT_SCALE_FILE
    scaled = f"+logit-scale:{file_sha256(fit)[:16]}" if fit.is_file() else ""
    return f"sha256:{weights_sha256(folder)}{scaled}"


def weights_sha256(folder: Path) -> str:
    """sha256 over a folder's weight files (names relative to it and bytes, sorted by name), kept in the artefact
    cache under ``model_cache_dir()`` (kind "digests") by the files' paths, sizes and modification times, so a folder
    is hashed again only when one of its weight files changes."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    if not files:
        raise ModelUnavailableError(f"{folder} holds no weight files ({', '.join(WEIGHT_SUFFIXES)})")
    stamp = [[str(p), p.stat().st_size, p.stat().st_mtime_ns] for p in files]

    def digest() -> dict:
        hashed = hashlib.sha256()
        for p in files:
            hashed.update(p.relative_to(folder).as_posix().encode())
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    hashed.update(block)
        return {"sha256": hashed.hexdigest()}

    name = artefact_name("digests", "weights", stamp, ".json")
    return artefact_json(name, digest, root=paths.model_cache_dir())["sha256"]
