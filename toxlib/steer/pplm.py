"""PPLM (Dathathri et al., 2020) as RealToxicityPrompts §5.2 used it: steer each decoding step by gradient ascent
on a toxicity discriminator's log p(non-toxic), applied to the model's past key/values.

The paper steered GPT-2 with the authors' released toxicity ClassificationHead and the Hugging Face
``run_pplm.py``. That head only fits GPT-2-medium's hidden states, so ``train_discriminator`` trains the same kind
of head for the model at hand: one linear layer (hidden size -> 2 classes) on the mean of the frozen LM's final
hidden states over a text's tokens (PPLM's ``avg_hidden``), by Adam on a labelled corpus.

``PPLM`` follows ``run_pplm.py``'s ``perturb_past`` per step, for every row of the batch independently:
  1. the past key/values of the tokens before the last one (perturbed by earlier steps, as in the original, where
     the perturbed past is carried on) get an additive perturbation, 0 at first;
  2. ``num_iterations`` times: run the last token on past + perturbation; the discriminator sees the mean of the
     unperturbed final hidden states of the earlier tokens, the perturbed one of the last token and
     ``horizon_length`` more computed from the expected next-token embedding (probabilities @ embedding matrix) on
     the unperturbed past; loss = -log p_disc(non-toxic) + kl_scale * KL(perturbed next-token distribution ||
     unperturbed one); the perturbation moves by -step_size * grad / ||grad||^gamma, the norm taken per layer
     (keys and values together) and per row (the original ran one row at a time);
  3. the last token runs once more on the final perturbed past; its next-token distribution is fused with the
     unperturbed one as p_pert^gm_scale * p_unpert^(1 - gm_scale) (returned as log-probabilities; the engine's
     sampler renormalises).
Deviations: the "unperturbed" distribution (KL target, fusion) is the ``scores`` the processor receives, i.e. the
model's logits after any earlier processor (tokens banned there stay banned); ``window_length`` perturbs the
*latest* positions of the past (the original's mask covers the earliest ones, an apparent bug); a horizon longer
than 1 feeds each horizon step's own expected embedding (the original re-feeds the first one); PPLM's top-k 10
filter after fusion is a decoding setting here (``DecodingConfig(top_k=10)`` for the original's sampling, or
top-p as in RealToxicityPrompts); ``grad_length`` and ``decay`` are not implemented (their defaults are no-ops).
Only sample and greedy decoding are supported (beam search reorders rows without telling the processor).

Costs: per step, one token through the model on each cache (unperturbed and perturbed), ``num_iterations``
forward + backward passes of one token (plus ``horizon_length`` tokens each), and the final forward: about
3 + 4 * num_iterations * (1 + horizon_length) token-forward equivalents per generated token, against 1 for plain
decoding (measured on SmolLM2-135M, CPU: 10-25x slower than plain decoding; batch many rows, the 1-token passes
are bound by reading the weights). Two key/value caches per row are kept besides the engine's own. Use a float32
model: in a bf16 cache, perturbations below the cache's rounding (~0.4% of a value) are lost.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from toxlib.batching import budget_batches, pad
from toxlib.steer import Steering
from toxlib.steer.vocab_shift import check_corpus, subsample, tensor_sha256

DISCRIMINATOR_VERSION = "pplm-head-v1"  # bump when training changes: it keys the cached discriminators
NONTOXIC_CLASS, TOXIC_CLASS = 0, 1  # the discriminator's classes, as corpus["toxic"]
SMALL_CONST = 1e-15  # run_pplm.py's guard against log(0) and division by a zero gradient norm


def encode_text(lm, text: str, max_tokens: int) -> list[int]:
    """Token ids of a text as generation encodes a prompt (``tokenizer(text)``, special tokens included), cut to
    the first ``max_tokens``; "" gives the model's start token."""
    ids = lm.tokenizer(text).input_ids[:max_tokens] if text else []
    return ids or list(lm.start_ids)


