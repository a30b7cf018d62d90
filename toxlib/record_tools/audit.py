"""Re-check the sample record: ``python -m toxlib record audit [--slice N] [--chapter C ...] [--kind K ...]``.

For each key of the record (or of the chosen chapters and kinds) a seeded random slice of its items is recomputed
from scratch, with the record and every cache off (``cache=False``), from what the key's config names: generations
(all samples of ``slice`` prompts; of a pool, the first ``POOL_SAMPLES_PER_ITEM`` x ``slice``) with the recorded
model, precision, decoding and steering; toxicity scores of ``slice`` texts with the recorded scorer and version;
sentence NLLs of ``slice`` texts with the recorded model, precision and method; SASS's next-token readings of
``slice`` prompts with the recorded model, precision and the prompt's template prefix. Texts must match exactly;
scores and readings (as probabilities) within ``SCORE_TOLERANCE``, NLLs within ``NLL_TOLERANCE``.
Steerings with trained weights (the vocabulary shift, PPLM's discriminator) are rebuilt from the record's own
copy of those weights (``artefacts/``, found by the tensors' sha256 their config names); steered NLLs (perplexity
under a steering) are recomputed the same way, every text of a key that fits one batch (PPLM's 4) in that batch,
since PPLM's gradient steps can move a row's last bits with its batch (its key names the batch size). PPLM
generations are regenerated for the sliced prompts only, in other batches than the chapter's: a differing PPLM
row there can come from its batch, not from the CPU. A key the audit cannot rebuild here (a model trained inside a
chapter, such as the DAPT and ATCON adapters, another scorer version, a model whose weights differ) is listed as not
audited, with the reason.

Returns one row per audited item (kind, key, chapters, what, precision (the key's dtype), item (text sha[:12]),
rows, matched rows, detail: for a differing continuation, the first token where it diverged and the two tokens'
probabilities under the plain model there; for a float, the largest difference) and one per key not audited. The
command prints per chapter and precision how many rows matched and exits 1 when fewer than ``PASS_SHARE``
(``audit_outcome``) of the counted rows match, or none could be counted. Counted: rows of keys in a precision that
should give the same rows on another CPU; bf16 and float16 keys (``MACHINE_DEPENDENT``) are audited and shown but
not counted, their kernels differ between CPUs by design (their history columns say "bf16" for both).

A long audit can be split by chapter and kind and resumed from its ``--out`` file (``toxlib.record_tools.audit_file``);
each audit can add a line to the record's audit history (``toxlib.record_tools.history``);
``toxlib.record_tools.audit_report`` turns the rows into the command's text.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from functools import lru_cache

import numpy as np
import pandas as pd
import torch

from toxlib.common.errors import ToxlibError
from toxlib.generate import DecodingConfig, generate
from toxlib.generate.api import encode_prompt
from toxlib.generate.steered_nll import steered_nll, steered_nll_key
from toxlib.generate.steering import PromptTemplate, Steering
from toxlib.models import load
from toxlib.models.perplexity import METHOD_VERSIONS, model_key, nll_rows
from toxlib.papers.sass.prompt_classifier import (
    NEXT_TOKEN_VERSION,
    next_token_probabilities,
    prompt_setting,
    template_prefix,
)
from toxlib.record_tools.audit_outcome import MACHINE_DEPENDENT
from toxlib.record_tools.status import describe_key
from toxlib.scorers import get_scorer
from toxlib.steer.attribute import AttributeConditioning
from toxlib.steer.instructive import InstructiveDebiasing
from toxlib.steer.pplm import PPLM
from toxlib.steer.pplm_discriminator import Discriminator
from toxlib.steer.self_debias import SelfDebiasing
from toxlib.steer.vocab_shift import VocabShift, VocabShiftWeights
from toxlib.steer.word_filter import WordFilter
from toxlib.store.record_reader import Record, RecordIntegrityError, checked_bytes, key_chapters, record_dir, text_sha

#: |recorded - recomputed| a toxicity score may differ by and still match. Measured: float32 scores of the
#: distilled scorer agree to ~1e-7 between an AMD EPYC and an Intel Xeon; 1e-5 leaves room, far below the 1e-3
#: that could move a rounded table cell.
SCORE_TOLERANCE = 1e-5
#: relative difference a sentence's summed NLL may have and still match (float64 sums of float32 log-probabilities;
#: relative to at least 1). SASS's next-token readings are probabilities and are compared as scores are, within
#: SCORE_TOLERANCE: measured between an AMD EPYC with AVX-512 (the record) and one with AVX2 only, 4 of 50 readings
#: per key had the same bits and the largest difference was 2.8e-6 in probability (1.5e-5 in -log p, 7e-6 relative:
#: a ~50-token few-shot prefill through every layer), while on one CPU a reading is the same alone and among 300
NLL_TOLERANCE = 1e-6
#: of a prompt holding many samples (the unprompted pool: 10,000), an audit of slice n regenerates the first
#: POOL_SAMPLES_PER_ITEM x n (1,250 at slice 50), as many rows as n prompts of 25 samples
POOL_SAMPLES_PER_ITEM = 25

AUDIT_COLUMNS = ["kind", "key", "chapters", "what", "precision", "item", "rows", "matched", "detail"]

STEERINGS = {
    "none": lambda c: Steering(),
    "prompt-template": lambda c: PromptTemplate(c["template"]),
    "instructive-debiasing": lambda c: InstructiveDebiasing(c["specification"]),
    "attribute-conditioning": lambda c: AttributeConditioning(c["token"], c["unprompted_prefix"]),
    "self-debiasing": lambda c: SelfDebiasing(c["prefixes"], c["decay_constant"], c["epsilon"]),
    "word-filter": lambda c: WordFilter(),
}
#: steerings with trained weights: the record's file pattern (under artefacts/), its loader, the config field that
#: names the weights by their tensors' sha256, and how the steering is built from config and weights
TRAINED = {
    "vocab-shift": ("vocab-shift-*.safetensors", VocabShiftWeights.load, "weights_sha256",
                    lambda c, w: VocabShift(w, c["beta"], tuple(c["t"]))),
    "pplm": ("pplm-discriminator-*.safetensors", Discriminator.load, "discriminator_sha256",
             lambda c, w: PPLM(w, c["step_size"], c["num_iterations"], c["kl_scale"], c["gm_scale"], c["gamma"],
                               c["window_length"], c["horizon_length"])),
}


class NotAuditable(Exception):
    """Why a key cannot be rebuilt here."""


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def recorded_weights(record: Record, name: str, sha: str | None):
    """The trained weights of steering ``name`` whose tensors hash to ``sha``, read from the record's ``artefacts/``
    (each file checked against SHA256SUMS first); NotAuditable when the record holds none."""
    pattern, read, field, _ = TRAINED[name]
    folder = record.folder / "artefacts"
    for path in sorted(folder.rglob(pattern)) if folder.exists() else []:
        checked_bytes(record.folder, path, record.sums)
        weights = read(path)
        if weights.sha256 == sha:
            return weights
    raise NotAuditable(f"steering {name!r} needs trained weights ({field} {str(sha)[:12]}) that the record's "
                       "artefacts/ do not hold")


def rebuild_steering(config: dict | None, record: Record | None = None) -> Steering:
    """The steering a key names, rebuilt from its settings (and, for trained steerings, the weights in ``record``);
    NotAuditable when it cannot be rebuilt or the rebuilt settings are not the recorded ones."""
    if not config:
        return Steering()
    name = config.get("name")
    if name in TRAINED and record is not None:
        steering = TRAINED[name][3](config, recorded_weights(record, name, config.get(TRAINED[name][2])))
    elif name in STEERINGS:
        steering = STEERINGS[name](config)
    else:
        raise NotAuditable(f"steering {name!r} needs what a chapter trained (not rebuilt here)")
    if not _same(steering.config(), config):
        raise NotAuditable(f"steering {config.get('name')!r} rebuilt with other settings than recorded")
    return steering


@lru_cache(maxsize=None)
def _load(name: str, dtype: str, device: str | None):
    return load(name, device=device, dtype=dtype)


def _model(name: str, dtype: str, weights: str | None, device: str | None):
    """A model loaded once per (name, dtype); NotAuditable when it cannot be loaded or its weights differ."""
    if str(weights).startswith("adapted:"):  # named by its training's inputs; no file of that name to load
        raise NotAuditable(f"model {name!r} is an adapter trained inside a chapter (toxlib.steer.adapt): the record "
                           "keeps its rows and its training's metadata, not its weights, and retraining on another "
                           "CPU gives other weights (losses differ in the fifth digit)")
    try:
        lm = _load(name, dtype, device)
    except Exception as exc:  # a hub model not cached here, a folder that is not there
        raise NotAuditable(f"model {name!r} not loadable here ({type(exc).__name__})") from exc
    if weights is not None and lm.weights_id != weights:
        raise NotAuditable(f"model {name!r} has other weights here ({lm.weights_id[:20]}, recorded {weights[:20]})")
    return lm


def _slice(items: list, n: int, seed: int, key: str) -> list:
    """``n`` items drawn without replacement with a generator seeded by (seed, key): the same slice everywhere."""
    items = sorted(items)
    rng = np.random.default_rng([seed, int(text_sha(key)[:8], 16)])
    return [items[i] for i in sorted(rng.choice(len(items), size=min(n, len(items)), replace=False))]


def divergence(lm, prompt: str, recorded: str, recomputed: str) -> str:
    """Where two continuations of ``prompt`` part: the first differing token (by the tokenizer's reading of each
    text) and both tokens' probabilities under the plain model after the common part."""
    tok = lm.tokenizer
    a, b = (tok(t, add_special_tokens=False).input_ids for t in (recorded, recomputed))
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    context = encode_prompt(lm, prompt) + a[:i]
    with torch.inference_mode():
        probs = torch.softmax(lm.model(input_ids=torch.tensor([context], device=lm.device)).logits[0, -1].float(), -1)

    def said(ids):
        return f"{tok.decode(ids[i:i + 1])!r} p={probs[ids[i]].item():.4f}" if i < len(ids) else "the end"

    return f"token {i}: recorded {said(a)}, recomputed {said(b)}"


