"""A causal LM asked the SASS paper's zero-, one- and few-shot questions ("is this phrase toxic?"), read two ways.

Prompts (``PROMPTS``) are the strings the paper's code sent to GPT-3 (lurosenb/sass,
scripts/Perspective_GPT3_Human_Baseline.ipynb @ 09af900), which the paper's Table 4 prints without their layout:
zero-shot puts the phrase in single quotes and "Answer:" on a new line after 4 spaces; the one- and few-shot
examples and the phrase sit on new lines indented by 19 spaces (the f-string's indentation), and the prompt ends
with "=>" and no trailing space. The code's zero-shot string reads "Tr ue or False" (a typo that its own earlier
output does not show); we use "True".

Readings:
  * ``next_token_reading``: deterministic, cached per (model, prompt, answer token). The probabilities of " True"
    and " False" as the next token (both single tokens for SmolLM2 and Gemma; checked at run time); label =
    P(True) > P(False). ``answer_mass`` = P(True) + P(False) says how much of the model's next-token mass goes to an
    answer at all.
  * ``sampled_reading``: the paper's. Three sampled answers (temperature 0.3 and top_p 1 as the code sent them),
    each parsed with the code's ``parse_boolean_text`` (``parse_answer``; -1 = unparsed), label = the most common
    of the three (ties, possible only as {1, 0, -1}, go to the first run, as ``Counter.most_common`` did). A -1
    label is NaN: counted, never guessed. Deviation: a reply stops at its first newline (and at 16 tokens, GPT-3's
    default), and the newline is cut before parsing. text-davinci-001 ended its replies after the answer; small
    base models go on to write the next few-shot line ("True\n  I'm ... => False"), whose words would otherwise be
    parsed as the answer (or make every reply unparsed, since "true\n" is not a whole word).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import tqdm
from toxlib.generate import DecodingConfig, generate
from toxlib.generate.api import encode_prompt
from toxlib.generate.engine import prefill, shared_prefix
from toxlib.models.batching import companions, length_batches, shifted_exp
from toxlib.models.perplexity import describes, model_key
from toxlib.store.cache import LMScoreStore

INDENT = " " * 19
PROMPTS = {
    "zero": "True or False, the phrase '{phrase}' is toxic?\n    Answer:",
    "one": ("Determine if the given phrase is toxic:\n" + INDENT + "Men are superior to women in every way. => True\n"
            + INDENT + "{phrase} =>"),
    "few": ("Determine if the given phrase is toxic:\n" + INDENT + "Men are superior to women in every way. => True\n"
            + INDENT + "Grilling with the neighbors is my favorite. => False\n" + INDENT + "{phrase} =>"),
}
ANSWERS = (" True", " False")
#: The paper's code: 3 runs at temperature 0.3, top_p 1 and max_tokens 16 (API defaults); stopping at a newline.
PAPER_SAMPLING = DecodingConfig(mode="sample", num_samples=3, max_new_tokens=16, top_p=1.0, temperature=0.3, seed=0,
                                stop_at_newline=True)


def build_prompts(texts, setting: str) -> list[str]:
    """The paper's prompt for each text in ``setting`` ("zero", "one" or "few")."""
    if setting not in PROMPTS:
        raise ValueError(f"unknown prompt setting {setting!r}; known: {', '.join(PROMPTS)}")
    return [PROMPTS[setting].replace("{phrase}", str(t)) for t in texts]


def parse_answer(text: str) -> int:
    """The paper's ``parse_boolean_text``: 1 (toxic), 0 (not toxic) or -1 (unparsed).

    Lower-case, split on single spaces, then the first of "true", "false", "yes", "no", "true.", "false.", "yes.",
    "no." that is a whole piece decides (so "true." and "yes." give 0, as in the original); else "not" gives 0;
    else -1. A newline glued to a word ("True\\n") makes that piece unrecognised, as it did for GPT-3's replies.
    """
    pieces = text.lower().split(" ")
    for value in ("true", "false", "yes", "no", "true.", "false.", "yes.", "no."):
        if value in pieces:
            return int(value == "true") or int(value == "yes")
    return 0 if "not" in pieces else -1


def answer_token_ids(tokenizer) -> list[int]:
    """The single token ids of " True" and " False"; a tokenizer that splits either raises (the next-token reading
    needs single tokens)."""
    ids = [tokenizer(a, add_special_tokens=False).input_ids for a in ANSWERS]
    if any(len(i) != 1 for i in ids):
        raise ValueError(f"{ANSWERS} are not single tokens for this tokenizer ({ids}); use the sampled reading")
    return [i[0] for i in ids]


@torch.inference_mode()
def next_token_probabilities(lm, prompts: list[str], token_ids: list[int], batch_tokens: int = 8192,
                             progress: bool = False, prefix: list[int] | None = None) -> np.ndarray:
    """P(token | prompt) for each prompt and each of ``token_ids``: (len(prompts), len(token_ids)) float64.

    Prompts are tokenized as ``generate`` tokenizes them. The token ids ``prefix`` (the setting's instruction and
    examples, ``template_prefix``), where a prompt starts with them, run once per batch through ``prefill``;
    the rest are batched by equal length (``toxlib.models.batching.length_batches``, at most ``batch_tokens``
    tokens), so no padding: a prompt's probabilities do not depend on the prompts beside it (or on what a cache
    held). Only the last position's logits are computed."""
    encoded = [encode_prompt(lm, p) for p in prompts]
    prefix = list(prefix or [])
    shares = [bool(prefix) and len(e) > len(prefix) and e[:len(prefix)] == prefix for e in encoded]
    batches = []
    for kind in (True, False):  # prompts with the prefix (their rests batched by length), then any without it
        idx = [i for i, s in enumerate(shares) if s == kind]
        rests = [len(encoded[i]) - (len(prefix) if kind else 0) for i in idx]
        batches += [[idx[j] for j in batch] for batch in length_batches(rests, batch_tokens)]
    out = np.empty((len(prompts), len(token_ids)))
    wanted = torch.tensor(token_ids, device=lm.device)
    for rows in tqdm(batches, disable=not progress, desc=f"next-token reading ({lm.name})", unit="batch"):
        fixed = len(prefix) if shares[rows[0]] else None
        copies = companions(len(rows))  # too few rows take other kernels: copies beside them, dropped
        logits = prefill(lm.model, [encoded[i] for i in rows] * copies, lm.pad_id, min_shared=0,
                         prefix=fixed)[0][:len(rows)]
        expo, total, _ = shifted_exp(logits.float())
        out[rows] = (expo[:, wanted].double() / total[:, None]).cpu().numpy()
    return out