def mean_hidden(lm, texts: list[str], max_tokens: int = 32, batch_tokens: int = 4096,
                progress: bool = False) -> torch.Tensor:
    """Mean of the frozen LM's final hidden states (after the final norm, the input of the LM head) over each
    text's tokens (``encode_text``). Returns (len(texts), hidden) float32 on the CPU, rows in input order."""
    encoded = [encode_text(lm, str(t), max_tokens) for t in texts]
    order = np.argsort([len(e) for e in encoded], kind="stable")
    decoder = lm.model.get_decoder()
    out = torch.zeros(len(texts), lm.model.config.get_text_config().hidden_size)
    for batch in tqdm(budget_batches([len(encoded[r]) for r in order], batch_tokens), disable=not progress,
                      desc=f"hidden states {lm.name}", unit="batch"):
        rows = order[batch]
        ids, mask = pad([encoded[r] for r in rows], lm.pad_id or 0, lm.device, side="right")
        with torch.inference_mode():
            hidden = decoder(input_ids=ids, attention_mask=mask).last_hidden_state.float()
            m = mask[..., None].float()
            out[torch.as_tensor(rows)] = ((hidden * m).sum(1) / m.sum(1)).cpu()
    return out


@dataclass
class Discriminator:
    """PPLM's ClassificationHead: logits = mean_hidden @ weight.T + bias.

    weight: (2, hidden) float32, bias: (2,) float32 (CPU); class 0 non-toxic, class 1 toxic.
    meta: JSON-serialisable facts (model, weights id, settings, train/held-out accuracy).
    """

    weight: torch.Tensor
    bias: torch.Tensor
    meta: dict = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return tensor_sha256(self.weight, self.bias)

    def logits(self, hidden_mean: torch.Tensor) -> torch.Tensor:
        """(rows, hidden) float -> (rows, 2) class logits (float32, on hidden_mean's device)."""
        w, b = self.weight.to(hidden_mean.device), self.bias.to(hidden_mean.device)
        return hidden_mean.float() @ w.T + b

    def predict_proba(self, lm, texts: list[str], max_tokens: int | None = None) -> np.ndarray:
        """P(toxic) per text, (len(texts),) float64 in [0, 1]; texts cut to ``max_tokens`` (default: as trained)."""
        features = mean_hidden(lm, list(texts), max_tokens or self.meta.get("max_tokens", 32))
        return torch.softmax(self.logits(features), -1)[:, TOXIC_CLASS].double().numpy()

    def save(self, path: str | Path) -> Path:
        """Write the head and meta to one safetensors file (meta as JSON in its header); returns the path."""
        from safetensors.torch import save_file

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_file({"weight": self.weight.contiguous(), "bias": self.bias.contiguous()}, str(path),
                  metadata={"meta": json.dumps(self.meta)})
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Discriminator":
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            return cls(weight=f.get_tensor("weight"), bias=f.get_tensor("bias"), meta=json.loads(f.metadata()["meta"]))