def audit_generations(record: Record, key: str, n: int, seed: int, device: str | None) -> list[dict]:
    config = record.keys[("generations", key)]["config"] or {}
    steering = rebuild_steering(config.get("steering"), record)
    lm = _model(config.get("model", "?"), config.get("dtype", "float32"), config.get("weights"), device)
    rows = record.rows("generations", key)
    texts = record.texts()
    held = Counter(sha for sha, _ in rows)
    chosen = _slice(list(held), n, seed, key)
    # every sample a prompt holds, but of a pool (the unprompted generations' one prompt, 10,000 samples) only the
    # first POOL_SAMPLES_PER_ITEM x slice: sample i is the same row in a run of any size, so each group of prompts
    # with as many samples is generated on its own
    wanted = {sha: min(held[sha], POOL_SAMPLES_PER_ITEM * n) for sha in chosen}
    # prompts are stored by hash: the texts table holds them (every prompt a build used is a text of the record)
    decoding = DecodingConfig(**config["decoding"])
    fresh = pd.concat([generate(lm, [texts[sha] for sha in chosen if wanted[sha] == samples],
                                decoding.with_(num_samples=samples), steering=steering, cache=False, progress=False)
                       for samples in sorted(set(wanted.values()))], ignore_index=True)
    prompt_texts = [texts[sha] for sha in chosen]
    out = []
    for sha, prompt in zip(chosen, prompt_texts):
        mine = fresh[fresh["prompt"] == prompt].sort_values("sample_idx")
        matched, detail = 0, ""
        for _, row in mine.iterrows():
            stored = rows.get((sha, int(row["sample_idx"])))
            same = stored is not None and (stored[0], stored[1], stored[2]) == (
                row["continuation"], int(row["n_new_tokens"]), bool(row["stopped"]))
            matched += same
            if not same and not detail and stored is not None:
                detail = f"sample {int(row['sample_idx'])}, " + divergence(lm, prompt, stored[0], row["continuation"])
        out.append({"item": sha[:12], "rows": len(mine), "matched": matched, "detail": detail})
    return out


