"""A model with a bundled (or any local) model's architecture and tokenizer but random weights, for measuring speed
where the real weights cannot go: a GPU machine that receives a few tens of MiB, while SmolLM2's weights are 270 MB
in bf16 and Gemma's 540 MB. Its texts are gibberish; its shapes, kernels and code paths are the real model's.

    folder = random_weights_folder("smollm2-135m")     # or a folder holding config.json and the tokenizer
    lm = toxlib.models.load(folder, dtype="bfloat16")
    # the same from the command line: python -m toxlib bench perplexity --model smollm2-135m --random-weights

Random initialisation (transformers' own, normal with the config's initializer_range) gives logits with a spread of
about 0.5, so the next-token distribution is close to uniform: top-p 0.9 then keeps most of the vocabulary, and the
nucleus sampler's cost is its worst case (``bench generate`` reports where each nucleus was resolved).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import torch

from toxlib.common.errors import ModelUnavailableError
from toxlib.models.bundled import BUNDLED, converted_dir
from toxlib.store.paths import model_cache_dir, written_atomically

#: a source folder needs one of these (the tokenizer itself), besides config.json.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")
#: files copied from the source folder besides config.json: the tokenizer's and the generation settings.
COPIED = ("generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
          "tokenizer.model", "chat_template.jinja")


def source_folder(source: str | Path) -> Path:
    """The folder whose config and tokenizer are copied: a bundled model's converted folder, or ``source`` itself."""

    if str(source) in BUNDLED:
        return converted_dir(BUNDLED[str(source)])
    folder = Path(source).expanduser()
    if not (folder / "config.json").is_file() or not any((folder / n).is_file() for n in TOKENIZER_FILES):
        raise ModelUnavailableError(
            f"cannot build a random-weights model from {source!r}: give a bundled model's name or a folder with the "
            "model's config.json and its tokenizer (tokenizer.json or tokenizer.model, with tokenizer_config.json; "
            "a gzipped tokenizer.json must be unpacked first); its weights are not needed")
    return folder


def random_weights_folder(source: str | Path, dest: str | Path | None = None, seed: int = 0) -> Path:
    """Build ``source``'s architecture with random weights (``torch.manual_seed(seed)``, then transformers'
    initialisation), save it with its tokenizer and return the folder, ready for ``toxlib.models.load``.

    source: a bundled model name (``known_models()``) or a folder with config.json and tokenizer files.
    dest: where to save; default ``model_cache_dir()/random-weights/<folder name>-<hash of config and seed>``, reused
      when it already holds the model (the same config and seed always give the same weights).
    """
    import transformers

    folder = source_folder(source)
    config_text = (folder / "config.json").read_text()
    if dest is None:
        digest = hashlib.sha256(f"{config_text}\x00{seed}".encode()).hexdigest()[:12]
        dest = model_cache_dir() / "random-weights" / f"{folder.name}-{digest}"
    dest = Path(dest)
    if (dest / "model.safetensors").is_file():
        return dest
    config = transformers.AutoConfig.from_pretrained(folder)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config)
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", *COPIED):
        if (folder / name).is_file():
            shutil.copyfile(folder / name, dest / name)
    (dest / "TOXLIB_SOURCE.txt").write_text(json.dumps(
        {"architecture_of": str(source), "weights": f"random, torch.manual_seed({seed})",
         "transformers": transformers.__version__}) + "\n")
    # the weights file last and atomically: its presence marks a finished folder
    with written_atomically(dest / "model.safetensors") as partial:
        model.save_pretrained(partial.parent / f".{dest.name}-saving", safe_serialization=True)
        shutil.move(partial.parent / f".{dest.name}-saving" / "model.safetensors", partial)
        shutil.rmtree(partial.parent / f".{dest.name}-saving")
    return dest
