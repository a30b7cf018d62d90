"""``generate``: continuations for many prompts, batched, cached and resumable, as a DataFrame."""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd
import torch

from toxlib.common.progress import tqdm
from toxlib.executors import RayExecutor, resolve_executor
from toxlib.executors.blocks import blocks_for, run_blocks
from toxlib.generate.config import RTP_SAMPLING, DecodingConfig, run_key
from toxlib.generate.engine import beam_batch, decode_batch
from toxlib.generate.nucleus import NucleusStats
from toxlib.generate.static_decode import Decoders
from toxlib.generate.steering import Steering
from toxlib.models.batching import bucket_width, length_batches
from toxlib.models.device import free_memory, kernel_key
from toxlib.models.gpu_memory import decode_rows
from toxlib.models.spec import ModelSpec
from toxlib.store.cache import GenerationStore
from toxlib.store.keys import stable_hash

GENERATION_COLUMNS = ["prompt_id", "sample_idx", "prompt", "continuation", "n_new_tokens", "stopped", "model",
                      "config_hash"]


def default_batch_rows(lm, free_bytes: int | None = None) -> int:
    """Rows (prompts x samples) decoded together: 400 on a CPU (the matmuls reach their best speed near 200-400
    rows); on a GPU as many as its free memory holds (``toxlib.models.gpu_memory.decode_rows`` of ``free_bytes``,
    default the GPU's free memory now: thousands for the bundled models). Override with
    ``generate(..., batch_rows=N)``."""
    if lm.device.type != "cuda":
        return 400
    free = free_memory(lm.device) if free_bytes is None else free_bytes
    return decode_rows(lm.model.config, lm.dtype, free)


def row_uniforms(seed: int, prompt: str, sample_idx: int, steps: int) -> torch.Tensor:
    """The uniforms that drive one sample: (steps,) float64 from a generator seeded by (seed, prompt, sample_idx).

    Seeding per row makes a sample independent of batch size, batch neighbours and resumption order, up to the
    logits' rounding: in fp32 batch layouts change logits by ~1e-7 and the texts not at all (tested); in bf16 a
    different layout (padding, a shared prompt prefix run once) rounds differently and can change a sample.
    """
    digest = hashlib.sha256(f"{seed}\x00{sample_idx}\x00{prompt}".encode("utf-8")).digest()
    gen = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") & (2**63 - 1))
    return torch.rand(steps, generator=gen, dtype=torch.float64)


def run_identity(lm, config: DecodingConfig, steering: Steering | None = None) -> tuple[str, str]:
    """(run key, its stable hash) of ``lm``'s generations under ``config`` and ``steering``: what keys a run's rows
    in the cache and the record (model, weights, dtype, decoding, steering, and on a GPU the device class:
    ``toxlib.models.device.kernel_key``); the hash's first 16 digits are the rows' ``config_hash``."""
    steering = steering or Steering()
    key = run_key(lm.name, lm.weights_id, str(lm.dtype).removeprefix("torch."), config,
                  None if type(steering) is Steering else steering.config(), kernel_key(lm.device))
    return key, stable_hash(key)


def generate(lm, prompts, config: DecodingConfig = RTP_SAMPLING, steering: Steering | None = None,
             cache: GenerationStore | bool | None = True, batch_rows: int | None = None, progress: bool = True,
             stats: NucleusStats | None = None, executor=None, decoders: Decoders | None = None) -> pd.DataFrame:
    """Generate continuations for every prompt.

    lm: a ``toxlib.models.LanguageModel``. prompts: list of strings, a Series (its index becomes prompt_id) or a
      DataFrame with columns prompt_id and prompt. The empty prompt "" means unprompted generation: it starts
      from the model's start token (``lm.start_note`` says which).
    config: decoding settings (default: RealToxicityPrompts' 25 samples, top-p 0.9, 20 new tokens).
    steering: prompt transformation and logits processors (``toxlib.steer``); part of the cache key.
    cache: True for the default store, a GenerationStore, or False/None to skip caching. Finished batches are
      stored as they complete, so an interrupted call resumes where it stopped.
    batch_rows: prompts x samples decoded per batch (default ``default_batch_rows(lm)``).
    executor: where the missing prompts are decoded: None (``TOXLIB_EXECUTOR``, default "local"), "local", "ray" or
      a ``toxlib.executors.RayExecutor``. With Ray, blocks of prompts run in actors that each load the model once;
      the rows are the same as a local run's and go into the same cache. ``stats`` needs a local run.
    decoders: what the GPU decoding path keeps between batches (each model's static caches, CUDA graphs and learned
      sampler slots: ``toxlib.generate.static_decode.Decoders``), owned by the caller; None: the process's shared
      one, kept between calls. Needs a local run. Changes no row.

    Returns one row per (prompt, sample): prompt_id, sample_idx (0..num_samples-1), prompt, continuation (decoded
    new text, end-of-text token and special tokens removed; a newline that stopped it under ``stop_at_newline``
    is kept), n_new_tokens (tokens generated, a final stop token
    included), stopped (True if a stop token ended it before max_new_tokens), model, config_hash (16 hex digits
    of the run key: model, weights, dtype, decoding, steering).
    """
    table = _prompt_table(prompts)
    steering = steering or Steering()
    key, run = run_identity(lm, config, steering)
    own_store = cache is True
    store = GenerationStore() if own_store else (cache or None)
    try:
        done = _generate(lm, table, config, steering, store, run, key, batch_rows, progress, stats, executor,
                         decoders)
    finally:
        if own_store:
            store.close()
    n = config.num_samples
    records = [
        (pid, i, p, *done[(p, i)], lm.name, run[:16])
        for pid, p in zip(table["prompt_id"], table["prompt"])
        for i in range(n)
    ]
    return pd.DataFrame.from_records(records, columns=GENERATION_COLUMNS)