def audit_scores(record: Record, key: str, n: int, seed: int, device: str | None) -> list[dict]:
    name, _, version = key.rpartition("@")
    try:
        scorer = get_scorer(name, device=device)
    except Exception as exc:
        raise NotAuditable(f"scorer {name!r} not available here ({type(exc).__name__})") from exc
    if scorer.version != version:
        raise NotAuditable(f"scorer {name!r} is version {scorer.version} here, recorded {version}")
    rows, texts = record.rows("scores", key), record.texts()
    chosen = _slice(list(rows), n, seed, key)
    fresh = scorer.score([texts[sha] for sha in chosen], cache=False, progress=False)
    out = []
    for sha, (_, row) in zip(chosen, fresh.iterrows()):
        values, error = rows[sha]
        worst = max((abs(float(row[a]) - v) if v is not None and not math.isnan(float(row[a])) else
                     (0.0 if v is None and math.isnan(float(row[a])) else math.inf)
                     for a, v in values.items() if a in row), default=0.0)
        out.append({"item": sha[:12], "rows": 1, "matched": int(worst <= SCORE_TOLERANCE),
                    "detail": f"largest difference {worst:.2e}"})
    return out


def _steered_nlls(record: Record, key: str, config: dict, device: str | None):
    """A steered-NLL key ("steered-nll-v2|<weights>|<dtype>|<steering hash>|batch<n>") as a function of texts ->
    [(text, n_tokens, nll_sum)], after checking that the rebuilt model and steering give the same key."""
    _, weights, dtype, _, batch = key.split("|")
    lm = _model(config["model"], dtype, weights, device)
    steering = rebuild_steering(config.get("steering"), record) if config.get("steering") else None
    size = int(batch.removeprefix("batch"))
    if steered_nll_key(lm, steering, size) != key:
        raise NotAuditable("the rebuilt model and steering give another key")

    def score(texts):
        table = steered_nll(lm, texts, steering, batch_size=size)
        return list(zip(texts, table["n_tokens"].astype(int), table["nll_sum"].astype(float)))
    return score


