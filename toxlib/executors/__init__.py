"""Where the heavy stages run: in this process ("local", the default) or on a Ray cluster ("ray").

    generate(lm, prompts, executor="ray")                 # or TOXLIB_EXECUTOR=ray
    score(texts, executor=RayExecutor(workers=4, block_size=64))
    cached_nll(lm, texts, executor="ray")

``executor``: None (the process default of ``set_default_executor``, else ``TOXLIB_EXECUTOR``, else "local"),
"local", "ray", or a ``RayExecutor`` for explicit settings. A chapter's ``executor`` parameter is one call,
``set_default_executor(executor)``, after which every stage it runs goes there. With Ray the missing items
(prompts, texts) are split into blocks; each block runs in an actor that loads the model or scorer once
(``num_gpus=1`` where the cluster has GPUs, CPU actors otherwise), and the driver writes every finished block
into the same SQLite cache a local run writes, so tables and re-runs are unchanged.
``RAY_ADDRESS`` joins an existing cluster; without it a small local cluster is started (``ray_cluster``).

Modules: ``ray_cluster`` (connect or start a cluster), ``ray_pool`` (a ``ray.util.ActorPool`` of actors that each
hold a loaded model; retries, block errors), ``blocks`` (cutting work into blocks and the local-or-Ray loop). Each
stage defines its own job beside its function (``GenerateJob``, ``NLLJob``, ``SteeredNLLJob``, ``ScoreJob``); a
worker reloads the driver's model from a ``toxlib.models.spec.ModelSpec``.

May import: common (Ray itself only inside the functions that need it: the [ray] extra).
"""

from __future__ import annotations

from dataclasses import dataclass

from toxlib.common import settings
from toxlib.common.errors import ToxlibError

EXECUTORS = ("local", "ray")


class BlockFailedError(ToxlibError):
    """A block of work failed on a Ray worker (after Ray's retries); the message names the block."""


@dataclass(frozen=True)
class RayExecutor:
    """Settings of a Ray run.

    workers: actors (default: one per GPU of the cluster, else one per ``cpus_per_worker`` CPUs, at most one per
      block). block_size: prompts or texts per block (default: about four blocks per worker, at most 256 items).
    address: a cluster to join (default ``RAY_ADDRESS``; none: start a local cluster, see ``ray_cluster``).
    cpus_per_worker: CPUs (and torch threads) of a CPU actor. max_restarts / max_task_retries: how often Ray
      restarts a dead actor and re-runs its block (a killed process, a lost node).
    """

    workers: int | None = None
    block_size: int | None = None
    address: str | None = None
    cpus_per_worker: int = 1
    max_restarts: int = 3
    max_task_retries: int = 3

    def __post_init__(self):
        for name in ("workers", "block_size"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"RayExecutor {name} must be a positive integer or None, got {value!r}")
        if self.cpus_per_worker < 1:
            raise ValueError(f"RayExecutor cpus_per_worker must be >= 1, got {self.cpus_per_worker}")

    def block_size_for(self, items: int, workers: int) -> int:
        """Items per block: ``block_size`` or about four blocks per worker (1..256)."""
        if self.block_size:
            return self.block_size
        return max(1, min(256, -(-items // (4 * max(1, workers)))))


_default: list = [None]  # set by ``set_default_executor``


def set_default_executor(executor) -> RayExecutor | None:
    """Make ``executor`` ("local", "ray", a ``RayExecutor``; None: back to ``TOXLIB_EXECUTOR``) the default of every
    later call in this process that is not given one: a chapter's ``executor`` parameter reaches all the stages it
    runs, through whichever toxlib function calls them. Returns the resolved executor (None: local)."""
    resolved = resolve_executor(executor) if executor is not None else None
    _default[0] = (resolved or "local") if executor is not None else None
    return resolved


def resolve_executor(executor=None) -> RayExecutor | None:
    """None for a local run, a ``RayExecutor`` for a Ray run.

    executor: None (the default set by ``set_default_executor``, else ``TOXLIB_EXECUTOR``, else "local"), "local",
    "ray" or a ``RayExecutor``; anything else raises ValueError naming the known executors.
    """
    if executor is None and _default[0] is not None:
        executor = _default[0]
    if isinstance(executor, RayExecutor):
        return executor
    name = executor if executor is not None else (settings.text("TOXLIB_EXECUTOR") or "local")
    if not isinstance(name, str) or name.strip().lower() not in EXECUTORS:
        source = "executor" if executor is not None else "TOXLIB_EXECUTOR"
        raise ValueError(f"unknown {source} {name!r}; known: {', '.join(EXECUTORS)} (or a RayExecutor(...))")
    return RayExecutor() if name.strip().lower() == "ray" else None


def blocks_of(items: list, size: int) -> list[list]:
    """``items`` cut into consecutive blocks of ``size`` (the last one shorter)."""
    return [items[i:i + size] for i in range(0, len(items), size)]


__all__ = ["EXECUTORS", "BlockFailedError", "RayExecutor", "blocks_of", "resolve_executor", "set_default_executor"]
