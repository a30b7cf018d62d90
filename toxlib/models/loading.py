"""Load a causal language model by name: a bundled model, a local directory, or a Hugging Face hub id.

``load(name)`` returns a :class:`LanguageModel`: the transformers model and tokenizer (left padding, a pad token),
with the device, dtype, a weights identifier for cache keys, and the model's start-of-sequence token for
unprompted generation.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import torch

from toxlib.common import settings
from toxlib.common.errors import ModelUnavailableError, UnknownNameError
from toxlib.models.allocator import keep_freed_memory
from toxlib.models.bundled import BUNDLED, converted_dir
from toxlib.models.cpu_kernels import check_strict_gemm
from toxlib.models.device import configure_cpu_threads, pick_device, pick_dtype
from toxlib.models.float64 import float64_throughout
from toxlib.models.lm_head import slice_lm_head
from toxlib.models.names import known_models, target_of
from toxlib.models.random_weights import apply_fit
from toxlib.models.weights_id import WEIGHT_SUFFIXES, folder_weights_id, hub_revision
from toxlib.store import paths
from toxlib.store.artefacts import artefact_file, artefact_name

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
#: seconds the hub gets to answer the reachability probe (DNS included) before a load falls back to the local cache
HUB_PROBE_TIMEOUT = 2.0
_hub_answers: dict[str, bool] = {}


def hub_reachable(timeout: float = HUB_PROBE_TIMEOUT) -> bool:
    """Whether the Hugging Face hub (``HF_ENDPOINT``, default https://huggingface.co) answers an HTTP request
    within ``timeout`` seconds, name resolution included; False at once when HF_HUB_OFFLINE (or
    TRANSFORMERS_OFFLINE) is set. Asked once per endpoint and process. Without this, a load offline spends tens of
    seconds in the hub client's retries before it reports that the hub cannot be reached."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or settings.flag("HF_HUB_OFFLINE"):
        return False
    endpoint = constants.ENDPOINT
    if endpoint not in _hub_answers:
        import requests

        answered = threading.Event()

        def probe():
            try:
                requests.head(endpoint, timeout=timeout, allow_redirects=False)
                answered.set()
            except requests.RequestException:
                pass

        # a thread, because requests' timeout does not bound name resolution
        threading.Thread(target=probe, daemon=True, name="toxlib-hub-probe").start()
        _hub_answers[endpoint] = answered.wait(timeout)
    return _hub_answers[endpoint]


class LanguageModel:
    """A causal (or masked) LM and what generation needs to know about it, its weights read on first use.

    name, device, dtype, source, description: as given to ``load``.
    weights_id: "sha256:<hex>" of the weight files (bundled GGUF or local files) or "hf:<id>@<commit>" (or
        "hf:<id>@sha256:<hex of the parameters>" where no commit is known: ``hub_revision``), or, for a model
        continued-pretrained by ``toxlib.steer.adapt``, "adapted:<hex of its training inputs>"
        (``adapted_weights_id``); part of every cache key, known without reading the weights.
    model / tokenizer: the transformers model (eval mode, on ``device``) and tokenizer (left padding, a pad token).
      Each is loaded the first time it is used, so a chapter whose generations, scores and perplexities all come
      from the caches never reads weights (about 3 s per model on a 2-core CPU). ``loaded`` says whether the
      weights are in memory.
    start_token / start_ids: where unprompted generation starts ("start of sequence" differs per model).
    stop_ids: token ids that end a continuation (the model's generation_config eos ids, as ``generate`` uses them).
    """

    def __init__(self, name: str, device: torch.device, dtype: torch.dtype, weights_id: str, source: str,
                 load_model, load_tokenizer, start_token: str | None = None, start_note: str | None = None,
                 description: str = "", folder: Path | None = None, kind: str = "causal"):
        self.name, self.device, self.dtype, self.weights_id, self.source = name, device, dtype, weights_id, source
        self.folder, self.kind = folder, kind
        self.description = description or name
        self._load_model, self._load_tokenizer = load_model, load_tokenizer
        self._model = self._tokenizer = None
        self._start_token, self._start_note = start_token, start_note
        self._lock = threading.RLock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> torch.nn.Module:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    # the LM head in vocabulary slices: the same logits, faster (toxlib.models.lm_head); a
                    # float64 model's norms and rotary embeddings in float64 too (toxlib.models.float64)
                    model = float64_throughout(self._load_model().to(self.device).eval())
                    self._model = slice_lm_head(model)
        return self._model

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    tokenizer = self._load_tokenizer()
                    _prepare_tokenizer(tokenizer)
                    self._tokenizer = tokenizer
        return self._tokenizer

    @property
    def start_token(self) -> str:
        if self._start_token is None:
            self._start_token = self.tokenizer.bos_token or self.tokenizer.eos_token
        return self._start_token

    @property
    def start_note(self) -> str:
        if self._start_note is None:
            kind = "BOS" if self.tokenizer.bos_token else "EOS"
            self._start_note = f"{self.start_token} (the tokenizer's {kind} token)"
        return self._start_note

    @start_token.setter
    def start_token(self, token: str) -> None:
        self._start_token = token

    @start_note.setter
    def start_note(self, note: str) -> None:
        self._start_note = note

    @functools.cached_property
    def stop_ids(self) -> tuple[int, ...]:
        return _stop_ids(self.model, self.tokenizer)

    @property
    def start_ids(self) -> list[int]:
        return [self.tokenizer.convert_tokens_to_ids(self.start_token)]

    @property
    def pad_id(self) -> int:
        return self.tokenizer.pad_token_id

    def architecture(self) -> dict:
        """Layers, heads, hidden size, vocabulary and parameter counts (total, embedding, non-embedding). Before the
        weights are loaded, read from the model's config through a weightless copy on the meta device."""
        model = self.model if self.loaded or self.folder is None else _skeleton(self.folder, self.kind)
        return architecture(model) | {"model": self.name, "dtype": str(self.dtype).removeprefix("torch.")}

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "not loaded yet"
        return (f"LanguageModel({self.name!r}, {self.source}, {self.device}, {self.dtype}, {self.weights_id[:23]}..., "
                f"{state})")


def text_config(model: torch.nn.Module):
    """The config of the language model itself: a multimodal model's text part, otherwise the model's config."""
    return model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config


def architecture(model: torch.nn.Module) -> dict:
    """Architecture facts of a transformers model: a dict with model_type, layers, heads, kv_heads, hidden_size,
    intermediate_size, vocab_size, params, embedding_params, non_embedding_params (tied LM head counted once)."""
    cfg = text_config(model)

    def first(*names):
        return next((getattr(cfg, n) for n in names if getattr(cfg, n, None) is not None), None)

    params = sum(p.numel() for p in model.parameters())
    embedding = model.get_input_embeddings().weight.numel()
    return {
        "model_type": cfg.model_type,
        "layers": first("num_hidden_layers", "n_layer"),
        "heads": first("num_attention_heads", "n_head"),
        "kv_heads": first("num_key_value_heads", "num_attention_heads", "n_head"),
        "hidden_size": first("hidden_size", "n_embd", "d_model"),
        "intermediate_size": first("intermediate_size", "n_inner"),
        "vocab_size": first("vocab_size"),
        "params": params,
        "embedding_params": embedding,
        "non_embedding_params": params - embedding,
        "tied_embeddings": bool(getattr(cfg, "tie_word_embeddings", False)),
    }


def describe_models(lms: list[LanguageModel]) -> pd.DataFrame:
    """One row per loaded model: model, description, source, architecture facts, parameters in millions,
    start token for unprompted generation (start_note), dtype, device."""
    rows = []
    for lm in lms:
        arch = lm.architecture()
        rows.append({"model": lm.name, "description": lm.description, "source": lm.source,
                     **{k: arch[k] for k in ("model_type", "layers", "heads", "kv_heads", "hidden_size",
                                             "intermediate_size", "vocab_size")},
                     "params_m": round(arch["params"] / 1e6, 1),
                     "non_embedding_params_m": round(arch["non_embedding_params"] / 1e6, 1),
                     "start_of_sequence": lm.start_note, "dtype": arch["dtype"], "device": str(lm.device)})
    return pd.DataFrame(rows)


def load(name: str, device: str | None = None, dtype: str | torch.dtype | None = None,
         threads: int | None = None, kind: str = "causal", names: Mapping[str, str] | None = None) -> LanguageModel:
    """Load a causal LM for generation and scoring.

    name: a bundled model (``known_models()``: smollm2-135m, gemma3-270m), a local directory with a transformers
      model, a Hugging Face hub id such as "gpt2-large" (needs hub access or the model in the local HF cache), or a
      short name given to one of those (``names``, default those given by ``toxlib.models.names.name_models``; the
      model then carries the short name).
    device: "cpu", "cuda", "cuda:1", ... or None/"auto" for CUDA when available. threads: CPU threads (default:
      the usable cores). dtype: "float32"/"bfloat16"/"float16"/"float64" or None/"auto" for float32 on any device
      (bf16 is opt-in; float64: norms and rotary embeddings in float64 too, the precision whose rows depend least
      on the CPU: ``toxlib.models.float64``). Rows computed on a GPU are cached apart from a CPU's
      (``toxlib.models.device.kernel_key``).
    kind: "causal" (generation, perplexity) or "masked" (pseudo-perplexity; hub ids and local directories only).
    """
    if kind not in ("causal", "masked"):
        raise UnknownNameError(f"unknown model kind {kind!r}; known: causal, masked")
    dev = pick_device(device)
    dt = pick_dtype(dtype, dev)
    if dev.type == "cpu":
        check_strict_gemm()  # warns when float32 rows could depend on their batch (toxlib.models.cpu_kernels)
        configure_cpu_threads(threads)
        keep_freed_memory()  # each decoding step's large logits reuse mapped pages (toxlib.models.allocator)
    target = target_of(name, names)  # a short name a reader gave a folder or hub id (toxlib.models.names)
    if name in BUNDLED:
        spec = BUNDLED[name]
        folder, source, weights_id = converted_dir(spec), "bundled", f"sha256:{spec.gguf_sha256}"
        start_token, start_note, description = spec.start_token, spec.start_note, spec.description
    elif Path(target).expanduser().is_dir():
        folder, source = Path(target).expanduser().resolve(), "local"
        if not (folder / "config.json").is_file():
            raise ModelUnavailableError(f"cannot load a {kind} model from {folder}: it has no config.json (save "
                                        "the model there with transformers' save_pretrained)")
        weights_id = folder_weights_id(folder)
        start_token = start_note = description = None
    elif HUB_ID.match(target):
        folder, source, weights_id = target, "hub", None
        start_token = start_note = description = None
    else:
        raise UnknownNameError(
            f"unknown model {name!r}: not a bundled model ({', '.join(known_models())}), not an existing local "
            "directory, not a Hugging Face hub id (like 'gpt2-large' or 'EleutherAI/pythia-160m'), and not a short "
            "name given to one of those (a chapter's model_names parameter, such as {\"mine\": \"/path/to/folder\"})"
        )
    if weights_id is None:  # a hub id: its weights identifier is the commit the hub (or its cache) serves
        model, tokenizer = from_pretrained(target, folder, dt, kind)
        weights_id = f"hf:{target}@{hub_revision(model)}"
        load_model, load_tokenizer = (lambda: model), (lambda: tokenizer)
    else:
        load_model = functools.partial(folder_model, name, folder, dt, kind)
        load_tokenizer = functools.partial(_tokenizer, name, folder)
    return LanguageModel(name, dev, dt, weights_id, source, load_model, load_tokenizer, start_token=start_token,
                         start_note=start_note, description=description,
                         folder=folder if isinstance(folder, Path) else None, kind=kind)


#: model kind -> the transformers auto class that loads it.
AUTO_CLASSES = {"causal": "AutoModelForCausalLM", "masked": "AutoModelForMaskedLM",
                "classifier": "AutoModelForSequenceClassification"}


def from_pretrained(name: str, folder, dtype: torch.dtype, kind: str):
    """(model, tokenizer) of ``kind`` (a key of ``AUTO_CLASSES``) from a local folder (a Path) or a hub id (a str);
    an unreachable hub or a broken folder raise ``ModelUnavailableError`` saying how to get the model here."""
    import transformers

    auto = AUTO_CLASSES[kind]
    # offline, a hub id can still come from the local Hugging Face cache, without the hub client's retries
    local_only = {} if isinstance(folder, Path) or hub_reachable() else {"local_files_only": True}
    try:
        tokenizer = (local_tokenizer(folder) if isinstance(folder, Path)
                     else transformers.AutoTokenizer.from_pretrained(folder, **local_only))
        model = getattr(transformers, auto).from_pretrained(folder, dtype=dtype, **local_only)
    except OSError as err:
        if isinstance(folder, Path):
            raise ModelUnavailableError(f"cannot load a {kind} model from {folder}: {err}") from err
        usage = " (as a scorer: 'hf:DIR')" if kind == "classifier" else ""
        raise ModelUnavailableError(
            f"{kind} model {name!r} could not be loaded from the Hugging Face hub (bundled language models: "
            f"{', '.join(known_models())}): "
            + (f"the hub cannot be reached from here (no answer from {_hub_endpoint()} within "
               f"{HUB_PROBE_TIMEOUT:g} s, or HF_HUB_OFFLINE is set) and the model is not in the local Hugging Face "
               "cache. " if local_only else "the hub does not serve it (check the name) or cannot be reached, and "
               "it is not in the local Hugging Face cache. ") +
            f"On a machine with hub access, run once `python -c \"import transformers as t; "
            f"t.{auto}.from_pretrained('{name}').save_pretrained('DIR'); "
            f"t.AutoTokenizer.from_pretrained('{name}').save_pretrained('DIR')\"`, copy DIR here and pass its path "
            f"instead of the name{usage}. ({type(err).__name__}: {str(err).splitlines()[0]})"
        ) from err
    return model, tokenizer


def folder_model(name: str, folder: Path, dtype: torch.dtype, kind: str) -> torch.nn.Module:
    """The model of a local folder (``LanguageModel.model``'s loader), with the row temperature fitted for it when
    the folder is a random-weights copy that holds one (``toxlib.models.random_weights``); a broken folder raises
    ``ModelUnavailableError``."""
    import transformers

    try:
        model = getattr(transformers, AUTO_CLASSES[kind]).from_pretrained(folder, dtype=dtype)
    except OSError as err:
        raise ModelUnavailableError(f"cannot load a {kind} model {name!r} from {folder}: {err}") from err
    return apply_fit(model, folder)


def _skeleton(folder: Path, kind: str) -> torch.nn.Module:
    """The model of a local folder built from its config on the meta device: its shapes, no weights, no time."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(folder)
    with torch.device("meta"):
        return getattr(transformers, AUTO_CLASSES[kind]).from_config(config)


def _tokenizer(name: str, folder: Path):
    """The tokenizer of a local folder (``LanguageModel.tokenizer``'s loader)."""
    try:
        return local_tokenizer(folder)
    except (OSError, ValueError) as err:  # ValueError: transformers finds no tokenizer files to build one from
        raise ModelUnavailableError(
            f"cannot load the tokenizer of {name!r} from {folder}: {str(err).splitlines()[0]}. Save the model's "
            "tokenizer into the folder too (tokenizer.save_pretrained(folder), beside the weights)") from err


def local_tokenizer(folder: Path):
    """``AutoTokenizer.from_pretrained(folder)``, kept as a pickle in the artefact cache under
    ``model_cache_dir()`` (kind "tokenizers"), keyed by the folder's non-weight files (names, sizes, modification
    times) and the transformers version, and read from there afterwards. Why: transformers rebuilds a tokenizer
    from tokenizer.json in Python, which takes about 3 s for Gemma's 262k-entry vocabulary, against under 1 s from
    the pickle; every chapter loads its models once per run. The pickle holds the tokenizer as loaded (before
    ``_prepare_tokenizer``); an unreadable one is rebuilt."""
    import pickle

    import transformers

    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix not in WEIGHT_SUFFIXES)
    stamp = [transformers.__version__, str(folder)] + [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files]
    built = []

    def make(partial: Path) -> None:
        built.append(transformers.AutoTokenizer.from_pretrained(folder))
        partial.write_bytes(pickle.dumps(built[0]))

    path = artefact_file(artefact_name("tokenizers", folder.name, stamp, ".pkl"), make, root=paths.model_cache_dir())
    if built:
        return built[0]
    try:
        return pickle.loads(path.read_bytes())
    except Exception:  # a pickle from a broken write or another library build: made again
        path.unlink(missing_ok=True)
        return local_tokenizer(folder)


def _hub_endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def _prepare_tokenizer(tokenizer) -> None:
    """Left padding (new tokens line up at the right edge of a batch) and a pad token (EOS if the model has none)."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token


def _stop_ids(model, tokenizer) -> tuple[int, ...]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    ids = eos if isinstance(eos, (list, tuple)) else [eos]
    return tuple(int(i) for i in ids if i is not None)
