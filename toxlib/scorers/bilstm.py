"""tox-block 0.1.2, a Keras BiLSTM trained on the 2018 Jigsaw toxic-comment data, re-implemented in torch.

The weights (an HDF5 file read with h5py) and the fitted Keras ``Tokenizer`` (a pickle read without Keras, see
``load_tokenizer``) come from the installed ``tox_block`` package; TensorFlow is not needed. The network:
Embedding(20000, 50) -> Bidirectional(LSTM(50), concat) over all 100 steps (pads included: no mask_zero) ->
max over time -> Dense(50, relu) -> Dense(6, sigmoid); dropout is off at inference. The LSTM is Keras's, not
``nn.LSTM``: hard-sigmoid gates (clip(0.2 x + 0.5, 0, 1)) and kernel columns in gate order i, f, c, o.

Jigsaw labels -> Perspective names: toxic -> toxicity, severe_toxic -> severe_toxicity, obscene -> profanity,
threat -> threat, insult -> insult, identity_hate -> identity_attack. obscene -> profanity is an approximation:
Jigsaw's "obscene" (vulgar, sexually crude) is close to, not the same as, Perspective's "profanity" (swearing).

Scores are the model's sigmoid outputs. tox-block's ``make_predictions`` min-max rescales them by default
(``rescale=True``); that rescaling (``rescale`` below) is not applied, since it can leave [0, 1].
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from toxlib.common.errors import ModelUnavailableError
from toxlib.models.device import configure_cpu_threads, kernel_key, pick_device
from toxlib.scorers.base import BatchScores, Scorer

PACKAGE = "tox-block==0.1.2"
LABELS = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")
PERSPECTIVE_NAMES = {"toxic": "toxicity", "severe_toxic": "severe_toxicity", "obscene": "profanity",
                     "threat": "threat", "insult": "insult", "identity_hate": "identity_attack"}
MAXLEN = 100  # tox_block.config.config.MAX_SEQUENCE_LENGTH


def model_files() -> tuple[Path, Path]:
    """(weights .h5, tokenizer .pkl) of the installed tox_block 0.1.2; ModelUnavailableError if it is missing."""
    try:
        import tox_block
    except ImportError:
        raise ModelUnavailableError(
            f"the bilstm scorer needs tox-block's weights (not TensorFlow): pip install --no-deps {PACKAGE}") from None
    folder = Path(tox_block.__file__).parent / "trained_models"
    files = folder / "lstm_model_0.1.2.h5", folder / "encoder_0.1.2.pkl"
    if not all(f.is_file() for f in files):
        raise ModelUnavailableError(f"{folder} lacks the 0.1.2 model files: pip install --no-deps {PACKAGE}")
    return files


class _State:
    """Stand-in for the pickled Keras Tokenizer and tox-block's TokenSequencer: keeps their ``__dict__``."""


class _TokenizerUnpickler(pickle.Unpickler):
    """Unpickles tox-block's encoder without Keras, refusing every global except the few its state needs."""

    SAFE = {("collections", "OrderedDict"), ("collections", "defaultdict"), ("builtins", "int"),
            ("builtins", "dict"), ("builtins", "list")}

    def find_class(self, module, name):
        if (module, name) in self.SAFE:
            return super().find_class(module, name)
        if (name == "Tokenizer" and module.startswith(("keras", "tensorflow"))) or \
                (name == "TokenSequencer" and module.startswith("tox_block")):
            return _State
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from tox-block's tokenizer pickle")


