"""Progress bars (toxlib.common.progress) and the paths notebooks show (toxlib.publish.shown_path)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from tqdm import std

from toxlib.common import progress
from toxlib.publish.shown_path import ShownPath
from toxlib.store import paths

BAR_GRAPHIC = re.compile(r"\|[█▏▎▍▌▋▊▉ ]+\|")


class Recorder:
    """Stands in for IPython's display: records what a KernelBar shows and each in-place update."""

    def __init__(self):
        self.shown: list[str] = []

    def __call__(self, data, raw, display_id, metadata):
        assert raw and display_id and metadata == progress.PROGRESS_METADATA
        self.shown.append(data["text/plain"])
        return self

    def update(self, data, raw, metadata):
        assert raw and metadata == progress.PROGRESS_METADATA
        self.shown.append(data["text/plain"])


def test_terminal_gets_tqdms_own_bar():
    assert not progress.in_kernel()
    assert progress.tqdm is progress.TerminalBar and issubclass(progress.tqdm, std.tqdm)


def test_hidden_disables_every_bar_started_inside_it_and_only_those(capsys):
    with progress.hidden():
        inner = progress.tqdm(range(3), desc="inner", delay=0, mininterval=0)
        kernel = progress.KernelBar(range(2), desc="kernel", delay=0, show=Recorder())
    outer = progress.tqdm(range(3), desc="outer", delay=0, mininterval=0)
    assert inner.disable and kernel.disable and not outer.disable  # (tqdm disables a bar it closes)
    list(inner), list(outer)
    err = capsys.readouterr().err
    assert "outer" in err and "inner" not in err


def test_kernel_bar_updates_one_display_and_ends_as_a_short_line():
    shown = Recorder()
    for _ in progress.KernelBar(range(4), desc="scoring", unit="text", delay=0, mininterval=0, show=shown):
        pass
    assert len(shown.shown) >= 3  # drawn at start, updated while running, summarised at the end
    assert BAR_GRAPHIC.search(shown.shown[1])  # live: the bar itself
    last = shown.shown[-1]
    assert last.startswith("scoring: 4/4 text [") and last.endswith("text/s]")
    assert not BAR_GRAPHIC.search(last) and "\n" not in last and "\r" not in last


def test_kernel_bar_that_finishes_quickly_is_never_shown():
    shown = Recorder()
    for _ in progress.KernelBar(range(100), desc="cached step", show=shown):
        pass
    assert shown.shown == []


def test_kernel_bar_disabled_or_not_left_shows_no_summary():
    shown = Recorder()
    for _ in progress.KernelBar(range(3), disable=True, show=shown):
        pass
    assert shown.shown == []
    bar = progress.KernelBar(total=2, delay=0, leave=False, show=shown)
    bar.update(2)
    bar.close()
    assert shown.shown[-1] == ""


def test_kernel_bar_writes_nothing_to_stderr(capsys):
    bar = progress.KernelBar(total=3, delay=0, show=Recorder())
    bar.update(3)
    bar.close()
    assert capsys.readouterr().err == ""


def test_in_a_real_kernel_the_cell_keeps_one_line_and_no_warning(tmp_path):
    """A notebook executed by papermill (as the book is): the IProgress warning, which Hugging Face Hub's
    `import tqdm.auto` raises in a kernel without ipywidgets, is gone, the Hub's bars stay off (a library turning
    them back on is refused silently), and a toxlib bar leaves one short line."""
    import papermill

    from toxlib.book_build.runner import _quiet_cell

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (
        _quiet_cell().source + "\nimport huggingface_hub.utils as hub\n"
        "from transformers.utils import logging as hf_logging\n"
        "hf_logging.disable_progress_bar()\nhf_logging.enable_progress_bar()  # as a quiet load restores them\n"
        "print(hub.are_progress_bars_disabled())",
        "from toxlib.common.progress import tqdm\nbar = tqdm(total=2, desc='step', unit='batch', delay=0)\n"
        "bar.update(2)\nbar.close()",
    )]
    nbformat.write(nb, tmp_path / "in.ipynb")
    papermill.execute_notebook(str(tmp_path / "in.ipynb"), str(tmp_path / "out.ipynb"), kernel_name="python3",
                               progress_bar=False, cwd=str(tmp_path))
    first, second = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells
    assert [o.get("text") for o in first.outputs] == ["True\n"]
    assert [o.output_type for o in second.outputs] == ["display_data"]
    line = second.outputs[0].data["text/plain"]
    assert line.startswith("step: 2/2 batch [") and not BAR_GRAPHIC.search(line)
    assert second.outputs[0].metadata == progress.PROGRESS_METADATA


