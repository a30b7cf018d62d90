"""The heavy stages as Ray jobs, and the driver-side loops that feed their results into toxlib's caches.

Each job is picklable and travels once through Ray's object store: ``GenerateJob`` (a ``ModelSpec``, the decoding
config and the steering object, whose trained artefacts (VOCAB-SHIFT weights, a PPLM discriminator) travel with
it), ``ScoreJob`` (the scorer object; a lazily loading scorer loads its weights once per actor) and ``NLLJob`` (a
``ModelSpec`` and the method). The driver keeps computing cache keys and writing rows exactly as a local run does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from toxlib.executors import RayExecutor, blocks_of
from toxlib.executors.model_spec import ModelSpec
from toxlib.executors.ray_pool import pool_size, run_blocks


def _threads(threads: int | None) -> None:
    if threads:
        import torch

        torch.set_num_threads(threads)


def _blocks(items: list, executor: RayExecutor) -> list[list]:
    """``items`` cut into the executor's blocks (``block_size``, or about four per worker)."""
    from toxlib.executors.ray_cluster import connect

    workers, _ = pool_size(connect(executor.address), executor, len(items))
    return blocks_of(items, executor.block_size_for(len(items), workers))


def chunk_blocks(items: list, executor: RayExecutor, chunk: int) -> list[list]:
    """``items`` cut as a local run cuts them into chunks of ``chunk`` (``block_size`` may cut smaller).

    A scorer's or a model's float results depend, at rounding level (~1e-7 in float32), on which texts share a
    padded batch; blocks equal to the local chunks hold the same texts in the same order, so by default a Ray run
    reproduces a local run's scores and NLLs to the bit (the texts of ``generate`` never depend on the blocks)."""
    return blocks_of(items, min(executor.block_size or chunk, chunk))


@dataclass
class GenerateJob:
    """Generation of a block of prompts: rows (prompt, sample_idx, continuation, n_new_tokens, stopped)."""

    model: ModelSpec
    config: object
    steering: object
    batch_rows: int | None

    def load(self, device: str, threads: int | None):
        return self.model.load(device, threads)

    def run(self, lm, prompts: list[str]) -> list[tuple]:
        from toxlib.generate.api import decode_prompts

        return [row for rows in decode_prompts(lm, prompts, self.config, self.steering, self.batch_rows)
                for row in rows]


def generate_on_ray(lm, prompts: list[str], config, steering, batch_rows: int | None,
                    executor: RayExecutor) -> Iterator[list[tuple]]:
    """Yields the rows of each finished block of ``prompts`` (see ``GenerateJob``). Prompts are sorted by token
    length before they are cut into blocks, as a local run sorts them before batching (less padding)."""
    from toxlib.generate.api import encode_prompt

    length = {p: len(encode_prompt(lm, steering.transform_prompt(p))) for p in prompts}
    ordered = sorted(prompts, key=length.__getitem__)
    job = GenerateJob(ModelSpec.of(lm), config, steering, batch_rows)
    if not ordered:
        return
    for _, rows in run_blocks(job, _blocks(ordered, executor), executor, what=f"generate {lm.name}"):
        yield rows


@dataclass
class ScoreJob:
    """Scoring of a block of texts with a scorer object: its ``BatchScores``."""

    scorer: object

    def load(self, device: str, threads: int | None):
        _threads(threads)
        return self.scorer

    def run(self, scorer, texts: list[str]):
        return scorer.score_batch(texts)


def scored_chunks(scorer, texts: list[str], executor=None) -> Iterator[tuple[list[str], object]]:
    """(chunk, ``scorer.score_batch(chunk)``) for chunks of ``texts``: in this process, in order, ``chunk_size``
    texts each (executor None or "local"), or on Ray (the same chunks, or smaller blocks: ``chunk_blocks``), in
    finishing order."""
    from toxlib.executors import resolve_executor

    ray = resolve_executor(executor)
    if ray is None:
        for start in range(0, len(texts), scorer.chunk_size):
            chunk = texts[start:start + scorer.chunk_size]
            yield chunk, scorer.score_batch(chunk)
        return
    if not texts:
        return
    blocks = chunk_blocks(texts, ray, scorer.chunk_size)
    yield from run_blocks(ScoreJob(scorer), blocks, ray, what=f"score {scorer.name}")