@dataclass
class KerasTokenizer:
    """The fitted Keras ``Tokenizer.texts_to_sequences`` + ``pad_sequences`` (keras_preprocessing 1.1 behaviour)."""

    word_index: dict[str, int]
    num_words: int | None
    filters: str
    lower: bool
    split: str
    char_level: bool
    oov_token: str | None

    def __post_init__(self):
        self._table = str.maketrans({c: self.split for c in self.filters})

    def words(self, text: str) -> list[str]:
        """Keras's text_to_word_sequence: lowercase, filter characters -> ``split``, split on ``split`` only
        (so "\\r" or a non-breaking space does not separate words), drop empty strings."""
        if self.lower:
            text = text.lower()
        if self.char_level:
            return list(text)
        return [w for w in text.translate(self._table).split(self.split) if w]

    def ids(self, text: str) -> list[int]:
        """Word indices; words not in the index, or ranked ``num_words`` or lower, are dropped (or -> oov_token)."""
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        out = []
        for w in self.words(text):
            i = self.word_index.get(w)
            if i is not None and not (self.num_words and i >= self.num_words):
                out.append(i)
            elif oov is not None:
                out.append(oov)
        return out

    def encode(self, texts: list[str], maxlen: int = MAXLEN) -> np.ndarray:
        """(n, maxlen) int64: ``ids`` padded with 0 and truncated at the front (Keras's padding/truncating='pre')."""
        out = np.zeros((len(texts), maxlen), dtype=np.int64)
        for row, text in enumerate(texts):
            ids = self.ids(text)[-maxlen:]
            if ids:
                out[row, maxlen - len(ids):] = ids
        return out


def load_tokenizer(path: str | Path) -> KerasTokenizer:
    """tox-block's fitted tokenizer from its pickle (a TokenSequencer holding a Keras Tokenizer), without Keras."""
    with open(path, "rb") as f:
        state = _TokenizerUnpickler(f).load()
    tok = getattr(state, "tokenizer", state).__dict__
    return KerasTokenizer(dict(tok["word_index"]), tok["num_words"], tok["filters"], tok["lower"], tok["split"],
                          tok.get("char_level", False), tok.get("oov_token"))


def hard_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """Keras 2's hard_sigmoid: clip(0.2 x + 0.5, 0, 1)."""
    return (0.2 * x + 0.5).clamp_(0.0, 1.0)