def train_discriminator(lm, corpus: pd.DataFrame, max_texts: int | None = 2000, max_tokens: int = 32,
                        epochs: int = 30, lr: float = 1e-2, batch_size: int = 64, weight_decay: float = 1e-4,
                        valid_fraction: float = 0.2, seed: int = 0, batch_tokens: int = 4096,
                        progress: bool = False) -> Discriminator:
    """Train the toxicity head on the frozen ``lm``'s mean hidden states.

    corpus: DataFrame with columns text (str) and toxic (0/1 int). max_texts: texts used, drawn with ``seed``
    (None: all); max_tokens: tokens kept from the start of each text. The hidden states are computed once (the
    cost: ~2,000 texts x 32 tokens take about 2 minutes for SmolLM2-135M on 2 CPU cores); then ``epochs`` of Adam
    (lr, weight_decay, minibatches of batch_size, shuffled with ``seed``) on cross-entropy, on standardised
    features; the standardisation is folded into the returned linear layer. A share ``valid_fraction`` of the
    texts (drawn with ``seed``) is held out and only scored.
    Returns a Discriminator; meta has train_accuracy, valid_accuracy (None when nothing is held out), n_train,
    n_valid and the settings.
    """
    corpus = subsample(check_corpus(corpus), max_texts, seed)
    features = mean_hidden(lm, corpus["text"].astype(str).tolist(), max_tokens, batch_tokens, progress).double()
    labels = torch.as_tensor(corpus["toxic"].astype(int).to_numpy())
    order = torch.randperm(len(corpus), generator=torch.Generator().manual_seed(seed))
    n_valid = int(round(valid_fraction * len(corpus)))
    valid, train = order[:n_valid], order[n_valid:]
    mu = features[train].mean(0)
    sigma = features[train].std(0).clamp(min=1e-6)
    x = ((features - mu) / sigma).float()
    head = torch.nn.Linear(x.shape[1], 2)
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    optimizer = torch.optim.Adam(head.parameters(), lr=lr, weight_decay=weight_decay)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.inference_mode(False), torch.enable_grad():
        for _ in range(epochs):
            shuffled = train[torch.randperm(len(train), generator=generator)]
            for start in range(0, len(shuffled), batch_size):
                rows = shuffled[start:start + batch_size]
                loss = torch.nn.functional.cross_entropy(head(x[rows]), labels[rows])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    weight = head.weight.detach().double() / sigma
    bias = head.bias.detach().double() - weight @ mu
    disc = Discriminator(weight=weight.float(), bias=bias.float())
    predicted = disc.logits(features.float()).argmax(-1)

    def accuracy(rows):
        return float((predicted[rows] == labels[rows]).float().mean()) if len(rows) else None

    disc.meta = {"method": DISCRIMINATOR_VERSION, "model": lm.name, "weights_id": lm.weights_id,
                 "hidden_size": int(features.shape[1]), "classes": ["non-toxic", "toxic"], "max_texts": max_texts,
                 "max_tokens": max_tokens, "epochs": epochs, "lr": lr, "batch_size": batch_size,
                 "weight_decay": weight_decay, "valid_fraction": valid_fraction, "seed": seed,
                 "n_train": len(train), "n_valid": n_valid, "train_accuracy": accuracy(train),
                 "valid_accuracy": accuracy(valid)}
    return disc


# ---------------------------------------------------------------------------------------------------------------
# Steering


def _make_cache(model, kvs, length: int):
    """A DynamicCache holding per-layer (keys, values) for ``length`` positions (None: an empty cache). Sliding-window
    layers hold their last window - 1 positions, as the engine's caches do, and are told the full length."""
    from transformers.cache_utils import DynamicCache

    cache = DynamicCache(config=model.config)
    if kvs is not None:
        for layer, (k, v) in zip(cache.layers, kvs):
            layer.lazy_initialization(k, v)
            layer.keys, layer.values = k, v
            if hasattr(layer, "cumulative_length"):
                layer.cumulative_length = length
    return cache


def _cache_tensors(cache) -> list:
    return [(layer.keys, layer.values) for layer in cache.layers]


def _perturbed(kvs, deltas) -> list:
    """Per-layer (keys + key delta, values + value delta) in the cache's dtype (deltas are float32)."""
    return [((k.float() + dk).to(k.dtype), (v.float() + dv).to(v.dtype)) for (k, v), (dk, dv) in zip(kvs, deltas)]


@contextlib.contextmanager
def _frozen(model):
    """Parameters do not require grad inside (no weight gradients, less memory); their flags are restored after."""
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in params:
            p.requires_grad_(True)


