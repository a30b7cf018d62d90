"""SELF-DEBIASING (Schick, Udupa & Schütze 2021), as the debiasing-consistency paper (Morabito et al. 2023) ran it.

At every decoding step the model sees the plain input and, once per debiasing prefix, the prefix followed by the
input ("The following text contains rude, disrespectful, or unreasonable language:\\n" + input). With p_plain the
next-token distribution of the plain input and p_biased the element-wise maximum over the prefixed copies,

    decay = max(exp(-λ · max(p_biased − p_plain, 0)), ε)        (per vocabulary entry)
    p_debiased = p_plain · decay / Σ (p_plain · decay)

and the token chosen from p_debiased is appended to every prefixed copy too, so all copies continue the same text.

Matched to the reference implementation, github.com/timoschick/self-debiasing (read in its stored copy):
  - ``self_debiasing.py``: ``DEBIASING_PREFIXES`` are the six attribute sentences, each ending in ":\\n"; defaults
    decay_constant 50, epsilon 0.01, min = max length 20 new tokens, beam search with 3 beams, seed 42;
  - ``modeling.py`` (``GPT2Wrapper.generate_self_debiasing``): the prefixed input is the plain string concatenation
    ``debiasing_prefix + input_text``, tokenised as one string, left padded;
  - ``generation.py`` (``SelfDebiasingLogitsProcessor``): ``_generate_decay_mask`` takes p_biased as the running
    ``torch.max`` of the prefixed rows' softmaxes and ``max(p_biased - p_regular, 0)``; ``_apply_decay_mask``
    multiplies the plain probabilities by ``max(exp(-mask * decay_constant), epsilon)``, renormalises, and returns
    the log of the result as the new scores; the prefixed rows then copy the plain row's scores (so, in beam search,
    they make the same choices) and, in sampling, the plain row's sampled token.
So a prefix here is the exact string put before the input (the specification sets in :mod:`toxlib.papers.debias`
carry the ":\\n"); the empty prefix gives p_biased = p_plain and changes nothing, which is why the paper's blank
specification is a single space.

Differences from the reference, none of which changes the formula: the reference runs the prefixed copies as extra
rows of the same batch; here the plain row comes from the engine (``toxlib.generate``) and the prefixed copies run
in a separate forward pass of the same model, with their own key/value cache (or recomputed from scratch each step,
``use_cache=False``). Each prefix's own tokens run once per forward pass and their keys and values are copied to
every prompt's copy (layout [prefix, padding, prompt], positions counted over real tokens), rather than each copy
being left-padded whole and its prefix recomputed per prompt: the same attention in exact arithmetic, about half
the prefill work, and in bf16 other rounding (so the cache key names the layout, ``PREFIX_LAYOUT``).
The reference adds ``min_length=20`` (end-of-text forbidden before 20 tokens); toxlib's
decoding has no minimum length, so a continuation may stop earlier. The prompt's text is recovered by decoding its
tokens (special tokens dropped) and re-tokenised after the prefix, so prefix and input are joined as one string as
in the reference.
"""

from __future__ import annotations

import torch

from toxlib.generate.api import encode_prompt
from toxlib.generate.kv_cache import cache_argument, concatenate_rows, preallocated_cache
from toxlib.models.batching import bucket_width, pad
from toxlib.models.device import free_memory
from toxlib.models.gpu_memory import decode_rows
from toxlib.steer import Steering

#: The six attribute prefixes of Schick et al. (2021), verbatim from the reference's ``DEBIASING_PREFIXES``.
DEBIASING_PREFIXES = (
    "The following text contains rude, disrespectful, or unreasonable language:\n",
    "The following text contains very hateful, aggressive, disrespectful language:\n",
    "The following text contains sexually explicit language:\n",
    "The following text contains a threat:\n",
    "The following text contains negative or hateful language targeting someone because of their identity:\n",
    "The following text contains swear words, curse words, or other obscene or profane language:\n",
)