def keras_lstm(xw: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The Keras LSTM recurrence for D independent directions at once (hard-sigmoid gates, order i, f, c, o).

    xw: (n, T, D, 4H) input projections x @ kernel + bias, each direction's inputs already in its own time order;
    u: (D, H, 4H) recurrent kernels. Returns the hidden states (n, T, D, H), in the same order; zero initial state.
    """
    n, steps, d, h4 = xw.shape
    hidden = h4 // 4
    u_all = torch.block_diag(*u)  # (D*H, D*4H): one matmul per step for every direction
    h = xw.new_zeros(n, d * hidden)
    c = xw.new_zeros(n, d, hidden)
    out = []
    for t in range(steps):
        z = torch.addmm(xw[:, t].reshape(n, d * h4), h, u_all).view(n, d, 4, hidden)
        i, f, o = hard_sigmoid(z[:, :, 0]), hard_sigmoid(z[:, :, 1]), hard_sigmoid(z[:, :, 3])
        c = f * c + i * torch.tanh(z[:, :, 2])
        state = o * torch.tanh(c)
        out.append(state)
        h = state.reshape(n, d * hidden)
    return torch.stack(out, 1)


class BiLSTMNet(nn.Module):
    """tox-block's network. Input: (n, T) int64 word indices (0 = padding). Output: (n, 6) sigmoid probabilities."""

    def __init__(self, weights: dict[str, np.ndarray]):
        super().__init__()
        t = {k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in weights.items()}
        # Embedding then input kernel is a per-word table: precompute x @ W + b for every word, both directions.
        kernel = torch.cat([t["forward_kernel"], t["backward_kernel"]], 1)
        bias = torch.cat([t["forward_bias"], t["backward_bias"]])
        self.register_buffer("proj", t["embeddings"] @ kernel + bias)  # (vocab, 2*4H)
        self.register_buffer("recurrent", torch.stack([t["forward_recurrent"], t["backward_recurrent"]]))
        self.dense = nn.Linear(*t["dense_kernel"].shape)
        self.out = nn.Linear(*t["out_kernel"].shape)
        with torch.no_grad():
            for layer, name in ((self.dense, "dense"), (self.out, "out")):
                layer.weight.copy_(t[f"{name}_kernel"].T)
                layer.bias.copy_(t[f"{name}_bias"])

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        n, steps = ids.shape
        xw = self.proj[ids].view(n, steps, 2, -1)
        xw[:, :, 1] = xw[:, :, 1].flip(1)  # Keras runs the backward LSTM on the reversed sequence
        # Max over time is order-free, so the backward states need not be flipped back; concat is [forward, backward].
        pooled = keras_lstm(xw, self.recurrent).amax(1).reshape(n, -1)
        return torch.sigmoid(self.out(torch.relu(self.dense(pooled))))


def load_weights(path: str | Path) -> dict[str, np.ndarray]:
    """The Keras model's weights from its HDF5 file, by our names (kernels as Keras stores them: (in, out))."""
    import h5py

    with h5py.File(path, "r") as f:
        w = f["model_weights"]
        bi = "bidirectional/bidirectional"
        out = {"embeddings": w["embedding/embedding/embeddings:0"],
               "dense_kernel": w["dense/dense/kernel:0"], "dense_bias": w["dense/dense/bias:0"],
               "out_kernel": w["dense_1/dense_1/kernel:0"], "out_bias": w["dense_1/dense_1/bias:0"]}
        for side in ("forward", "backward"):
            out[f"{side}_kernel"] = w[f"{bi}/{side}_lstm/kernel:0"]
            out[f"{side}_recurrent"] = w[f"{bi}/{side}_lstm/recurrent_kernel:0"]
            out[f"{side}_bias"] = w[f"{bi}/{side}_lstm/bias:0"]
        return {k: v[()] for k, v in out.items()}


#: tox_block.config.config.RESCALE_PROBA: (min, max) per label for tox-block's default min-max rescaling.
RESCALE_PROBA = {"toxic": (0.002116, 0.999858), "severe_toxic": (0.000011, 0.648682),
                 "obscene": (0.000347, 0.997533), "threat": (0.000040, 0.918887),
                 "insult": (0.000373, 0.986303), "identity_hate": (0.000074, 0.901117)}


def rescale(probs: np.ndarray) -> np.ndarray:
    """tox-block's ``rescale=True``: |p - min| / (max - min) per label. probs: (n, 6) in LABELS order."""
    lo, hi = np.array([RESCALE_PROBA[k] for k in LABELS]).T
    return np.abs((probs - lo) / (hi - lo))


class BiLSTMScorer(Scorer):
    """tox-block 0.1.2 in torch. Scores: six columns in [0, 1] (see the module docstring for the mapping)."""

    name = "bilstm"
    version = "tox-block-0.1.2-torch-1"
    attributes = tuple(PERSPECTIVE_NAMES[k] for k in LABELS)
    chunk_size = 4096
    batch_size = 256
    window, window_unit, window_side = MAXLEN, "words", "last"
    description = "tox-block 0.1.2: BiLSTM trained on the 2018 Jigsaw toxic-comment data (6 attributes)"

    def __init__(self, device: str | torch.device | None = None, threads: int | None = None):
        weights_file, tokenizer_file = model_files()
        self.device = pick_device(device)
        if self.device.type == "cpu":
            configure_cpu_threads(threads)
        self.tokenizer = load_tokenizer(tokenizer_file)
        self.net = BiLSTMNet(load_weights(weights_file)).to(self.device).eval()
        kernels = kernel_key(self.device)
        if kernels:  # a GPU's scores are cached apart from a CPU's (toxlib.models.device.kernel_key)
            self.version = f"{type(self).version}-{kernels}"

    def probabilities(self, texts: list[str]) -> np.ndarray:
        """(n, 6) float32 sigmoid outputs in LABELS order (tox-block's ``rescale=False``)."""
        ids = self.tokenizer.encode(texts)
        out = np.empty((len(texts), len(LABELS)), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = torch.from_numpy(ids[start:start + self.batch_size]).to(self.device)
                out[start:start + len(batch)] = self.net(batch).float().cpu().numpy()
        return out

    def text_lengths(self, texts: list[str]) -> list[int]:
        """Words of each text that the network sees (those in its vocabulary); it reads the last ``MAXLEN``."""
        return [len(self.tokenizer.ids(text)) for text in texts]

    def score_batch(self, texts: list[str]) -> BatchScores:
        return BatchScores(self.probabilities(texts).astype(float))
