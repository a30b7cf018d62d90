"""VOCAB-SHIFT (RealToxicityPrompts §5.2): boost the logits of tokens associated with non-toxic text.

The paper learns "a 2-dimensional representation of toxicity and non-toxicity for every token" W (V x 2) and adds
beta * W @ t to the logits at every step, t in R^2 encoding (non-)toxicity, beta = 3; it cites SAGE (Eisenstein et
al., 2011: sparse additive deviations of a class's log-frequencies from a background distribution) and Affect-LM
(Ghosh et al., 2017: an additive, affect-category-dependent logit term learned by maximum likelihood). The
training details (its Appendix B) are not in our copy, so this is our reading:

* the language model stays frozen and is the background distribution; column c of W is the additive log-odds
  deviation of class c (0 = toxic, 1 = non-toxic) from it: for a text of class c every next token is modelled as
  p(x | context) ∝ p_LM(x | context) * exp(beta * W[x, c])  (t = one-hot of the text's class, as in Affect-LM);
* W moves towards the maximum-likelihood solution of that model on the labelled corpus by Generalized Iterative
  Scaling (each epoch is one GIS step from the previous W; the default single epoch is the first step from 0,
  not the converged solution): every token's indicator is one feature and the features of a position sum to 1, so
  the GIS update beta * W[x, c] += log(count_c(x) / expected_c(x)) (expected_c: the model's summed probability of
  x over the positions of class-c texts) increases the likelihood monotonically, needs no learning rate and is
  deterministic. One epoch = one forward pass of the frozen LM over the corpus and one update; W starts at 0.
* as a prior (SAGE's role), both counts get ``smoothing`` pseudo-counts, which keeps tokens with little evidence
  near 0 instead of at +-infinity.

At generation the shift is beta * W @ t with t = (0, 1) (non-toxic): beta * W[:, 1] is added to the logits.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import tqdm
from toxlib.models.batching import budget_batches, pad
from toxlib.models.perplexity import default_batch_tokens
from toxlib.steer import Steering

VERSION = "vocab-shift-gis-v1"  # bump when training changes: it keys the cached weights

TOXIC_COLUMN, NONTOXIC_COLUMN = 0, 1  # columns of W


def check_corpus(corpus: pd.DataFrame) -> pd.DataFrame:
    """The labelled corpus with columns text (str) and toxic (0/1 int), both classes present; raises otherwise."""
    missing = {"text", "toxic"} - set(corpus.columns)
    if missing:
        raise ValueError(f"the corpus needs columns text and toxic; missing {sorted(missing)}")
    labels = set(pd.unique(corpus["toxic"]))
    if not labels <= {0, 1} or len(labels) < 2:
        raise ValueError(f"corpus['toxic'] must hold both labels 0 and 1 (and nothing else), got {sorted(labels)}")
    return corpus.reset_index(drop=True)


def subsample(corpus: pd.DataFrame, max_texts: int | None, seed: int) -> pd.DataFrame:
    """At most ``max_texts`` rows of the corpus, drawn without replacement by a generator seeded with ``seed``
    (original order kept); all rows when max_texts is None or not smaller than the corpus."""
    if max_texts is None or len(corpus) <= max_texts:
        return corpus
    rows = np.sort(np.random.default_rng(seed).choice(len(corpus), size=max_texts, replace=False))
    return corpus.iloc[rows].reset_index(drop=True)


def encode_with_start(lm, text: str, max_tokens: int) -> list[int]:
    """Token ids of ``text`` after the model's start token (added unless the tokenizer already put it first),
    the text cut to its first ``max_tokens`` tokens, so every text token is predicted from a context."""
    start = list(lm.start_ids)
    ids = lm.tokenizer(text, add_special_tokens=False).input_ids
    return start + ids[:max_tokens]


def tensor_sha256(*tensors: torch.Tensor) -> str:
    """sha256 (hex) of the tensors' float32 values and shapes, in order."""
    digest = hashlib.sha256()
    for t in tensors:
        array = t.detach().to("cpu", torch.float32).contiguous().numpy()
        digest.update(json.dumps(list(array.shape)).encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


@dataclass
class VocabShiftWeights:
    """Learned token associations.

    W: (V, 2) float32 on the CPU, V = the model's logits width; column 0 toxic, column 1 non-toxic; values are
      log-odds deviations from the frozen LM in units of 1/beta_train (beta_train * W is the shift in nats).
    meta: JSON-serialisable facts about the training (model, weights id, settings, token counts, NLL per epoch).
    """

    W: torch.Tensor
    meta: dict = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return tensor_sha256(self.W)

    def save(self, path: str | Path) -> Path:
        """Write W and meta to one safetensors file (meta as JSON in its header); returns the path."""
        from safetensors.torch import save_file

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_file({"W": self.W.contiguous()}, str(path), metadata={"meta": json.dumps(self.meta)})
        return path

    @classmethod
    def load(cls, path: str | Path) -> "VocabShiftWeights":
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            return cls(W=f.get_tensor("W"), meta=json.loads(f.metadata()["meta"]))


def _class_pass(lm, encoded: list[list[int]], labels: np.ndarray, shift: torch.Tensor, batch_tokens: int,
                progress: bool, desc: str):
    """One forward pass of the frozen LM over the encoded texts. shift: (V, 2) = beta * W. Returns (counts (2, V)
    float64: observed next tokens per class, expected (2, V) float64: summed probabilities of each token under
    logits + shift[:, class] per class, nll (2,) float64 summed, tokens (2,) int)."""
    vocab = shift.shape[0]
    counts = torch.zeros(2, vocab, dtype=torch.float64)
    expected = torch.zeros(2, vocab, dtype=torch.float64)
    nll = np.zeros(2)
    tokens = np.zeros(2, dtype=int)
    order = np.argsort([len(e) for e in encoded], kind="stable")
    shift = shift.to(lm.device)
    for batch in tqdm(budget_batches([len(encoded[r]) for r in order], batch_tokens), disable=not progress,
                      desc=desc, unit="batch"):
        rows = order[batch]
        ids, mask = pad([encoded[r] for r in rows], lm.pad_id or 0, lm.device, side="right")
        with torch.inference_mode():
            logits = lm.model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
            if logits.shape[-1] != vocab:
                raise ValueError(f"W has {vocab} rows but {lm.name} gives {logits.shape[-1]} logits")
            scored = mask[:, 1:].bool()
            row_class = torch.as_tensor(labels[rows], device=lm.device)[:, None].expand_as(scored)
            for c in (TOXIC_COLUMN, NONTOXIC_COLUMN):
                chosen = scored & (row_class == (1 if c == TOXIC_COLUMN else 0))
                if not chosen.any():
                    continue
                z = logits[chosen] + shift[:, c]
                targets = ids[:, 1:][chosen]
                log_probs = torch.log_softmax(z, dim=-1)
                nll[c] -= float(log_probs.gather(-1, targets[:, None]).double().sum())
                expected[c] += log_probs.exp_().double().sum(0).cpu()
                counts[c] += torch.bincount(targets, minlength=vocab).double().cpu()
                tokens[c] += int(targets.numel())
    return counts, expected, nll, tokens


def train_vocab_shift(lm, corpus: pd.DataFrame, beta: float = 3.0, epochs: int = 1, max_texts: int | None = 2000,
                      max_tokens: int = 32, smoothing: float = 1.0, seed: int = 0, batch_tokens: int | None = None,
                      progress: bool = False) -> VocabShiftWeights:
    """Learn W (V x 2) from a labelled corpus with the frozen ``lm`` (maximum likelihood by GIS, see the module).

    lm: a ``toxlib.models.LanguageModel``. corpus: DataFrame with columns text (str) and toxic (0/1 int).
    beta: the strength the shift is trained under (the paper's beta = 3; use the same at generation).
    epochs: GIS updates, one forward pass of the LM over the texts each (one pass: ~2,000 texts x 32 tokens take
      about 2 minutes for SmolLM2-135M on 2 CPU cores). max_texts: texts used, drawn with ``seed`` (None: all).
    max_tokens: tokens kept from the start of each text. smoothing: pseudo-count added to observed and expected
      counts (larger: weights of rare tokens shrink towards 0). batch_tokens: padded tokens per forward pass
      (default: logits of ~512 MiB).
    Returns VocabShiftWeights with W (V, 2) float32 (column 0 toxic, 1 non-toxic) and meta, including
    nll_per_token: the corpus NLL per token (per class and overall) before each update (epoch 0 = the plain LM).
    """

    corpus = subsample(check_corpus(corpus), max_texts, seed)
    encoded = [encode_with_start(lm, str(t), max_tokens) for t in corpus["text"]]
    labels = corpus["toxic"].astype(int).to_numpy()
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    W = torch.zeros(vocab, 2, dtype=torch.float64)
    history = []
    counts = None
    for epoch in range(epochs):
        counts, expected, nll, tokens = _class_pass(lm, encoded, labels, (beta * W).float(), batch_tokens or
                                                    default_batch_tokens(lm), progress,
                                                    f"vocab-shift epoch {epoch + 1}/{epochs}")
        history.append({"epoch": epoch, "toxic": nll[TOXIC_COLUMN] / max(tokens[TOXIC_COLUMN], 1),
                        "nontoxic": nll[NONTOXIC_COLUMN] / max(tokens[NONTOXIC_COLUMN], 1),
                        "all": nll.sum() / max(tokens.sum(), 1)})
        W += (torch.log(counts + smoothing) - torch.log(expected + smoothing)).T / beta
    meta = {"method": VERSION, "model": lm.name, "weights_id": lm.weights_id, "beta_train": beta,
            "epochs": epochs, "max_texts": max_texts, "max_tokens": max_tokens, "smoothing": smoothing, "seed": seed,
            "n_texts": len(corpus), "n_toxic_texts": int(labels.sum()),
            "n_tokens": int(counts.sum()) if counts is not None else 0, "nll_per_token": history}
    return VocabShiftWeights(W=W.float(), meta=meta)


def top_tokens(weights: VocabShiftWeights, tokenizer, k: int = 20) -> pd.DataFrame:
    """The k tokens most associated with toxicity and the k most associated with non-toxicity, ranked by
    association = W[:, toxic] - W[:, non-toxic] (highest first for "toxic", lowest first for "non-toxic").

    Returns 2k rows: side ("toxic"/"non-toxic"), rank (1..k), token_id, token (decoded text), w_toxic, w_nontoxic,
    association.
    """
    W = weights.W.double()
    n = min(W.shape[0], len(tokenizer))  # rows past the tokenizer (padded vocabularies) are not tokens
    association = (W[:n, TOXIC_COLUMN] - W[:n, NONTOXIC_COLUMN])
    rows = []
    for side, ids in (("toxic", association.topk(k).indices), ("non-toxic", (-association).topk(k).indices)):
        for rank, i in enumerate(ids.tolist(), 1):
            rows.append({"side": side, "rank": rank, "token_id": i, "token": tokenizer.decode([i]),
                         "w_toxic": float(W[i, TOXIC_COLUMN]), "w_nontoxic": float(W[i, NONTOXIC_COLUMN]),
                         "association": float(association[i])})
    return pd.DataFrame(rows)


class VocabShiftProcessor:
    """Adds a fixed (V,) shift to every row's logits: ``processor(input_ids, scores) -> scores + shift``."""

    def __init__(self, shift: torch.Tensor):
        self.shift = shift

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if scores.shape[-1] != self.shift.shape[0]:
            raise ValueError(f"vocab-shift weights have {self.shift.shape[0]} tokens, the logits {scores.shape[-1]}")
        return scores + self.shift.to(scores.device, scores.dtype)


class VocabShift(Steering):
    """Add beta * W @ t to the logits of every step (t = (0, 1): towards non-toxic tokens, as in the paper).

    weights: VocabShiftWeights learned for the same model (the logits width must equal W's rows).
    beta: boosting strength (the paper: 3). t: the (toxic, non-toxic) code added; (0, 1) boosts non-toxic tokens,
      (1, 0) toxic ones, (-1, 1) uses the difference of the two columns.
    """

    name = "vocab-shift"

    def __init__(self, weights: VocabShiftWeights, beta: float = 3.0, t: tuple[float, float] = (0.0, 1.0)):
        self.weights, self.beta, self.t = weights, float(beta), tuple(float(x) for x in t)
        self._sha = weights.sha256
        self._processors = {}

    def shift(self) -> torch.Tensor:
        """(V,) float32: beta * W @ t."""
        return self.beta * (self.weights.W.float() @ torch.tensor(self.t, dtype=torch.float32))

    def logits_processors(self, lm) -> list:
        key = str(lm.device)
        if key not in self._processors:
            self._processors[key] = [VocabShiftProcessor(self.shift().to(lm.device))]
        return self._processors[key]

    def config(self) -> dict:
        return {"name": self.name, "beta": self.beta, "t": list(self.t), "vocab": int(self.weights.W.shape[0]),
                "weights_sha256": self._sha}