def _generate(lm, table, config, steering, store, run, key, batch_rows, progress, stats, executor,
              decoders=None) -> dict:
    """Decode the prompts not in the store, storing each finished batch; returns {(prompt, idx): row values}."""
    ray = resolve_executor(executor)
    if ray is not None and stats is not None:
        raise ValueError("generate(stats=...) collects sampler statistics in this process: use executor='local'")
    if ray is not None and decoders is not None:
        raise ValueError("generate(decoders=...) holds decoding state in this process: use executor='local'")
    n = config.num_samples
    unique = list(dict.fromkeys(table["prompt"]))
    done = {}
    if store is not None:
        store.register_run(run, key)
        done = store.lookup(run, unique)
    todo = [p for p in unique if any((p, i) not in done for i in range(n))]
    # counted in samples: a pool of 10,000 samples of one prompt advances slice by slice
    bar = tqdm(total=len(unique) * n, initial=(len(unique) - len(todo)) * n, unit="sample", disable=not progress,
               desc=f"generate {lm.name}{' on Ray' if ray else ''}")
    if ray is None:
        batches = decode_prompts(lm, todo, config, steering, batch_rows, stats, decoders)
    else:
        batches = generate_on_ray(lm, todo, config, steering, batch_rows, ray)
    new_tokens_total, start = 0, time.perf_counter()
    for out in batches:
        if store is not None:
            store.add(run, out)
        done.update({(p, i): (c, k, s) for p, i, c, k, s in out})
        new_tokens_total += sum(k for _, _, _, k, _ in out)
        bar.update(len(out))
        bar.set_postfix(tok_s=f"{new_tokens_total / (time.perf_counter() - start):.0f}")
    bar.close()
    return done


