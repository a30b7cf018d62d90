"""Progress bars: the one place toxlib makes them (``from toxlib.common.progress import tqdm``), and quiet libraries.

* In a terminal (``python -m toxlib ...``, scripts, tests): tqdm's text bar on stderr, as always.
* Inside ``hidden()``: no bar at all (a caller's own bar stands for the steps).
* In a Jupyter kernel (JupyterLab, or papermill executing a chapter for the book): ``KernelBar``, a bar drawn in
  one IPython display that is updated in place. JupyterLab shows it live; the notebook keeps only its last state,
  one short line without the bar graphic (``generate smollm2-135m: 64/64 prompt [00:12, 5.3prompt/s]``), marked
  with ``PROGRESS_METADATA`` so that the chapter runner drops it from the executed notebooks of the book. A bar
  that finishes within ``KERNEL_DELAY_S`` seconds (a fully cached step) is never shown at all. No ipywidgets
  needed, hence no ``TqdmWarning: IProgress not found``.

``quiet_libraries()``, called in a kernel (the chapter runner sends it as a hidden first cell of every notebook it
executes; importing toxlib changes nothing), keeps the libraries' own output out of the pages: tqdm's IProgress
warning (Hugging Face Hub imports ``tqdm.auto``), the Hub's and transformers' bars ("Loading weights", downloads)
and transformers' warnings below ERROR. Each is an environment default, so a reader
who wants them back sets ``HF_HUB_DISABLE_PROGRESS_BARS=0`` or ``TRANSFORMERS_VERBOSITY=warning`` before starting
the kernel.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings

from tqdm import std

KERNEL_DELAY_S = 1.0
#: marks a KernelBar's output in the notebook, so the chapter runner can drop it from the executed notebook (the
#: book shows results, not how long a step took; JupyterLab still shows the bar live)
PROGRESS_METADATA = {"toxlib": {"progress": True}}
SUMMARY_FORMAT = "{n_fmt}/{total_fmt} {unit} [{elapsed}, {rate_fmt}]"
#: how many ``hidden()`` blocks are open: while any is, every toxlib bar is made disabled
_HIDDEN = [0]


@contextlib.contextmanager
def hidden():
    """Make every toxlib bar started inside the ``with`` block a disabled one: a caller that shows a bar of its own
    over many steps (the report card over its chapters) keeps the steps' bars off its terminal."""
    _HIDDEN[0] += 1
    try:
        yield
    finally:
        _HIDDEN[0] -= 1


class TerminalBar(std.tqdm):
    """tqdm's text bar on stderr, disabled inside ``hidden()``."""

    def __init__(self, *args, **kwargs):
        if _HIDDEN[0]:
            kwargs["disable"] = True
        super().__init__(*args, **kwargs)


def in_kernel() -> bool:
    """True inside a Jupyter kernel (JupyterLab, VS Code, papermill), False in a terminal or plain IPython."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return shell is not None and shell is not False and type(shell).__name__ == "ZMQInteractiveShell"


class _Discard(io.TextIOBase):
    """A text stream that swallows what tqdm writes to its file (a KernelBar draws through IPython instead)."""

    def write(self, s: str) -> int:
        return len(s)


class KernelBar(std.tqdm):
    """tqdm drawn in one updatable IPython display; on close it becomes "<desc>: " + ``SUMMARY_FORMAT`` (no bar).

    Takes tqdm's arguments; ``delay`` defaults to ``KERNEL_DELAY_S`` and ``file`` is ignored. ``show`` is the
    display function (IPython's ``display`` by default; tests pass a recorder) called as
    ``show({"text/plain": line}, raw=True, display_id=True)`` and returning a handle with ``update(data, raw=True)``.
    """

    def __init__(self, *args, show=None, **kwargs):
        self._handle = None
        self._show = show
        if _HIDDEN[0]:
            kwargs["disable"] = True
        kwargs.setdefault("delay", KERNEL_DELAY_S)
        kwargs["file"] = _Discard()
        kwargs.setdefault("ascii", False)
        super().__init__(*args, **kwargs)

    def display(self, msg=None, pos=None):
        self._draw(self.__str__() if msg is None else msg)
        return True

    def close(self):
        shown = getattr(self, "_handle", None) is not None and not self.disable
        super().close()
        if shown and self.leave is not False:
            self._draw(self.summary())

    def summary(self) -> str:
        """The bar's state as one short line: description, count, unit, elapsed time and rate."""
        bar_format = ("{desc}: " if self.desc else "") + SUMMARY_FORMAT
        return self.format_meter(**{**self.format_dict, "bar_format": bar_format})

    def _draw(self, line: str) -> None:
        data = {"text/plain": line}
        if self._handle is None:
            show = self._show
            if show is None:
                from IPython.display import display as show
            self._handle = show(data, raw=True, display_id=True, metadata=PROGRESS_METADATA)
        else:
            self._handle.update(data, raw=True, metadata=PROGRESS_METADATA)


def quiet_libraries() -> None:
    """In a kernel, keep tqdm's IProgress warning, the Hub's and transformers' bars and transformers' warnings out
    of the cell outputs (see the module docstring). Idempotent; a no-op in a terminal."""
    if not in_kernel():
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # with the variable set, a library's own enable_progress_bar() (around a quiet load) is refused with a warning
    warnings.filterwarnings("ignore", message="Cannot enable progress bars", category=UserWarning)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found", category=std.TqdmWarning)
        import tqdm.autonotebook  # noqa: F401  (imported once here, so later `import tqdm.auto` no longer warns)
    if "huggingface_hub" in sys.modules:  # imported before toxlib: its switches were read already
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


@contextlib.contextmanager
def quiet_peft():
    """Silence two peft warnings that are not about our use: its reading of transformers' deprecated
    ``is_gradient_checkpointing``, and its base-model config lookup when saving an adapter."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        # saving: peft looks for the base model's config to see if the vocabulary changed; it did not
        warnings.filterwarnings("ignore", message="Could not find a config file in sentence-transformers")
        yield


tqdm = KernelBar if in_kernel() else TerminalBar