@dataclass
class NLLJob:
    """Sentence NLLs of a block of texts (``sentence_nll`` or ``pseudo_nll``): rows (text, n_tokens, nll_sum)."""

    model: ModelSpec
    method: str

    def load(self, device: str, threads: int | None):
        return self.model.load(device, threads)

    def run(self, lm, texts: list[str]) -> list[tuple]:
        from toxlib.lm_score import nll_rows

        return nll_rows(lm, texts, self.method)


def nll_chunks(lm, texts: list[str], method: str, chunk: int, executor=None) -> Iterator[list[tuple]]:
    """Rows (text, n_tokens, nll_sum) of ``texts`` chunk by chunk: locally ``chunk`` texts at a time, in order, or
    on Ray (the same chunks, or smaller blocks: ``chunk_blocks``) in finishing order."""
    from toxlib.executors import resolve_executor
    from toxlib.lm_score import nll_rows

    ray = resolve_executor(executor)
    if ray is None:
        for start in range(0, len(texts), chunk):
            yield nll_rows(lm, texts[start:start + chunk], method)
        return
    if not texts:
        return
    blocks = chunk_blocks(texts, ray, chunk)
    for _, rows in run_blocks(NLLJob(ModelSpec.of(lm), method), blocks, ray, what=f"{method} NLL {lm.name}"):
        yield rows


@dataclass
class SteeredNLLJob:
    """``steered_nll`` of a block of texts under a steering object: rows (text, n_tokens, nll_sum)."""

    model: ModelSpec
    steering: object
    batch_size: int

    def load(self, device: str, threads: int | None):
        return self.model.load(device, threads)

    def run(self, lm, texts: list[str]) -> list[tuple]:
        from toxlib.lm_score import steered_nll

        part = steered_nll(lm, texts, self.steering, self.batch_size)
        return list(zip(part["text"], part["n_tokens"].astype(int).tolist(), part["nll_sum"].astype(float).tolist()))


def steered_nll_on_ray(lm, texts: list[str], steering, batch_size: int, executor: RayExecutor):
    """``steered_nll`` on Ray. The texts are put in the order a local call batches them (by token count, stable)
    and cut into blocks of whole batches, so every batch holds the texts it holds locally and the values are the
    same to the bit. Returns the columns of ``sentence_nll``, one row per text, in order."""
    import numpy as np

    from toxlib.lm_score import _score_table

    start = lm.start_ids
    lengths = []
    for t in texts:
        ids = lm.tokenizer(t, add_special_tokens=False).input_ids
        lengths.append(len(ids) - len(start) if ids[:len(start)] == start else len(ids))
    order = np.argsort(lengths, kind="stable")
    from toxlib.executors.ray_cluster import connect

    workers, _ = pool_size(connect(executor.address), executor, max(1, len(texts)))
    batches = -(-len(texts) // batch_size)
    per_block = executor.block_size or batch_size * max(1, -(-batches // (4 * workers)))
    per_block = max(batch_size, per_block - per_block % batch_size)  # whole batches only
    blocks = blocks_of([int(i) for i in order], per_block)
    done = {}
    job = SteeredNLLJob(ModelSpec.of(lm), steering, batch_size)
    for block, rows in run_blocks(job, [[texts[i] for i in b] for b in blocks], executor,
                                  what=f"steered NLL {lm.name}"):
        done.update({t: (n, v) for t, n, v in rows})
    return _score_table(texts, np.array([done[t][0] for t in texts], dtype=int),
                        np.array([done[t][1] for t in texts], dtype=float))