class PPLMProcessor:
    """The per-step PPLM perturbation for one model (see the module docstring). Keeps per-row state: the
    unperturbed and the perturbed key/value caches and the running sum of unperturbed final hidden states.

    ``trace``: one list per decoding step of the rows' mean p_disc(non-toxic) at each iteration (before each
    gradient step), for diagnostics.
    """

    def __init__(self, lm, steering: "PPLM"):
        self.lm, self.s = lm, steering
        self.model = lm.model
        self.trace: list[list[float]] = []
        self._reset()

    def _reset(self):
        self.mask0 = None  # (rows, columns at start_batch): the prompt's real tokens
        self.unpert = self.pert = None  # per-layer (keys, values), covering the ids but the last at each call
        self.hidden_sum = self.count = None  # (rows, hidden) fp32 / (rows,): unperturbed final hidden states
        self.past_len = None

    @property
    def active(self) -> bool:
        return self.s.step_size != 0 and self.s.num_iterations > 0

    def start_batch(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, rows_per_prompt: int) -> None:
        self._reset()
        with torch.inference_mode(False):
            self.mask0 = attention_mask.clone()

    def select_rows(self, index: torch.Tensor) -> None:
        with torch.inference_mode(False):
            index = index.clone()
            self.mask0 = self.mask0[index]
            if self.hidden_sum is not None:
                self.hidden_sum, self.count = self.hidden_sum[index], self.count[index]
            for name in ("unpert", "pert"):
                kvs = getattr(self, name)
                if kvs is not None:
                    setattr(self, name, [(k[index], v[index]) for k, v in kvs])

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if not self.active:
            return scores
        with torch.inference_mode(False), torch.enable_grad(), _frozen(self.model):
            out = self._step(input_ids.clone(), scores.clone().float())
        return out.clone()

    # -- one decoding step -------------------------------------------------------------------------------------

    def _forward(self, mask, position, kvs, length, input_ids=None, inputs_embeds=None, logits=True):
        """One position through the model on a cache built from ``kvs``: (next-token logits (rows, V) fp32, or None
        when not ``logits`` (the LM head is skipped), final hidden state (rows, H) fp32, the cache's per-layer
        tensors afterwards)."""
        cache = _make_cache(self.model, kvs, length)
        kw = dict(input_ids=input_ids, inputs_embeds=inputs_embeds, attention_mask=mask, position_ids=position,
                  past_key_values=cache, use_cache=True)
        if not logits:
            hidden = self.model.get_decoder()(**kw).last_hidden_state[:, -1].float()
            return None, hidden, _cache_tensors(cache)
        out = self.model(**kw, output_hidden_states=True, logits_to_keep=1)
        return out.logits[:, -1].float(), out.hidden_states[-1][:, -1].float(), _cache_tensors(cache)

    def _start(self, ids, mask, position):
        """State for the first step: caches and hidden-state sum of all columns but the last."""
        rows = ids.shape[0]
        hidden = self.model.config.get_text_config().hidden_size
        self.hidden_sum = torch.zeros(rows, hidden, device=ids.device)
        self.count = torch.zeros(rows, device=ids.device)
        self.past_len = ids.shape[1] - 1
        if self.past_len == 0:
            return
        cache = _make_cache(self.model, None, 0)
        with torch.no_grad():
            out = self.model.get_decoder()(input_ids=ids[:, :-1], attention_mask=mask[:, :-1],
                                           position_ids=position[:, :-1], past_key_values=cache, use_cache=True)
        m = mask[:, :-1].float()
        self.hidden_sum = (out.last_hidden_state.float() * m[..., None]).sum(1)
        self.count = m.sum(1)
        self.unpert = self.pert = _cache_tensors(cache)

    def _step(self, ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        s = self.s
        rows, width = ids.shape
        if self.mask0 is None:  # used without start_batch: no padding assumed
            self.mask0 = torch.ones_like(ids)
        if self.mask0.shape[0] != rows:
            raise ValueError(f"PPLM state has {self.mask0.shape[0]} rows, the step {rows} (select_rows missed?); "
                             "PPLM supports sample and greedy decoding, not beam search")
        n_start = self.mask0.shape[1]
        mask = torch.cat([self.mask0, self.mask0.new_ones(rows, width - n_start)], 1)
        position = (mask.cumsum(-1) - 1).clamp(min=0)
        if self.past_len is None:
            self._start(ids, mask, position)
        if self.past_len != width - 1:
            raise RuntimeError(f"PPLM expected {self.past_len + 1} columns, got {width}: one call per decoding step")
        last, last_pos = ids[:, -1:], position[:, -1:]
        with torch.no_grad():  # the last token on the unperturbed past: needed by the horizon and the next step
            _, hidden_unpert, unpert_next = self._forward(mask, last_pos, self.unpert, self.past_len, input_ids=last,
                                                          logits=False)
        if self.past_len == 0:  # nothing to perturb yet (a one-token prompt): the step is left unchanged
            fused = scores
            pert_next = unpert_next
        else:
            delta = self._perturbation(last, mask, last_pos, unpert_next, scores)
            with torch.no_grad():
                kvs = _perturbed(self.pert, delta)
                pert_logits, _, pert_next = self._forward(mask, last_pos, kvs, self.past_len, input_ids=last)
                fused = s.gm_scale * torch.log_softmax(pert_logits, -1)
                if s.gm_scale < 1:  # (1 - gm) * log p_unpert; skipped at gm = 1, where 0 * -inf would give nan
                    fused = fused + (1 - s.gm_scale) * torch.log_softmax(scores, -1)
                fused = fused.masked_fill(torch.isneginf(scores), float("-inf"))
        self.unpert, self.pert = unpert_next, pert_next
        self.hidden_sum = self.hidden_sum + hidden_unpert * mask[:, -1:].float()
        self.count = self.count + mask[:, -1].float()
        self.past_len = width
        return fused

    def _perturbation(self, last, mask, last_pos, unpert_next, scores) -> list:
        """The accumulated per-layer (key, value) perturbations of ``self.pert`` after ``num_iterations`` steps."""
        s = self.s
        # the perturbation is kept in float32: in a bf16 cache, repeated small steps would round away
        accum = [(torch.zeros_like(k, dtype=torch.float32), torch.zeros_like(v, dtype=torch.float32))
                 for k, v in self.pert]
        windows = [self._window(k) for k, _ in self.pert]
        unpert_probs = torch.softmax(scores, -1)
        unpert_probs = unpert_probs + SMALL_CONST * (unpert_probs <= SMALL_CONST).float()
        step_trace = []
        for _ in range(s.num_iterations):
            leaves = [(dk.clone().requires_grad_(True), dv.clone().requires_grad_(True)) for dk, dv in accum]
            kvs = _perturbed(self.pert, leaves)
            logits, hidden, _ = self._forward(mask, last_pos, kvs, self.past_len, input_ids=last)
            probs = torch.softmax(logits, -1)
            total, count = self.hidden_sum + hidden, self.count + 1
            total, count = self._horizon(probs, mask, last_pos, unpert_next, total, count)
            log_p = torch.log_softmax(self.s.discriminator.logits(total / count[:, None]), -1)[:, NONTOXIC_CLASS]
            loss = -log_p.sum()  # a sum, so that each row's gradient is its own
            step_trace.append(float(log_p.detach().exp().mean()))
            if s.kl_scale > 0:
                corrected = probs + SMALL_CONST * (probs <= SMALL_CONST).float().detach()
                loss = loss + s.kl_scale * (corrected * (corrected / unpert_probs).log()).sum()
            flat = [t for pair in leaves for t in pair]
            grads = torch.autograd.grad(loss, flat, allow_unused=True)
            new = []
            for i, ((dk, dv), window) in enumerate(zip(accum, windows)):
                gk, gv = (torch.zeros_like(dk) if g is None else g * window for g in grads[2 * i: 2 * i + 2])
                norm = (gk.float().pow(2).sum((1, 2, 3)) + gv.float().pow(2).sum((1, 2, 3))).sqrt() + SMALL_CONST
                scale = (-s.step_size / norm.pow(s.gamma))[:, None, None, None]
                new.append((dk + scale * gk.float(), dv + scale * gv.float()))
            accum = new
        self.trace.append(step_trace)
        return accum

    def _window(self, keys: torch.Tensor) -> torch.Tensor:
        """(1, 1, positions, 1) mask of the past positions perturbed: the last ``window_length`` (0: all)."""
        n = keys.shape[-2]
        window = torch.ones(1, 1, n, 1, dtype=keys.dtype, device=keys.device)
        if 0 < self.s.window_length < n:
            window[:, :, : n - self.s.window_length] = 0
        return window

    def _horizon(self, probs, mask, last_pos, unpert_next, total, count):
        """Add the final hidden states of ``horizon_length`` future positions, each fed the expected embedding of
        the previous position's next-token distribution, on the unperturbed past (which includes the last token)."""
        if self.s.horizon_length <= 0:
            return total, count
        embedding = self.model.get_input_embeddings()
        matrix = embedding.weight
        scale = getattr(embedding, "embed_scale", None)  # Gemma scales token embeddings inside the module
        kvs, length = unpert_next, self.past_len + 1
        for j in range(self.s.horizon_length):
            embeds = (probs[:, : matrix.shape[0]].to(matrix.dtype) @ matrix)[:, None]
            if scale is not None:
                embeds = embeds * scale.to(matrix.dtype)
            mask = torch.cat([mask, mask.new_ones(mask.shape[0], 1)], 1)
            more = j + 1 < self.s.horizon_length
            logits, hidden, kvs = self._forward(mask, last_pos + 1 + j, kvs, length, inputs_embeds=embeds,
                                                logits=more)
            total, count, length = total + hidden, count + 1, length + 1
            if more:
                probs = torch.softmax(logits, -1)
        return total, count


class PPLM(Steering):
    """PPLM-Discrim steering towards the discriminator's non-toxic class (see the module docstring).

    discriminator: a Discriminator trained for the same model (``train_discriminator``).
    step_size: the perturbation step (alpha; 0 turns PPLM off). num_iterations: gradient steps per token.
    kl_scale: weight of KL(perturbed || unperturbed next-token distribution). gm_scale: weight of the perturbed
      distribution in the geometric-mean fusion. gamma: gradient-norm exponent (grad / ||grad||^gamma).
    window_length: perturb only the latest positions of the past (0: all). horizon_length: future positions
      the discriminator also sees.
    Defaults: PPLM's detoxification example (step 0.02, gamma 1.0, KL 0.01, gm 0.9, horizon 1) with 3 iterations
    instead of its 10, for CPU budgets (``run_pplm.py``'s default is 3).
    """

    name = "pplm"
    version = "pplm-past-v1"

    def __init__(self, discriminator: Discriminator, step_size: float = 0.02, num_iterations: int = 3,
                 kl_scale: float = 0.01, gm_scale: float = 0.9, gamma: float = 1.0, window_length: int = 0,
                 horizon_length: int = 1):
        if not 0 <= gm_scale <= 1:
            raise ValueError(f"gm_scale must be in [0, 1], got {gm_scale}")
        self.discriminator = discriminator
        self.step_size, self.num_iterations, self.kl_scale = float(step_size), int(num_iterations), float(kl_scale)
        self.gm_scale, self.gamma = float(gm_scale), float(gamma)
        self.window_length, self.horizon_length = int(window_length), int(horizon_length)
        self._sha = discriminator.sha256

    def logits_processors(self, lm) -> list:
        hidden = lm.model.config.get_text_config().hidden_size
        if self.discriminator.weight.shape[1] != hidden:
            raise ValueError(f"the discriminator expects hidden size {self.discriminator.weight.shape[1]}, "
                             f"{lm.name} has {hidden}")
        return [PPLMProcessor(lm, self)]

    def config(self) -> dict:
        return {"name": self.name, "version": self.version, "step_size": self.step_size,
                "num_iterations": self.num_iterations, "kl_scale": self.kl_scale, "gm_scale": self.gm_scale,
                "gamma": self.gamma, "window_length": self.window_length, "horizon_length": self.horizon_length,
                "discriminator_sha256": self._sha}