def _next_token_readings(key: str, config: dict, device: str | None):
    """A next-token reading key ("next-token-v3:<token id>|<weights>|<dtype>", SASS's deterministic reading) as a
    function of prompts -> [(prompt, 1, -log P(token | prompt))], computed as ``next_token_reading`` does: each
    prompt with its setting's template prefix (``prompt_setting``) run once per batch."""
    head, weights, dtype = key.split("|")
    token = int(head.split(":")[1])
    lm = _model(config["model"], dtype, weights, device)
    if model_key(lm, f"{NEXT_TOKEN_VERSION}:{token}") != key:
        raise NotAuditable("the rebuilt model gives another key")

    def score(prompts):
        nll = {}
        for setting in dict.fromkeys(map(prompt_setting, prompts)):
            group = [p for p in prompts if prompt_setting(p) == setting]
            prefix = template_prefix(lm, setting) if setting else None
            with np.errstate(divide="ignore"):
                found = -np.log(next_token_probabilities(lm, group, [token], prefix=prefix)[:, 0])
            nll.update(zip(group, found.tolist()))
        return [(p, 1, nll[p]) for p in prompts]
    return score


def audit_nlls(record: Record, key: str, n: int, seed: int, device: str | None) -> list[dict]:
    parts = key.split("|")
    config = record.keys[("lm_scores", key)]["config"] or {}
    methods = {v: m for m, v in METHOD_VERSIONS.items()}
    if len(parts) == 5 and parts[0] == "steered-nll-v2" and config.get("model"):
        score = _steered_nlls(record, key, config, device)
    elif len(parts) == 3 and parts[0].startswith(f"{NEXT_TOKEN_VERSION}:") and config.get("model"):
        score = _next_token_readings(key, config, device)
    elif len(parts) == 3 and parts[0] in methods and config.get("model"):
        lm = _model(config["model"], parts[2], parts[1], device)
        if model_key(lm, parts[0]) != key:
            raise NotAuditable("the rebuilt model gives another key")
        def score(texts):
            return nll_rows(lm, texts, methods[parts[0]])
    else:
        raise NotAuditable(f"an NLL key of a method the audit does not rebuild ({parts[0]})")
    rows, texts = record.rows("lm_scores", key), record.texts()
    batch = int(parts[-1].removeprefix("batch")) if parts[0] == "steered-nll-v2" else 0
    chosen = _slice(list(rows), len(rows) if len(rows) <= batch else n, seed, key)  # a whole batch: as computed
    fresh = score([texts[sha] for sha in chosen])
    out = []
    reading = parts[0].startswith(f"{NEXT_TOKEN_VERSION}:")  # a probability, compared as one
    for sha, (_, n_tokens, nll) in zip(chosen, fresh):
        stored_n, stored_nll = rows[sha]
        if reading:
            gap = abs(math.exp(-nll) - math.exp(-stored_nll))
            matched, detail = gap <= SCORE_TOLERANCE, f"probability difference {gap:.2e}"
        else:  # a token a steering forbids has an infinite NLL, recorded and recomputed alike
            gap = 0.0 if nll == stored_nll else abs(nll - stored_nll) / max(abs(stored_nll), 1.0)
            matched, detail = gap <= NLL_TOLERANCE, f"relative difference {gap:.2e}"
        out.append({"item": sha[:12], "rows": 1, "matched": int(n_tokens == stored_n and matched), "detail": detail})
    return out


