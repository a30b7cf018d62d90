"""PPLM (Dathathri et al., 2020) as RealToxicityPrompts §5.2 used it: steer each decoding step by gradient ascent
on a toxicity discriminator's log p(non-toxic), applied to the model's past key/values.

The paper steered GPT-2 with the authors' released toxicity ClassificationHead and the Hugging Face
``run_pplm.py``. That head only fits GPT-2-medium's hidden states, so ``train_discriminator``
(:mod:`toxlib.steer.pplm_discriminator`) trains the same kind
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

import torch

from toxlib.generate.kv_cache import cache_argument
from toxlib.steer import Steering

# the attribute model lives in its own module; re-exported here for ``from toxlib.steer.pplm import ...``
from toxlib.steer.pplm_discriminator import (
    DISCRIMINATOR_VERSION,
    NONTOXIC_CLASS,
    TOXIC_CLASS,
    Discriminator,
    encode_text,
    mean_hidden,
    train_discriminator,
)

__all__ = ["PPLM", "PPLMProcessor", "DISCRIMINATOR_VERSION", "NONTOXIC_CLASS", "TOXIC_CLASS", "Discriminator",
           "encode_text", "mean_hidden", "train_discriminator"]

SMALL_CONST = 1e-15  # run_pplm.py's guard against log(0) and division by a zero gradient norm


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
                  use_cache=True)
        if not logits:
            decoder = self.model.get_decoder()
            hidden = decoder(**kw, **cache_argument(decoder, cache)).last_hidden_state[:, -1].float()
            return None, hidden, _cache_tensors(cache)
        out = self.model(**kw, **cache_argument(self.model, cache), output_hidden_states=True, logits_to_keep=1)
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

        cache, decoder = _make_cache(self.model, None, 0), self.model.get_decoder()
        with torch.no_grad():
            out = decoder(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=position[:, :-1],
                          **cache_argument(decoder, cache), use_cache=True)
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
    # v2: decoded by the engine whose prefill never has fewer than MIN_ROWS rows. Before, a batch of 1-3 prompts
    # moved step 0's float32 logits by ~2e-5, which PPLM's KL term amplifies into other texts: v1 rows depended on
    # which prompts shared their batch (8 of 12 the same), v2 rows do not (12 of 12).
    version = "pplm-past-v2"

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