def decode_prompts(lm, prompts: list[str], config: DecodingConfig, steering: Steering, batch_rows: int | None = None,
                   stats: NucleusStats | None = None, decoders: Decoders | None = None) -> Iterator[list[tuple]]:
    """Decode every sample of ``prompts`` (distinct strings) batch by batch, shortest prompts first.

    A batch holds prompts of one padded width (``toxlib.models.batching.bucket_width`` of each prompt's own token count;
    with a steering's ``batch_key`` equal too) and at most ``batch_rows`` rows, each prompt left-padded to that
    width, and no prompt prefix shared between prompts. So a prompt's continuations do not depend on which prompts
    shared its batch: neither the cache's contents, nor ``batch_rows``, nor the executor's block size change them
    (in bf16, a batch-dependent padding does; tested). A prompt with more samples than ``batch_rows`` is decoded in
    slices of samples, so no batch passes ``batch_rows`` rows (memory: a batch's logits are rows x vocabulary floats).
    Yields each batch's rows as it finishes: (prompt, sample_idx, continuation, n_new_tokens, stopped), the values
    ``generate`` stores and returns. Used in this process and, block by block, by Ray workers. decoders: as
    ``generate``'s.
    """
    if not prompts:  # everything came from the cache: leave the weights unread
        return
    n = config.num_samples
    encoded = [encode_prompt(lm, steering.transform_prompt(p)) for p in prompts]
    limit = batch_rows or default_batch_rows(lm)
    per_batch = max(1, limit // (n if config.mode == "sample" else config.num_beams))
    processors = steering.logits_processors(lm)
    stop_ids = lm.stop_ids + (newline_token_ids(lm.tokenizer) if config.stop_at_newline else ())
    keys = [(bucket_width(len(e)), *steering.batch_key(lm, e)) for e in encoded]

    def finished(batch, rows, per_prompt, first=0):
        """(prompt, sample_idx, text, n_new_tokens, stopped) of a batch's rows, ``per_prompt`` rows per prompt."""
        out = []
        for r, tokens in enumerate(rows):
            prompt, idx = batch[r // per_prompt], first + r % per_prompt
            stopped = bool(tokens) and tokens[-1] in stop_ids
            # an end-of-text token is dropped from the text; a newline that stopped it is kept
            text = lm.tokenizer.decode(tokens[:-1] if stopped and tokens[-1] in lm.stop_ids else tokens,
                                       skip_special_tokens=True)
            out.append((prompt, idx, text, len(tokens), stopped))
        return out

    if config.mode == "sample" and n > limit:
        # one prompt's samples would pass the batch's rows (an unprompted pool of 10,000): decode them in slices of
        # at most ``limit`` samples; each sample has its own seeded uniforms, so a slice gives the rows the whole would
        for i in sorted(range(len(prompts)), key=lambda i: keys[i]):
            for first in range(0, n, limit):
                part = config.with_(num_samples=min(limit, n - first))
                rows = _decode(lm, [encoded[i]], part, processors, stats, [prompts[i]], stop_ids, keys[i][0], first,
                               decoders)
                yield finished([prompts[i]], rows, part.num_samples, first)
        return
    for positions in length_batches(keys, max_rows=per_batch):
        batch = [prompts[i] for i in positions]
        yield finished(batch, _decode(lm, [encoded[i] for i in positions], config, processors, stats, batch,
                                      stop_ids, keys[positions[0]][0], decoders=decoders), n)


def _decode(lm, prompt_ids, config, processors, stats, batch_prompts, stop_ids, width, first_sample=0,
            decoders=None):
    if config.mode == "beam":
        return beam_batch(lm.model, prompt_ids, config, stop_ids, lm.pad_id, processors, width)
    uniforms = None
    if config.mode == "sample":
        uniforms = torch.stack([row_uniforms(config.seed, p, i, config.max_new_tokens) for p in batch_prompts
                                for i in range(first_sample, first_sample + config.num_samples)])
    return decode_batch(lm.model, prompt_ids, config, uniforms, stop_ids, lm.pad_id, processors, stats, width,
                        decoders)


@functools.lru_cache(maxsize=8)
def newline_token_ids(tokenizer) -> tuple[int, ...]:
    """Ids of the vocabulary's tokens whose text contains a newline (e.g. 129 of SmolLM2's 49,152; 32 of Gemma's
    262,144), for ``DecodingConfig(stop_at_newline=True)``."""
    texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
    return tuple(i for i, text in enumerate(texts) if "\n" in text)


def encode_prompt(lm, text: str) -> list[int]:
    """Token ids of a prompt as the model's tokenizer gives them; "" becomes the model's start token."""
    ids = lm.tokenizer(text).input_ids if text else []
    return ids or list(lm.start_ids)


def _prompt_table(prompts) -> pd.DataFrame:
    if isinstance(prompts, pd.DataFrame):
        missing = {"prompt_id", "prompt"} - set(prompts.columns)
        if missing:
            raise ValueError(f"a prompts DataFrame needs the columns prompt_id and prompt; missing {sorted(missing)}")
        table = prompts[["prompt_id", "prompt"]].reset_index(drop=True)
    elif isinstance(prompts, pd.Series):
        table = pd.DataFrame({"prompt_id": prompts.index, "prompt": prompts.to_numpy()})
    elif isinstance(prompts, str):
        raise TypeError("prompts must be a list of strings, not one string: generate(lm, [prompt])")
    else:
        prompts = list(prompts)
        table = pd.DataFrame({"prompt_id": range(len(prompts)), "prompt": prompts})
    bad = [p for p in table["prompt"] if not isinstance(p, str)]
    if bad:
        raise TypeError(f"every prompt must be a string; got {type(bad[0]).__name__}: {bad[0]!r}")
    return table


@dataclass
class GenerateJob:
    """Generation of a block of prompts on a Ray actor (see ``toxlib.executors.blocks``): the model goes as a
    ``ModelSpec``, the steering object with its trained artefacts (VOCAB-SHIFT weights, a PPLM discriminator).
    ``run`` gives rows (prompt, sample_idx, continuation, n_new_tokens, stopped)."""

    model: ModelSpec
    config: DecodingConfig
    steering: Steering
    batch_rows: int | None

    def loaded_from(self):
        return self.model

    def load(self, device: str, threads: int | None):
        return self.model.load(device, threads)

    def run(self, lm, prompts: list[str]) -> list[tuple]:
        return [row for rows in decode_prompts(lm, prompts, self.config, self.steering, self.batch_rows)
                for row in rows]


def generate_on_ray(lm, prompts: list[str], config: DecodingConfig, steering: Steering, batch_rows: int | None,
                    executor: RayExecutor) -> Iterator[list[tuple]]:
    """Yields the rows of each finished block of ``prompts`` (see ``GenerateJob``). Prompts are sorted by token
    length before they are cut into blocks, as a local run sorts them before batching (less padding)."""
    if not prompts:
        return
    length = {p: len(encode_prompt(lm, steering.transform_prompt(p))) for p in prompts}
    ordered = sorted(prompts, key=length.__getitem__)
    job = GenerateJob(ModelSpec.of(lm), config, steering, batch_rows)
    for _, rows in run_blocks(job, blocks_for(ordered, executor), executor, what=f"generate {lm.name}"):
        yield rows
