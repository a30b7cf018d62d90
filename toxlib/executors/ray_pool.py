"""Run blocks of work on a pool of Ray actors that keep what they loaded (models, scorers) from one call to the next.

A job is a picklable object with ``load(device, threads)`` (build the model or scorer), ``run(resource, block)``
(one block's results) and ``loaded_from()`` (what ``load`` depends on: a ``ModelSpec``, a scorer). ``run_blocks``
starts the actors (``num_gpus=1`` each where the cluster has GPUs, else ``cpus_per_worker`` CPUs each), gives each
one block at a time and yields every finished block to the driver as it finishes (the driver writes the caches, so
an interrupted run resumes from the finished blocks).

The actors outlive a call: a chapter calls ``run_blocks`` once per prompt set, decoding and scorer (rtp_prompted's
smoke profile: nine calls alternating between one model and two scorers), and an actor started per call paid a
process start, torch's import and a load each time. The actors of the last call are kept while the next call asks
for the same kind of actor (device, threads, resources, restarts, forwarded environment, the same cluster and
driver), and each keeps its ``HELD`` most recently used resources by the digest of their ``loaded_from()`` (one on a
GPU, so two models never share its memory). A call that fails or is abandoned kills them; the next starts afresh.

Faults: an actor whose process dies (killed, out of memory, a lost node) is restarted by Ray (``max_restarts``) and
its block re-run (``max_task_retries``), loading again what it holds no more; the results are the same because every
sample is seeded by (seed, prompt, sample index), not by where or when it runs. An exception raised by a block (its
load included), or a block that still fails after the retries, raises ``BlockFailedError`` naming the block: never
missing rows.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Iterator

from toxlib.executors import BlockFailedError, RayExecutor
from toxlib.executors.ray_cluster import cluster_cpus, cluster_gpus, connect, worker_env

#: resources (models, scorers) an actor keeps on a CPU: a chapter's model and its two scorers
HELD = 3


class BlockWorker:
    """The actor: runs blocks of any job, loading each job's resource once and keeping the last ``HELD`` (one on a
    GPU) by the digest of what they were loaded from."""

    def __init__(self, device: str, threads: int | None):
        self.device, self.threads = device, threads
        self.held: OrderedDict[str, object] = OrderedDict()
        self.job: tuple[str, object] | None = None  # (call, the job of that call)

    def run(self, call: str, key: str, job_box: list, index: int, block: list) -> tuple[int, object, str | None]:
        """(index, the block's result, None), or (index, None, the error's "Type: message") when the block's own
        code raised (loading included): the driver names the failing block by its index (a process that dies is
        Ray's to retry). ``job_box`` holds the call's job as an object reference, fetched once per call."""
        try:
            if self.job is None or self.job[0] != call:
                import ray  # optional: this runs on a Ray worker

                self.job = (call, ray.get(job_box[0]))
            job = self.job[1]
            return index, job.run(self._resource(key, job), block), None
        except Exception as error:  # reported by the driver as a BlockFailedError naming this block
            return index, None, f"{type(error).__name__}: {_first_line(error)}"

    def _resource(self, key: str, job):
        if key in self.held:
            self.held.move_to_end(key)
            return self.held[key]
        limit = 1 if self.device == "cuda" else HELD
        if len(self.held) >= limit:
            while len(self.held) >= limit:
                self.held.popitem(last=False)
            gc.collect()
            if self.device == "cuda":
                import torch  # heavy: on a GPU worker only

                torch.cuda.empty_cache()
        self.held[key] = job.load(self.device, self.threads)
        return self.held[key]


#: the actors of the last call and what they were started as (``_actors``)
_KEPT: dict = {"as": None, "actors": []}


def _actors(ray, n: int, started_as: tuple, options: dict, device: str, threads: int | None) -> list:
    """``n`` actors started as ``started_as``: the kept ones while they were started the same way, else new ones
    (the kept ones killed first, freeing their CPUs or GPUs)."""
    if _KEPT["as"] != started_as:
        forget_actors()
        _KEPT["as"] = started_as
    actor_class = ray.remote(BlockWorker).options(**options)
    while len(_KEPT["actors"]) < n:
        _KEPT["actors"].append(actor_class.remote(device, threads))
    return _KEPT["actors"][:n]


def forget_actors() -> None:
    """Kill the kept actors (after a failed or abandoned call; a new call starts new ones)."""
    actors, _KEPT["actors"], _KEPT["as"] = _KEPT["actors"], [], None
    if actors:
        import ray  # optional: actors exist only where Ray was imported

        for actor in actors:
            with contextlib.suppress(Exception):  # an actor of a cluster that is gone
                ray.kill(actor, no_restart=True)


def load_key(job) -> str:
    """The digest of what ``job`` loads from (its ``loaded_from()``), as Ray pickles it."""
    from ray import cloudpickle  # optional: as in run_blocks

    return hashlib.sha256(cloudpickle.dumps(job.loaded_from())).hexdigest()


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
    finishing order). Raises ``BlockFailedError`` naming the first block that failed. The actors are kept for the next
    call when every block finished, and killed when the iteration fails or is abandoned."""
    if not blocks:
        return
    ray = connect(executor.address)
    from ray.exceptions import RayError  # optional: the [ray] extra, present once connect() succeeded
    from ray.util import ActorPool  # optional: as above

    n_actors, per_actor = pool_size(ray, executor, len(blocks))
    device = "cuda" if "num_gpus" in per_actor else "cpu"
    threads = None if device == "cuda" else executor.cpus_per_worker
    env = worker_env()
    options = {**per_actor, "max_restarts": executor.max_restarts, "max_task_retries": executor.max_task_retries,
               **({"runtime_env": {"env_vars": env}} if env else {})}
    context = ray.get_runtime_context()
    started_as = (context.get_job_id(), context.get_node_id(), device, threads, sorted(per_actor.items()),
                  executor.max_restarts, executor.max_task_retries, sorted(env.items()))
    pool = ActorPool(_actors(ray, n_actors, started_as, options, device, threads))
    # The job goes once per call, by reference: Ray puts it in the object store (a scorer holding its weights is
    # large) and an actor fetches it at its first block of this call; the list keeps Ray from fetching it per block.
    call, key, job_box = uuid.uuid4().hex, load_key(job), [ray.put(job)]
    for index, block in enumerate(blocks):
        pool.submit(lambda actor, item: actor.run.remote(call, key, job_box, *item), (index, block))
    done, finished = set(), False
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
        finished = True
    finally:
        if not finished:
            forget_actors()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # Ray's task errors print a traceback first; the exception's own message is the last line
    return (lines[-1] if lines else type(error).__name__)[:500]