def test_the_chapter_runner_drops_the_progress_lines_from_the_executed_notebook(tmp_path):
    """A chapter run by the runner (as the book runs them) keeps its results and loses its bars' lines."""
    from toxlib.book_build.runner import run_notebook

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("n = 2\n")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "from toxlib.common.progress import tqdm\nbar = tqdm(total=n, desc='step', delay=0)\nbar.update(n)\n"
        "bar.close()\nprint('result', n)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "chapter.ipynb")
    run_notebook(tmp_path / "chapter.ipynb", output=tmp_path / "out.ipynb", progress=False)
    cell = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[1]
    assert [(o.output_type, o.get("text")) for o in cell.outputs] == [("stream", "result 2\n")]


def test_shown_path_is_a_path_whose_repr_is_relative():
    inside = ShownPath(paths.project_root() / "data" / "results" / "sass" / "table5_bars.png")
    assert isinstance(inside, Path) and inside.is_absolute()
    assert repr(inside) == "ShownPath('data/results/sass/table5_bars.png')"
    assert str(paths.project_root()) not in repr(inside)


def test_shown_path_outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_RESULTS_DIR", str(tmp_path))
    assert repr(ShownPath(tmp_path / "sass" / "x.png")) == "ShownPath('sass/x.png')"
    assert repr(ShownPath(Path("/nowhere/elsewhere.png"))) == "ShownPath('elsewhere.png')"


def test_save_figure_returns_a_shown_path(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from toxlib.publish import results

    monkeypatch.setenv("TOXLIB_RESULTS_DIR", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    path = results.save_figure("chapter", "line", fig)
    plt.close(fig)
    assert path.stat().st_size > 1000
    assert repr(path) == "ShownPath('chapter/line.png')"


def test_write_table_returns_a_shown_path(tmp_path, monkeypatch):
    import pandas as pd

    from toxlib.publish import results

    monkeypatch.setenv("TOXLIB_RESULTS_DIR", str(tmp_path))
    path = results.write_table("chapter", "numbers", pd.DataFrame({"a": [1, 2]}))
    assert path.read_text() == "a\n1\n2\n"
    assert repr(path) == "ShownPath('chapter/numbers.csv')"


def test_importing_toxlib_changes_no_environment_and_no_warning_filter():
    """Importing the library (the packages a chapter imports) leaves the process as it was: the quieting of other
    libraries happens where a kernel starts (the runner's hidden first cell), never on import. The third-party
    libraries toxlib imports at the top of its modules are imported first (some add warning filters of their own,
    urllib3 and requests do), so what is measured is toxlib's own doing."""
    import ast
    import subprocess
    import sys

    package = Path(__file__).resolve().parents[2] / "toxlib"
    third_party = set()
    for path in package.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
            third_party |= {n.split(".")[0] for n in names if n.split(".")[0] not in ("toxlib", "__future__")}
    code = (f"import importlib\nfor name in {sorted(third_party)!r}:\n"
            "    try:\n        importlib.import_module(name)\n    except ImportError:\n        pass\n"
            "import os, warnings; env = dict(os.environ); filters = list(warnings.filters)\n"
            "import toxlib, toxlib.generate, toxlib.scorers, toxlib.publish.results, toxlib.papers.rtp\n"
            "changed = {k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k)}\n"
            "print(sorted(changed), [f for f in warnings.filters if f not in filters])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[] []", out
