"""Several near-identical tables as one set of tabs: a reader picks the model and the prompt set instead of scrolling
past eight copies of a table.

    with tabs.tabbed(["smollm2-135m · adversarial", "smollm2-135m · neutral", ...]):
        debias.show_attribute_tables(...)     # anything that displays one table (or figure) per label

``tabbed`` collects what the block displays (IPython's ``capture_output``) and displays it once, as the HTML of
sphinx-design's tab sets (radio buttons and labels, styled by the sphinx-design stylesheet every page of the book
loads; no script): the first panel shown, one label per panel. Labels are escaped (``toxlib.publish.escape``);
the panels are the captured outputs' own HTML, already escaped where they were made. In JupyterLab, which does not
load that stylesheet, the panels show one under another.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager

from toxlib.publish import escape


def tab_set(labels: list[str], panels: list[str], name: str) -> str:
    """The HTML of a tab set: ``panels`` (HTML) under ``labels`` (text); ``name`` makes its ids unique on a page."""
    if len(labels) != len(panels):
        raise ValueError(f"tab set {name!r}: {len(labels)} labels for {len(panels)} panels; give one label per "
                         "displayed table")
    group = "tx-tabs-" + hashlib.sha256(name.encode()).hexdigest()[:10]
    parts = [f'<div class="sd-tab-set docutils tx-tab-set" role="group" aria-label="{escape.html(name)}">']
    for i, (label, panel) in enumerate(zip(labels, panels)):
        checked = ' checked="checked"' if i == 0 else ""
        parts += [f'<input{checked} id="{group}-{i}" name="{group}" type="radio">',
                  f'<label class="sd-tab-label" for="{group}-{i}">{escape.html(label)}</label>',
                  f'<div class="sd-tab-content docutils">\n{panel}\n</div>']
    parts.append("</div>")
    return "\n".join(parts)


class _Html:
    def __init__(self, html: str):
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


@contextmanager
def tabbed(labels: list[str], name: str | None = None):
    """Display what the ``with`` block displays as one tab set, one tab per displayed output, labelled ``labels``
    in order (``name``, default the labels joined, names the set for screen readers and its ids). Raises
    ValueError when the block displays another number of outputs than ``labels``, or an output without HTML."""
    from IPython.display import display  # optional: IPython comes with the [book] extra (a notebook's kernel)
    from IPython.utils.capture import capture_output

    with capture_output(stdout=False, stderr=False, display=True) as captured:
        yield
    panels = []
    for output in captured.outputs:
        html = output.data.get("text/html")
        if html is None:
            raise ValueError(f"tabbed: an output has no HTML to put in a tab (it has {sorted(output.data)})")
        panels.append(html)
    display(_Html(tab_set(list(labels), panels, name or " | ".join(labels))))
