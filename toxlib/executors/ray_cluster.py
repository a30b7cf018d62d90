"""Connect to a Ray cluster, or start a small local one.

``connect(address)``: an already initialised Ray in this process is reused; otherwise ``address`` or
``RAY_ADDRESS`` joins an existing cluster (``ray start --head`` on the head node, ``ray start --address=...`` on
the others); with neither, a local cluster starts with ``TOXLIB_RAY_NUM_CPUS`` CPUs (default: the usable cores,
at most 8), an object store of ``TOXLIB_RAY_OBJECT_STORE_MB`` MiB (default 512) and no dashboard.
"""

from __future__ import annotations

import os

from toxlib.common import settings
from toxlib.common.errors import ToxlibError

#: Driver environment variables a worker needs to find the same caches, models and data (forwarded when set).
FORWARDED_ENV = ("TOXLIB_CACHE_DIR", "TOXLIB_MODEL_CACHE", "TOXLIB_DATA_DIR", "TOXLIB_DATA_MIRROR", "HF_HOME",
                 "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
# Secrets (PERSPECTIVE_API_KEY) are not forwarded: a runtime environment is visible to the whole cluster.
MAX_LOCAL_CPUS = 8


def import_ray():
    """The ``ray`` module, or a ToxlibError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ToxlibError("executor='ray' needs Ray: pip install -e '.[ray]' (or pip install 'ray>=2.40,<3')") from None
    return ray


def local_cpus() -> int:
    """CPUs of a local cluster: ``TOXLIB_RAY_NUM_CPUS`` or the usable cores, at most ``MAX_LOCAL_CPUS``."""
    given = settings.whole_number("TOXLIB_RAY_NUM_CPUS")
    if given:
        return given
    return max(1, min(MAX_LOCAL_CPUS, len(os.sched_getaffinity(0))))


def connect(address: str | None = None):
    """Initialise Ray in this process if it is not (see the module docstring); returns the ``ray`` module."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    address = address or settings.text("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        store_mb = settings.whole_number("TOXLIB_RAY_OBJECT_STORE_MB") or 512
        ray.init(num_cpus=local_cpus(), num_gpus=None, object_store_memory=store_mb << 20, include_dashboard=False,
                 log_to_driver=False)
    return ray


def worker_env() -> dict[str, str]:
    """The forwarded environment variables that are set here (see ``FORWARDED_ENV``)."""
    return settings.passthrough(FORWARDED_ENV)


def cluster_gpus(ray) -> int:
    """GPUs the cluster has (0 on a CPU cluster)."""
    return int(ray.cluster_resources().get("GPU", 0))


def cluster_cpus(ray) -> int:
    return int(ray.cluster_resources().get("CPU", 1))
