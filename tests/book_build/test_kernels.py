"""Kernels started ahead: a notebook run in one sees its cwd and environment, the preloaded modules are imported
but bind no name, and KernelPrestart starts the next notebook's kernel when it hands out the current one."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_core.utils import run_sync

from toxlib.book_build import kernels
from toxlib.book_build.runner import run_notebook

PROBE = ("import os, sys\n"
         "print('colorsys' in sys.modules, 'colorsys' in dir(), os.getcwd(), os.environ.get('TOXLIB_PROBE'))")


def probe_notebook(folder):
    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(PROBE)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "probe.ipynb"
    nbformat.write(nb, path)
    return path


def printed(path) -> str:
    return nbformat.read(path, as_version=4).cells[1].outputs[0]["text"].strip()


def test_a_prestarted_kernel_runs_the_notebook_in_its_folder_with_the_environment_and_no_extra_names(tmp_path):
    notebook = probe_notebook(tmp_path / "chapter")
    manager = kernels.start_kernel(notebook.parent, {"TOXLIB_PROBE": "given"}, preload=("colorsys",))
    run_notebook(notebook, output=tmp_path / "out.ipynb", env={"TOXLIB_PROBE": "given"}, progress=False,
                 kernel=manager)
    assert printed(tmp_path / "out.ipynb") == f"True False {notebook.parent} given"
    assert not manager.has_kernel  # run_notebook shut it down


def test_prestart_hands_out_each_kernel_and_starts_the_next(tmp_path, monkeypatch):
    started, stopped = [], []
    monkeypatch.setattr(kernels, "start_kernel", lambda cwd, env: started.append(cwd) or f"kernel:{cwd.name}")
    monkeypatch.setattr(kernels, "shutdown", stopped.append)
    notebooks = [tmp_path / name / "nb.ipynb" for name in ("a", "b", "c")]
    with kernels.KernelPrestart(notebooks) as prestart:
        assert prestart.take(notebooks[0]) == "kernel:a" and [p.name for p in started] == ["a", "b"]
        assert prestart.take(notebooks[1]) == "kernel:b" and [p.name for p in started] == ["a", "b", "c"]
    assert stopped == ["kernel:c"]  # started for a notebook that never ran: stopped on exit


@pytest.mark.parametrize("enabled, variable", [(False, "1"), (True, "0")])
def test_prestart_can_be_switched_off(tmp_path, monkeypatch, enabled, variable):
    monkeypatch.setenv("TOXLIB_PRESTART_KERNELS", variable)
    monkeypatch.setattr(kernels, "start_kernel", lambda cwd, env: pytest.fail("no kernel should start"))
    with kernels.KernelPrestart([tmp_path / "nb.ipynb"], enabled=enabled) as prestart:
        assert prestart.take(tmp_path / "nb.ipynb") is None


def test_shutdown_stops_the_channels_of_every_client_made_for_the_kernel(tmp_path):
    """nbclient leaves the channels of a kernel manager's client running when the manager is not its own (papermill's
    ``km=``); left running, their heartbeat socket hangs the interpreter at exit."""
    manager = kernels.start_kernel(tmp_path, preload=())
    client = manager.client()
    client.start_channels()
    assert client.channels_running
    kernels.shutdown(manager)
    assert not client.channels_running


@pytest.mark.skipif(os.name != "posix", reason="Unix sockets: POSIX only")
def test_a_kernel_talks_over_private_unix_sockets_and_says_nothing_of_tcp(tmp_path):
    """Over TCP on 127.0.0.1 any local user could subscribe to a kernel's outputs; ipykernel warns of it on every
    start. A kernel of ours listens on Unix sockets in a folder only this user can open, removed at shutdown."""
    manager = kernels.start_kernel(tmp_path, preload=())
    folder = Path(manager.ip).parent
    try:
        client = manager.client()
        client.start_channels()
        run_sync(client.wait_for_ready)(timeout=120)
        assert manager.transport == "ipc" and stat.S_IMODE(folder.stat().st_mode) == 0o700
        sockets = [p for p in folder.iterdir() if p.is_socket()]
        assert len(sockets) == 5  # shell, iopub, stdin, control, heartbeat
        assert all(len(str(p).encode()) <= 107 for p in sockets)
    finally:
        kernels.shutdown(manager)
    assert not folder.exists()


def test_a_notebook_run_shows_no_kernel_warning(tmp_path):
    notebook = probe_notebook(tmp_path / "chapter")
    done = subprocess.run([sys.executable, "-m", "toxlib", "run", str(notebook), "--output",
                           str(tmp_path / "out.ipynb")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Kernel is running over TCP" not in done.stderr and "encryption" not in done.stderr, done.stderr


@pytest.mark.skipif(os.name != "posix", reason="Unix sockets: POSIX only")
def test_a_kernel_that_cannot_start_leaves_no_socket_folder(tmp_path, monkeypatch):
    made = []
    private = kernels._private_transport
    monkeypatch.setattr(kernels, "_private_transport", lambda: made.append(private()) or made[-1])
    with pytest.raises(Exception):  # noqa: B017 - whatever jupyter_client raises for a missing folder
        kernels.start_kernel(tmp_path / "no such folder", preload=())
    assert made and not Path(made[0]["ip"]).parent.exists()


def test_a_relative_path_variable_means_the_callers_folder_inside_the_kernel(tmp_path, monkeypatch):
    """The kernel runs in the notebook's folder: a path variable given relative to where the command ran must not
    move there (a report's relative --out once put its results inside the installed package)."""
    monkeypatch.chdir(tmp_path)
    notebook = probe_notebook(tmp_path / "chapter")
    nb = nbformat.read(notebook, as_version=4)
    nb.cells[1].source = "import os\nprint(os.environ['TOXLIB_RESULTS_DIR'])"
    nbformat.write(nb, notebook)
    run_notebook(notebook, output=tmp_path / "out.ipynb", env={"TOXLIB_RESULTS_DIR": "reports/results"},
                 progress=False)
    assert printed(tmp_path / "out.ipynb") == str(tmp_path / "reports" / "results")
