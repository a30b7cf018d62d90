"""Jupyter kernels started ahead of the notebook that will use them, with the book's libraries already imported.

Why: every chapter runs in a fresh kernel, and on a 2-core laptop a kernel takes about 1.5 s to start and about
5 s to import what every chapter imports (torch, pandas, scipy.stats, scikit-learn's metrics, matplotlib and
seaborn). A book build runs its notebooks one after another; while one runs, the next one's kernel starts and
imports on the other core (``KernelPrestart``). A warm re-run, whose chapters only read caches, is mostly that
start-up cost. A fresh kernel per notebook is kept: nothing a chapter defines reaches the next one.

``start_kernel(cwd, env)`` returns a started ``AsyncKernelManager`` to pass to papermill (``km=``); the caller
shuts it down (``shutdown``). On POSIX systems the kernel talks over Unix sockets in a folder only this user can
open (``transport="ipc"``), not over TCP ports on 127.0.0.1, where any local user could subscribe to a kernel's
outputs (ipykernel warns of it on every start); the folder is short (/tmp), as a socket path may not exceed
107 bytes, and is removed at ``shutdown``. ``PRELOAD`` is what the kernel imports before its first cell, exactly
modules every chapter imports anyway, so a notebook's outputs do not depend on whether its kernel was started ahead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

from toxlib.common import settings

#: the longest path a Unix socket may have (108 bytes on Linux, 104 on macOS, with the terminating NUL)
SOCKET_PATH_BYTES = 100
#: imported by a pre-started kernel before the notebook's first cell (each chapter imports all of them itself)
PRELOAD = ("toxlib", "numpy", "pandas", "scipy.stats", "sklearn.metrics", "torch", "matplotlib.pyplot", "seaborn",
           "toxlib.publish.plots", "toxlib.publish.results")


def start_kernel(cwd: str | Path, env: dict[str, str] | None = None, preload: tuple[str, ...] = PRELOAD):
    """Start a python3 kernel in ``cwd`` with the environment ``os.environ | env`` (its path variables made absolute
    here, ``settings.absolute_paths``: the kernel runs in ``cwd``) that imports ``preload`` before it answers.
    Returns the ``jupyter_client.AsyncKernelManager`` (not waited for: the kernel starts and imports in the
    background). The same history setting as nbclient's own kernels (in memory)."""
    from jupyter_core.utils import run_sync

    manager = _manager_class()(kernel_name="python3", **_private_transport())
    # an expression whose value is None: no output, no `_`; the comprehension's variable does not leak
    code = f"[__import__(name) for name in {tuple(preload)!r}] and None" if preload else ""
    arguments = ["--HistoryManager.hist_file=:memory:"] + ([f"--IPKernelApp.exec_lines={code}"] if code else [])
    try:
        run_sync(manager.start_kernel)(extra_arguments=arguments, cwd=str(cwd),
                                       env=settings.absolute_paths({**os.environ, **(env or {})}))
    except BaseException:
        with contextlib.suppress(Exception):  # the connection file (which holds the kernel's key) goes too
            run_sync(manager.cleanup_resources)()
        _remove_socket_folder(manager)
        raise
    return manager


def _private_transport() -> dict:
    """The kernel manager's transport settings: Unix sockets in a new 0700 folder on POSIX (under /tmp, else the
    temporary folder when /tmp is not writable), else, or when that folder's path is too long for a socket, TCP."""
    if os.name != "posix":
        return {}
    base = "/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()
    folder = tempfile.mkdtemp(prefix="toxlib-kernel-", dir=base)
    ip = os.path.join(folder, "k")
    if len(f"{ip}-5".encode()) > SOCKET_PATH_BYTES:  # a temporary folder too deep for a socket's path: TCP
        shutil.rmtree(folder, ignore_errors=True)
        return {}
    return {"transport": "ipc", "ip": ip}


@functools.cache
def _manager_class():
    """``AsyncKernelManager`` that keeps the clients it makes. nbclient stops a client's channels only for a kernel
    manager it started itself; for ours (papermill's ``km=``) each run would leave a heartbeat thread and its zmq
    socket open, and the interpreter then hangs at exit in ``zmq.Context.term``. ``shutdown`` stops them."""
    from jupyter_client.manager import AsyncKernelManager

    class ClientKeepingKernelManager(AsyncKernelManager):
        def client(self, **kwargs):
            made = super().client(**kwargs)
            self.__dict__.setdefault("_toxlib_clients", []).append(made)
            return made

    return ClientKeepingKernelManager


def shutdown(manager) -> None:
    """Stop a kernel from ``start_kernel``, the channels of every client made for it, and release its files (a
    kernel that already died is fine)."""
    from jupyter_core.utils import run_sync

    for client in manager.__dict__.pop("_toxlib_clients", []):
        client.stop_channels()
    try:
        if run_sync(manager.is_alive)():
            run_sync(manager.shutdown_kernel)(now=True)
    finally:
        run_sync(manager.cleanup_resources)()
        _remove_socket_folder(manager)


def _remove_socket_folder(manager) -> None:
    """Remove the folder ``_private_transport`` made for ``manager``'s sockets (nothing for a TCP kernel)."""
    if manager.transport == "ipc" and os.path.basename(os.path.dirname(manager.ip)).startswith("toxlib-kernel-"):
        shutil.rmtree(os.path.dirname(manager.ip), ignore_errors=True)


class KernelPrestart:
    """Kernels for a sequence of notebooks, each started while the notebook before it runs.

        with KernelPrestart(notebooks, env) as kernels:
            for nb in notebooks:
                run_notebook(nb, kernel=kernels.take(nb))   # starts the next notebook's kernel, returns this one's

    ``take(nb)`` returns the kernel started for ``nb`` (starting it now if none was) and starts the next one's.
    Kernels not taken are shut down on exit. Disabled (``take`` returns None: ``run_notebook`` starts its own)
    when ``enabled`` is False or ``TOXLIB_PRESTART_KERNELS=0``.
    """

    def __init__(self, notebooks: list[Path], env: dict[str, str] | None = None, enabled: bool = True):
        self.notebooks = list(notebooks)
        self.env = dict(env or {})
        self.enabled = enabled and settings.flag("TOXLIB_PRESTART_KERNELS")
        self._started: dict[Path, object] = {}

    def _start(self, notebook: Path) -> None:
        if notebook not in self._started:
            self._started[notebook] = start_kernel(notebook.parent, self.env)

    def take(self, notebook: Path):
        if not self.enabled:
            return None
        self._start(notebook)
        position = self.notebooks.index(notebook) if notebook in self.notebooks else -1
        if 0 <= position < len(self.notebooks) - 1:
            self._start(self.notebooks[position + 1])
        return self._started.pop(notebook)

    def __enter__(self) -> KernelPrestart:
        return self

    def __exit__(self, *exc) -> None:
        for manager in self._started.values():
            try:
                shutdown(manager)
            except Exception as err:  # a kernel that cannot be stopped must not hide the build's own error
                print(f"[toxlib] could not stop a pre-started kernel: {err}", file=sys.stderr)
        self._started.clear()