AUDITS = {"generations": audit_generations, "scores": audit_scores, "lm_scores": audit_nlls}


def key_precision(kind: str, key: str, config: dict | None) -> str:
    """The precision a key's rows were computed in: a generation key's dtype, an NLL key's dtype field, a scorer
    version's last part ("...-eqlen-float32"); "float32" where a key names none."""
    if kind == "generations":
        return (config or {}).get("dtype", "float32")
    # NLL keys: "causal-nll-v4|<weights>|<dtype>", "steered-nll-v2|<weights>|<dtype>|<hash>|batch<n>"; scorer
    # versions: "...-eqlen-<dtype>" or "...-eqlen-<dtype>-raw"
    parts = key.split("|") if kind == "lm_scores" else key.split("-")
    found = [p for p in parts if p in ("float32", "float64", *MACHINE_DEPENDENT)]
    return found[-1] if found else "float32"


def in_scope(kind: str, entry: dict, chapters=None, kinds=None) -> bool:
    """Whether a record key (its kind and keys.csv entry) is one an audit of these chapters and kinds covers."""
    used_by = set(key_chapters(entry))
    return not (kinds and kind not in kinds) and not (chapters and not used_by & set(chapters))


def audit(folder=None, n: int = 20, chapters=None, kinds=None, seed: int = 0, max_keys: int | None = None,
          device: str | None = None, earlier: pd.DataFrame | None = None, on_key=None) -> pd.DataFrame:
    """The audit's rows (``AUDIT_COLUMNS``); see the module docstring. ``earlier``: rows (``AUDIT_COLUMNS``) of keys
    audited before with the same slice and seed (a resumed audit), taken instead of recomputing those keys, in the
    same order and under the same ``max_keys`` cap; ``on_key(rows)``: called with each recomputed key's rows (a list
    of dicts) as soon as that key is audited, so an interrupted audit keeps what it did."""
    before = {k: part.to_dict("records") for k, part in earlier.groupby(["kind", "key"], sort=False)} \
        if earlier is not None and len(earlier) else {}
    record = Record(folder or record_dir())
    check_chapters(record, chapters)
    if max_keys is not None and max_keys < 1:
        raise ToxlibError(f"at most {max_keys} keys per kind audits nothing: give at least 1")
    if n < 1:
        raise ToxlibError(f"a slice of {n} audits nothing: give at least 1 (prompts or texts per key)")
    records, per_kind = [], {}
    for (kind, key), entry in sorted(record.keys.items()):
        used_by = key_chapters(entry)
        if not in_scope(kind, entry, chapters, kinds):
            continue
        if max_keys is not None and per_kind.get(kind, 0) >= max_keys:
            continue
        if (kind, key) in before:
            per_kind[kind] = per_kind.get(kind, 0) + 1
            records.extend(before[(kind, key)])
            continue
        base = {"kind": kind, "key": key, "chapters": "; ".join(used_by),
                "what": describe_key(kind, key, entry["config"]),
                "precision": key_precision(kind, key, entry["config"])}
        try:
            found = AUDITS[kind](record, key, n, seed, device)  # each recomputes with cache=False
            per_kind[kind] = per_kind.get(kind, 0) + 1
            rows = [{**base, **row} for row in found]
        except RecordIntegrityError:  # an edited record file fails the audit; it is not a key left unaudited
            raise
        except (NotAuditable, ToxlibError) as why:  # ToxlibError: e.g. a word list not fetched here
            rows = [{**base, "item": "", "rows": 0, "matched": 0, "detail": f"not audited: {why}"}]
        records.extend(rows)
        if on_key is not None:
            on_key(rows)
    return pd.DataFrame(records, columns=AUDIT_COLUMNS)


def record_chapters(record: Record) -> list[str]:
    """The chapters that used a key of the record (sorted)."""
    return sorted({c for entry in record.keys.values() for c in key_chapters(entry)})


def check_chapters(record: Record, chapters) -> None:
    """ToxlibError naming the chapters the record knows when ``chapters`` names one it holds no key of."""
    unknown = sorted(set(chapters or ()) - set(record_chapters(record)))
    if unknown:
        raise ToxlibError(f"the record holds no key of chapter(s) {', '.join(unknown)}; its chapters are "
                          f"{', '.join(record_chapters(record))}")