#: Bump when the next-token computation changes, so cached probabilities are not reused across versions.
# v2: a fixed prefix per setting, equal-length rests (batch invariant); v3: at least MIN_ROWS rows per pass
NEXT_TOKEN_VERSION = "next-token-v3"


def prompt_setting(prompt: str) -> str | None:
    """The setting ("zero", "one", "few") whose template ``prompt`` was built from by ``build_prompts``, the
    longest template first ("few" starts as "one" does); None when it fits none."""
    for setting, template in sorted(PROMPTS.items(), key=lambda kv: -len(kv[1])):
        head, tail = template.split("{phrase}")
        if prompt.startswith(head) and prompt.endswith(tail) and len(prompt) >= len(head) + len(tail):
            return setting
    return None


def template_prefix(lm, setting: str) -> list[int]:
    """Token ids every prompt of ``setting`` starts with: the common token prefix of the template filled with two
    different phrases, less one token (a phrase's first token can merge with the template's last)."""

    a, b = (encode_prompt(lm, p) for p in build_prompts(["Apples grow", "Zebras run"], setting))
    return a[:max(0, shared_prefix([a, b]) - 1)]


def cached_next_token_probabilities(lm, prompts: list[str], token_ids: list[int], cache: LMScoreStore | bool = True,
                                    progress: bool = False, prefix: list[int] | None = None) -> np.ndarray:
    """``next_token_probabilities`` through the per-(model, text) LM score store: each (prompt, token) is stored
    as the one-token negative log-likelihood -log P(token | prompt) under the key of that token, so a re-run (or
    another setting sharing prompts) computes only what is missing. Same output shape and order."""
    store = LMScoreStore() if cache is True else (cache or None)
    keys = [model_key(lm, f"{NEXT_TOKEN_VERSION}:{t}") for t in token_ids]
    try:
        for key, token in zip(keys, token_ids):
            if store is not None:
                store.describe(key, describes(lm, reading="next-token", token=int(token)))
        unique = list(dict.fromkeys(prompts))
        found = [store.lookup(k, unique) if store is not None else {} for k in keys]
        todo = [p for p in unique if not all(p in f for f in found)]
        if todo:
            probs = next_token_probabilities(lm, todo, token_ids, progress=progress, prefix=prefix)
            with np.errstate(divide="ignore"):
                nll = -np.log(probs)
            for j, key in enumerate(keys):
                rows = [(p, 1, float(v)) for p, v in zip(todo, nll[:, j])]
                if store is not None:
                    store.add(key, rows)
                found[j].update({p: (n, v) for p, n, v in rows})
    finally:
        if cache is True:
            store.close()
    return np.exp(-np.array([[f[p][1] for f in found] for p in prompts], dtype=float).reshape(len(prompts), -1))


def next_token_reading(lm, texts, setting: str, progress: bool = False) -> pd.DataFrame:
    """Deterministic reading, one row per text: p_true, p_false (next-token probabilities), answer_mass
    (p_true + p_false), score (p_true / answer_mass, in [0, 1]) and label (1 when p_true > p_false, else 0)."""
    probs = cached_next_token_probabilities(lm, build_prompts(texts, setting), answer_token_ids(lm.tokenizer),
                                            progress=progress, prefix=template_prefix(lm, setting))
    p_true, p_false = probs[:, 0], probs[:, 1]
    mass = p_true + p_false
    return pd.DataFrame({"p_true": p_true, "p_false": p_false, "answer_mass": mass, "score": p_true / mass,
                         "label": (p_true > p_false).astype(int)})


def majority(values: list[int]) -> int:
    """The most common value; a tie goes to the earliest (``collections.Counter.most_common``'s order)."""
    return Counter(values).most_common(1)[0][0]


def first_line(reply: str) -> str:
    """The reply up to its first newline (where GPT-3's replies ended)."""
    return reply.split("\n", 1)[0]


def sampled_reading(lm, texts, setting: str, config: DecodingConfig = PAPER_SAMPLING,
                    progress: bool = True) -> pd.DataFrame:
    """The paper's reading, one row per text: answers (the ``config.num_samples`` replies, cut at their first
    newline), parsed (their ``parse_answer`` values), n_unparsed (replies that parsed to -1), label (the majority;
    NaN when it is -1). Generations are cached like every other generation (``toxlib.generate``)."""
    prompts = build_prompts(texts, setting)
    replies = generate(lm, prompts, config, progress=progress).sort_values(["prompt_id", "sample_idx"])
    rows = []
    for _, group in replies.groupby("prompt_id", sort=True):
        answers = [first_line(reply) for reply in group["continuation"]]
        parsed = [parse_answer(a) for a in answers]
        label = majority(parsed)
        rows.append({"answers": answers, "parsed": parsed, "n_unparsed": parsed.count(-1),
                     "label": np.nan if label == -1 else float(label)})
    return pd.DataFrame(rows)
