"""Blocks of work for Ray, and the local-or-Ray loop every heavy stage shares.

The executor knows no stage: a stage (generation in ``toxlib.generate.api``, sentence NLLs in
``toxlib.models.perplexity``, steered NLLs in ``toxlib.generate.steered_nll``, scoring in ``toxlib.scorers.base``)
defines its own job beside its function, a picklable object with ``load(device, threads)`` (what an actor loads
once: a model, a scorer) and ``run(loaded, block)`` (the rows of one block), and hands it to ``chunked_rows`` or
``run_blocks``. The driver keeps computing cache keys and writing rows exactly as a local run does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from toxlib.executors import RayExecutor, blocks_of, resolve_executor
from toxlib.executors.ray_cluster import connect
from toxlib.executors.ray_pool import pool_size, run_blocks


def set_threads(threads: int | None) -> None:
    """Torch's intra-op threads in an actor (``RayExecutor.cpus_per_worker``); None leaves them as they are."""
    if threads:
        import torch  # optional here: the executor itself needs no torch

        torch.set_num_threads(threads)


def workers_for(executor: RayExecutor, items: int) -> int:
    """How many actors a run of ``items`` gets on the executor's cluster."""
    workers, _ = pool_size(connect(executor.address), executor, items)
    return workers


def blocks_for(items: list, executor: RayExecutor) -> list[list]:
    """``items`` cut into the executor's blocks (``block_size``, or about four per worker)."""
    return blocks_of(items, executor.block_size_for(len(items), workers_for(executor, len(items))))


def chunk_blocks(items: list, executor: RayExecutor, chunk: int) -> list[list]:
    """``items`` cut as a local run cuts them into chunks of ``chunk`` (``block_size`` may cut smaller).

    A scorer's or a model's float results depend, at rounding level (~1e-7 in float32), on which texts share a
    padded batch; blocks equal to the local chunks hold the same texts in the same order, so by default a Ray run
    reproduces a local run's scores and NLLs to the bit (the texts of ``generate`` never depend on the blocks)."""
    return blocks_of(items, min(executor.block_size or chunk, chunk))


def chunked_rows(items: list, chunk: int, run_local: Callable[[list], object], job, executor=None,
                 what: str = "") -> Iterator[tuple[list, object]]:
    """(chunk of ``items``, its result) for every chunk: in this process ``run_local(chunk)`` on chunks of
    ``chunk`` items, in order (executor None or "local"); on Ray ``job.run`` in actors on the same chunks (or
    smaller blocks: ``chunk_blocks``), in finishing order. ``what`` names the stage in errors and progress."""
    ray = resolve_executor(executor)
    if ray is None:
        for start in range(0, len(items), chunk):
            part = items[start:start + chunk]
            yield part, run_local(part)
        return
    if not items:
        return
    yield from run_blocks(job, chunk_blocks(items, ray, chunk), ray, what=what)


__all__ = ["blocks_for", "chunk_blocks", "chunked_rows", "run_blocks", "set_threads", "workers_for"]
