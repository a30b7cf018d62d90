"""Run blocks of work on a pool of Ray actors, each holding one loaded model (or scorer).

A job is a picklable object with ``load(device, threads)`` (build the model once per actor) and
``run(resource, block)`` (one block's results). ``run_blocks`` hands the job to every actor, starts the
actors (``num_gpus=1`` each where the cluster has GPUs, else ``cpus_per_worker`` CPUs each), gives each actor one
block at a time and yields every finished block to the driver as it finishes (the driver writes the caches, so an
interrupted run resumes from the finished blocks).

Faults: an actor whose process dies (killed, out of memory, a lost node) is restarted by Ray (``max_restarts``,
reloading the model) and its block re-run (``max_task_retries``); the results are the same because every sample
is seeded by (seed, prompt, sample index), not by where or when it runs. An exception raised by a block, or a
block that still fails after the retries, raises ``BlockFailedError`` naming the block: never missing rows.
"""

from __future__ import annotations

from collections.abc import Iterator

from toxlib.executors import BlockFailedError, RayExecutor
from toxlib.executors.ray_cluster import cluster_cpus, cluster_gpus, connect, worker_env


class BlockWorker:
    """The actor: loads the job's model once, then runs blocks."""

    def __init__(self, job, device: str, threads: int | None):
        self.job = job
        self.resource = job.load(device, threads)

    def run(self, index: int, block: list) -> tuple[int, object, str | None]:
        """(index, the block's result, None), or (index, None, the error's "Type: message") when the block's own
        code raised: the driver names the failing block by its index (a process that dies is Ray's to retry)."""
        try:
            return index, self.job.run(self.resource, block), None
        except Exception as error:  # reported by the driver as a BlockFailedError naming this block
            return index, None, f"{type(error).__name__}: {_first_line(error)}"


def describe_block(what: str, index: int, blocks: list[list]) -> str:
    """"<what> block i of n (k items, first: '...')", the name a failing block is reported under."""
    block = blocks[index]
    first = repr(block[0])[:60] if block else "none"
    return f"{what} block {index + 1} of {len(blocks)} ({len(block)} items, first: {first})"


def pool_size(ray, executor: RayExecutor, n_blocks: int) -> tuple[int, dict]:
    """(actors, resources per actor): one per GPU, else one per ``cpus_per_worker`` CPUs; at most one per block."""
    gpus = cluster_gpus(ray)
    if gpus:
        per_actor, fits = {"num_gpus": 1, "num_cpus": 1}, gpus
    else:
        per_actor, fits = {"num_cpus": executor.cpus_per_worker}, max(1, cluster_cpus(ray) // executor.cpus_per_worker)
    return max(1, min(executor.workers or fits, n_blocks)), per_actor


def run_blocks(job, blocks: list[list], executor: RayExecutor, what: str = "work") -> Iterator[tuple[list, object]]:
    """Run ``job`` over ``blocks`` on Ray actors; yields (block, result) in the driver as each block finishes (in
    finishing order). Raises ``BlockFailedError`` naming the first block that failed. The actors are killed when
    the iteration ends, fails or is abandoned."""
    if not blocks:
        return
    ray = connect(executor.address)
    from ray.exceptions import RayError  # optional: the [ray] extra, present once connect() succeeded
    from ray.util import ActorPool  # optional: as above

    n_actors, per_actor = pool_size(ray, executor, len(blocks))
    device = "cuda" if "num_gpus" in per_actor else "cpu"
    threads = None if device == "cuda" else executor.cpus_per_worker
    env = worker_env()
    actor_class = ray.remote(BlockWorker).options(
        **per_actor, max_restarts=executor.max_restarts, max_task_retries=executor.max_task_retries,
        **({"runtime_env": {"env_vars": env}} if env else {}))
    # The job goes by value: Ray inlines a small one and puts a large one (a scorer holding its weights) in the
    # object store itself, and a restarted actor gets it again from the owner of its constructor arguments.
    actors = [actor_class.remote(job, device, threads) for _ in range(n_actors)]
    pool = ActorPool(actors)  # one block per idle actor, the next one as soon as an actor is free
    for item in enumerate(blocks):
        pool.submit(lambda actor, item: actor.run.remote(*item), item)
    done = set()
    try:
        while pool.has_next():
            try:
                index, result, error = pool.get_next_unordered()
            except RayError as died:  # an actor that died more often than max_restarts / max_task_retries
                cause = getattr(died, "cause", None) or died
                unfinished = [i + 1 for i in range(len(blocks)) if i not in done]
                raise BlockFailedError(f"{what}: a Ray worker failed on one of blocks {unfinished} of {len(blocks)}: "
                                       f"{type(cause).__name__}: {_first_line(cause)}") from died
            if error is not None:
                raise BlockFailedError(f"{describe_block(what, index, blocks)} failed on a Ray worker: {error}")
            done.add(index)
            yield blocks[index], result
    finally:
        for actor in actors:
            ray.kill(actor, no_restart=True)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # Ray's task errors print a traceback first; the exception's own message is the last line
    return (lines[-1] if lines else type(error).__name__)[:500]