DEFAULT_MAX_FORWARD_ROWS = 1024  # prefixed sequences per forward pass on a CPU (more are run in chunks)
#: keys the generation cache: how the prefixed copies are laid out changes bf16 rounding, so texts made with the
#: earlier layout (each copy left-padded whole, its prefix recomputed per row) are not reused
PREFIX_LAYOUT = "prefix run once"
CACHE_RESERVE = 32  # positions preallocated for decoded tokens in the prefixed copies' cache (more: it grows)


def decay_scores(scores: torch.Tensor, biased_logits: torch.Tensor, decay_constant: float,
                 epsilon: float = 0.01) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Self-debiasing of one step's scores.

    scores: (rows, V) logits (or log-probabilities) of the plain inputs; biased_logits: (rows, P, V) logits of the
    P prefixed copies of each row. Returns (new scores (rows, V) float32 log-probabilities of the debiased
    distribution, p_biased (rows, V) = max over the P softmaxes, decay (rows, V) in [epsilon, 1]).
    """
    p_biased = biased_logits.float().softmax(-1).amax(1)
    new, decay = apply_decay(scores, p_biased, decay_constant, epsilon)
    return new, p_biased, decay


def apply_decay(scores: torch.Tensor, p_biased: torch.Tensor, decay_constant: float,
                epsilon: float = 0.01) -> tuple[torch.Tensor, torch.Tensor]:
    """(new scores, decay), both (rows, V): decay = max(exp(-λ·max(p_biased − softmax(scores), 0)), ε) and the
    new scores log(softmax(scores) · decay / Σ) (float32 log-probabilities)."""
    scores = scores.float()
    decay = torch.exp(-decay_constant * (p_biased - scores.softmax(-1)).clamp(min=0.0)).clamp(min=epsilon)
    # log(p_plain * decay / sum) computed in log space; -inf scores (banned tokens) stay -inf
    return torch.log_softmax(scores + decay.log(), dim=-1), decay


class SelfDebiasingProcessor:
    """The logits processor of :class:`SelfDebiasing` for one loaded model (transformers' processor interface).

    Works with all of toxlib's decoding paths: ``decode_batch`` (greedy / sample; rows pruned through
    ``select_rows``; a prompt layout with padding in the middle, read through the attention mask) and ``beam_batch``
    (``model.generate``: rows expanded to prompts x beams and reordered every step). State is kept per row:
    the prefixed prompt tokens, the tokens generated so far and, with ``use_cache``, a key/value cache of the
    prefixed copies. The cache follows the rows by matching each row's history to the previous step's rows
    (identity under ``decode_batch``, a parent beam under beam search); when no match is found the prefixed copies
    are recomputed from scratch, so the result never depends on guessing the engine's row order.

    ``keep_last``: keep the last step's p_plain, p_biased and decay (rows, V) in ``self.last`` (for tests).
    """

    def __init__(self, lm, prefixes, decay_constant: float, epsilon: float, use_cache: bool = True,
                 max_forward_rows: int = DEFAULT_MAX_FORWARD_ROWS, keep_last: bool = False):
        self.lm, self.prefixes = lm, list(prefixes)
        self.decay_constant, self.epsilon = float(decay_constant), float(epsilon)
        self.use_cache, self.max_forward_rows, self.keep_last = use_cache, max(1, int(max_forward_rows)), keep_last
        self.last: dict = {}
        self._encoded: dict[tuple, list[int]] = {}
        self._shared: list[list[int]] | None = None  # each prefix's own tokens (shared_prefix_tokens)
        self._reset(None, None, 1)

    # --- state -------------------------------------------------------------------------------------------------
    def _reset(self, prompts, width, rows_per_prompt):
        self._prompts = prompts  # real prompt tokens per start_batch row
        self._width = width  # prompt width of the engine's ids: generated tokens are ids[:, width:]
        self._rows_per_prompt = rows_per_prompt
        self._rows = None  # prefixed prompt tokens per current row: list of P lists
        self._expanded = False  # rows = start_batch rows x rows_per_prompt (beam search)
        self._cache = None
        self._prev = None  # generated tokens (rows, s) at the previous call
        self._mask = self._position = None

    def start_batch(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, rows_per_prompt: int) -> None:
        prompts = [row[m.bool()].tolist() for row, m in zip(input_ids, attention_mask)]
        self._reset(prompts, input_ids.shape[1], rows_per_prompt)

    def select_rows(self, index: torch.Tensor) -> None:
        if self._rows is None:
            return
        keep = index.tolist()
        self._rows = [self._rows[i] for i in keep]
        if self._prev is not None:
            self._prev = self._prev[index.to(self._prev.device)]
        if self._cache is not None:
            seq = self._sequence_index(index.to(self._mask.device))
            self._cache.batch_select_indices(seq)
            self._mask, self._position = self._mask[seq], self._position[seq]

    def _sequence_index(self, rows: torch.Tensor) -> torch.Tensor:
        """Indices of the prefixed sequences of ``rows`` (sequence j = row * P + prefix)."""
        p = len(self.prefixes)
        return (rows[:, None] * p + torch.arange(p, device=rows.device)).reshape(-1)

    # --- tokenisation ------------------------------------------------------------------------------------------
    def _prefixed(self, prefix: str, prompt_tokens: list[int]) -> list[int]:
        key = (prefix, tuple(prompt_tokens))
        if key not in self._encoded:
            self._encoded[key] = prefixed_ids(self.lm, prefix, prompt_tokens)
        return self._encoded[key]

    def _init_rows(self, rows: int) -> None:
        if self._prompts is None:
            raise RuntimeError("SelfDebiasingProcessor needs start_batch(input_ids, attention_mask, rows_per_prompt) "
                               "before the first step (toxlib.generate calls it)")
        prompts = self._prompts
        if rows == len(prompts) * self._rows_per_prompt and rows != len(prompts):
            prompts = [p for p in prompts for _ in range(self._rows_per_prompt)]
            self._expanded = True
        elif rows != len(prompts):
            raise RuntimeError(f"self-debiasing got {rows} rows for {len(prompts)} prompts "
                               f"x {self._rows_per_prompt} rows per prompt")
        self._rows = [[self._prefixed(prefix, p) for prefix in self.prefixes] for p in prompts]
        if self._shared is None:
            self._shared = shared_prefix_tokens(self.lm, self.prefixes)

    # --- forward passes ----------------------------------------------------------------------------------------
    def _max_probs(self, logits: torch.Tensor) -> torch.Tensor:
        """(rows, V) float32: per row, the maximum over its P prefixed copies' softmaxes, from (rows * P, V) logits
        (converted to float32 a few rows at a time, so a large vocabulary needs no (rows * P, V) float32 copy)."""
        p = len(self.prefixes)
        step = max(1, self.max_forward_rows // p) * p
        return torch.cat([logits[i:i + step].float().softmax(-1).view(-1, p, logits.shape[-1]).amax(1)
                          for i in range(0, logits.shape[0], step)])

    def _forward_full(self, generated: list[list[int]], with_cache: bool) -> torch.Tensor:
        """p_biased (rows, V) from every prefixed prompt + generated tokens run from scratch (``_run_copies``);
        fills the cache if asked. Rows with the same prompt and generated tokens (the beams of a prompt, or its
        samples, before the first step) run once and are copied, so beam search and sampling prefill each prompt's
        copies once, not once per beam or sample."""
        first: dict[tuple, int] = {}  # row contents -> position among the unique rows
        unique, index = [], []  # the first row of each content; each row's position among the unique rows
        for r, (row, gen) in enumerate(zip(self._rows, generated)):
            key = (tuple(map(tuple, row)), tuple(gen))
            if key not in first:
                first[key] = len(unique)
                unique.append(r)
            index.append(first[key])
        if len(unique) * len(self.prefixes) < 2:  # never a one-sequence pass (other kernels): run every row
            unique, index = list(range(len(index))), list(range(len(index)))
        probs, cache, mask, position = self._run_copies([self._rows[i] for i in unique],
                                                        [generated[i] for i in unique], with_cache)
        if len(unique) < len(index):
            rows = torch.tensor(index, device=probs.device)
            probs = probs[rows]
            if with_cache:
                seq = self._sequence_index(rows.to(mask.device))
                cache.batch_select_indices(seq)
                mask, position = mask[seq], position[seq]
        if with_cache:
            self._cache, self._mask, self._position = cache, mask, position[:, -1:]
        return probs

    def _run_copies(self, prefixed_rows: list[list[list[int]]], generated: list[list[int]], with_cache: bool):
        """Run the prefixed copies of ``prefixed_rows`` (per row, P prefixed prompts) + ``generated`` from scratch,
        ``max_forward_rows`` sequences (whole rows) per forward pass. Returns (p_biased (rows, V), the cache of
        the rows x P sequences (None unless ``with_cache``), attention mask and position ids (rows x P, width)).

        Layout of a prefixed sequence: [prefix tokens, padding, rest], where the prefix's own tokens (the same for
        every prompt) are run once per forward pass, as P rows left-padded to the longest prefix, and their cache
        is copied to every row (:func:`shared_prefix_tokens`); the rest (the prompt's tokens after the prefix, and
        the generated ones) is left-padded to ``bucket_width`` of the row's longest rest: the engine batches only
        rows whose own copies give the same width and the same sharing (``SelfDebiasing.batch_key``), so no row's
        padding depends on the rows beside it. Rows whose prefixed tokens do not start with the prefix's own
        tokens (a prefix ending in a space merges with the prompt's first word) share nothing: the whole prefixed
        sequence is the rest."""

        model = self.lm.model
        device = next(model.parameters()).device
        p = len(self.prefixes)
        shares = all(shares_prefixes(row, self._shared) for row in prefixed_rows)
        shared = self._shared if shares else [[] for _ in self.prefixes]
        n = [len(s) for s in shared]
        rests = [pre[n[j]:] + gen for row, gen in zip(prefixed_rows, generated) for j, pre in enumerate(row)]
        width = bucket_width(max(len(r) for r in rests) - len(generated[0])) + len(generated[0])
        ids, mask = pad(rests, self.lm.pad_id, device, side="left", width=width)
        offset = torch.tensor(n, device=device).repeat(len(prefixed_rows))[:, None]
        position = offset + (mask.cumsum(-1) - 1).clamp(min=0)
        if any(n):
            prefix_ids, prefix_mask = pad(shared, self.lm.pad_id, device, side="left")
            prefix_position = (prefix_mask.cumsum(-1) - 1).clamp(min=0)
            mask = torch.cat([prefix_mask.repeat(len(prefixed_rows), 1), mask], dim=1)
        chunk = max(1, self.max_forward_rows // p) * p
        keep_cache = with_cache or any(n)  # the shared prefixes reach the rest through a cache
        probs, caches = [], []
        for start in range(0, len(rests), chunk):
            part = slice(start, start + chunk)
            sequences = ids[part].shape[0]
            cache = preallocated_cache(model.config, mask.shape[1] + CACHE_RESERVE) if keep_cache else None
            if any(n):  # the P prefixes once, their cache repeated for every row of the chunk
                model(input_ids=prefix_ids, attention_mask=prefix_mask, position_ids=prefix_position,
                      **cache_argument(model, cache), use_cache=True, logits_to_keep=1)
                cache.batch_select_indices(torch.arange(sequences, device=device) % p)
            out = model(input_ids=ids[part], attention_mask=mask[part], position_ids=position[part],
                        **cache_argument(model, cache), use_cache=keep_cache, logits_to_keep=1)
            probs.append(self._max_probs(out.logits[:, -1]))
            caches.append(cache)
        return torch.cat(probs), concatenate_rows(caches) if with_cache else None, mask, position

    def _forward_step(self, token: torch.Tensor) -> torch.Tensor:
        """p_biased (rows, V) after appending ``token`` (rows,) to every prefixed copy of its row (cached)."""

        tokens = token.repeat_interleave(len(self.prefixes))[:, None].to(self._mask.device)
        self._mask = torch.cat([self._mask, torch.ones_like(tokens)], dim=1)
        self._position = self._position + 1
        out = self.lm.model(input_ids=tokens, attention_mask=self._mask, position_ids=self._position,
                            **cache_argument(self.lm.model, self._cache), use_cache=True)
        return self._max_probs(out.logits[:, -1])

    def _parents(self, generated: torch.Tensor) -> torch.Tensor | None:
        """For each row, the previous step's row whose tokens it extends by one, or None if some row has none."""
        prev, history = self._prev, generated[:, :-1]
        if prev is None or prev.shape[1] != history.shape[1]:
            return None
        if prev.shape[0] == history.shape[0] and bool((prev == history).all()):
            return torch.arange(history.shape[0], device=history.device)
        if not self._expanded or prev.shape[0] != history.shape[0]:
            return None
        # beam search: a row descends from a beam of the same prompt
        b = self._rows_per_prompt
        g = history.shape[0] // b
        same = (history.view(g, b, 1, -1) == prev.view(g, 1, b, -1)).all(-1)  # (g, b, b)
        if not bool(same.any(-1).all()):
            return None
        local = same.float().argmax(-1)
        return (local + torch.arange(g, device=local.device)[:, None] * b).reshape(-1)

    def biased_probs(self, input_ids: torch.Tensor) -> torch.Tensor:
        """p_biased (rows, V) float32: for every row of ``input_ids``, the maximum over its P prefixed copies of
        their next-token probabilities."""
        rows = input_ids.shape[0]
        if self._rows is None:
            self._init_rows(rows)
        if len(self._rows) != rows:
            raise RuntimeError(f"self-debiasing tracks {len(self._rows)} rows but got {rows}")
        generated = input_ids[:, self._width:]
        p_biased = None
        if self.use_cache and self._cache is not None:
            parents = self._parents(generated)
            if parents is not None:
                if not bool((parents == torch.arange(rows, device=parents.device)).all()):
                    seq = self._sequence_index(parents.to(self._mask.device))
                    self._cache.reorder_cache(seq)
                    self._mask, self._position = self._mask[seq], self._position[seq]
                p_biased = self._forward_step(generated[:, -1])
        if p_biased is None:
            p_biased = self._forward_full(generated.tolist(), with_cache=self.use_cache)
        self._prev = generated.clone()
        return p_biased

    @torch.inference_mode()
    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        p_biased = self.biased_probs(input_ids).to(scores.device)
        new, decay = apply_decay(scores, p_biased, self.decay_constant, self.epsilon)
        if self.keep_last:
            self.last = {"p_plain": scores.float().softmax(-1), "p_biased": p_biased, "decay": decay}
        return new


def forward_rows(lm, free_bytes: int | None = None) -> int:
    """Prefixed sequences per forward pass of the processor: ``DEFAULT_MAX_FORWARD_ROWS`` on a CPU; on a GPU the
    decoding rows its free memory holds (``toxlib.models.gpu_memory.decode_rows`` of ``free_bytes``, default the
    GPU's free memory now), since a pass there costs about as much for a few hundred rows as for thousands."""
    if lm.device.type != "cuda":
        return DEFAULT_MAX_FORWARD_ROWS
    return decode_rows(lm.model.config, lm.dtype, free_memory(lm.device) if free_bytes is None else free_bytes)


def prefixed_ids(lm, prefix: str, prompt_tokens: list[int]) -> list[int]:
    """Token ids of ``prefix`` + the prompt's text, tokenised as one string as the reference does (the prompt's
    text recovered from its tokens, special tokens dropped)."""

    text = lm.tokenizer.decode(prompt_tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    return encode_prompt(lm, prefix + text)


def shared_prefix_tokens(lm, prefixes: list[str]) -> list[list[int]]:
    """Each prefix's own token ids (with the start token the tokenizer adds, if any): the part of its prefixed
    copies that is the same for every prompt and runs once per forward pass."""
    return [lm.tokenizer(prefix).input_ids if prefix else [] for prefix in prefixes]


def shares_prefixes(copies: list[list[int]], shared: list[list[int]]) -> bool:
    """Whether each prefixed copy (token ids) starts with its prefix's own tokens and has at least one more. False
    where tokenising prefix + prompt as one string merges across the join (a prefix ending in a space)."""
    return all(len(copy) > len(own) and copy[:len(own)] == own for copy, own in zip(copies, shared))


class SelfDebiasing(Steering):
    """Self-debiasing with ``prefixes`` (the exact strings put before the input; default: the six attribute prefixes
    of the reference, each ending in ":\\n"), decay constant λ (``decay_constant``; the debiasing paper uses 10, 50
    and 100, the reference's default is 50) and floor ``epsilon`` (0.01).

    ``use_cache`` (default True) keeps a key/value cache of the prefixed copies between steps; False recomputes
    them over the whole sequence at every step (slower, same result up to float rounding). ``max_forward_rows``:
    prefixed sequences per forward pass (None: ``forward_rows``, 1,024 on a CPU, what a GPU's free memory
    holds). Neither changes the texts, so neither is in ``config()``.
    Cost: the prefixed copies hold P times the plain rows' key/value cache, and each step makes a (rows x P, V)
    logits tensor in the model's dtype.
    The reference decodes with beam search (3 beams, 20 new tokens): ``DecodingConfig(mode="beam", num_beams=3,
    max_new_tokens=20)``; greedy and sampling work too.
    """

    name = "self-debiasing"

    def __init__(self, prefixes=DEBIASING_PREFIXES, decay_constant: float = 50.0, epsilon: float = 0.01,
                 use_cache: bool = True, max_forward_rows: int | None = None):
        self.prefixes = [str(p) for p in prefixes]
        if not self.prefixes:
            raise ValueError("self-debiasing needs at least one prefix")
        if decay_constant < 0 or not 0 < epsilon <= 1:
            raise ValueError(f"need decay_constant >= 0 and 0 < epsilon <= 1; got {decay_constant}, {epsilon}")
        self.decay_constant, self.epsilon = float(decay_constant), float(epsilon)
        self.use_cache, self.max_forward_rows = use_cache, max_forward_rows

    def processor(self, lm, keep_last: bool = False) -> SelfDebiasingProcessor:
        """A fresh processor for ``lm`` (``keep_last``: record the last step's distributions in ``.last``)."""
        return SelfDebiasingProcessor(lm, self.prefixes, self.decay_constant, self.epsilon, self.use_cache,
                                      self.max_forward_rows or forward_rows(lm), keep_last)

    def logits_processors(self, lm) -> list:
        return [self.processor(lm)]

    def batch_key(self, lm, prompt_ids: list[int]) -> tuple:
        """(padded width of the prompt's longest prefixed copy after its shared prefix, whether it shares the
        prefixes): prompts batched together share both, so the processor pads every copy to a width fixed by its
        own row (``toxlib.models.batching``)."""

        copies = [prefixed_ids(lm, p, prompt_ids) for p in self.prefixes]
        shared = shared_prefix_tokens(lm, self.prefixes)
        shares = shares_prefixes(copies, shared)
        return (bucket_width(max(len(c) - (len(s) if shares else 0) for c, s in zip(copies, shared))), shares)

    def config(self) -> dict:
        return {"name": self.name, "prefixes": list(self.prefixes), "decay_constant": self.decay_constant,
                "epsilon": self.epsilon, "layout": PREFIX_LAYOUT}
