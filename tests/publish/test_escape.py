"""Generated text shown as text (toxlib.publish.escape) in each place the book puts it, and the places built on it:
tabs (toxlib.publish.tabs) and figures (toxlib.publish.figures)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from toxlib.publish import escape, figures, plots, tabs  # noqa: E402

HOSTILE = "<script>alert('x')</script> <h1>big</h1> <bos> & $x$ *em* [a](b) {doc}`c` # \\ |"


def test_html_escapes_every_markup_character():
    assert escape.html(HOSTILE).count("<") == 0 and escape.html(HOSTILE).count(">") == 0
    assert escape.html('a "b" \'c\' & d') == "a &quot;b&quot; &#x27;c&#x27; &amp; d"
    assert escape.html(None) == "" and escape.html(0.5) == "0.5"


def test_figure_labels_are_not_mathtext():
    assert escape.figure("costs $5 and $6") == r"costs \$5 and \$6"


def test_tabs_label_each_panel_and_show_the_first():
    html = tabs.tab_set(["<h1>one</h1>", "two"], ["<p>A</p>", "<p>B</p>"], "set")
    assert html.count('type="radio"') == 2 and html.count('checked="checked"') == 1
    assert "&lt;h1&gt;one&lt;/h1&gt;" in html and "<h1>" not in html
    assert html.index("<p>A</p>") < html.index("<p>B</p>")
    ids = re.findall(r'id="([^"]+)"', html)
    assert len(ids) == len(set(ids)) == 2 and tabs.tab_set(["x"], ["y"], "other").count(ids[0]) == 0
    with pytest.raises(ValueError, match="2 labels for 1 panels"):
        tabs.tab_set(["a", "b"], ["p"], "set")


def test_tabbed_collects_what_the_block_displays(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **_: shown.append(obj))

    class Captured:
        def __init__(self):
            self.outputs = []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    captured = Captured()
    monkeypatch.setattr("IPython.utils.capture.capture_output", lambda **_: captured)
    with tabs.tabbed(["first", "second"], "two tables"):
        for text in ("<table>1</table>", "<table>2</table>"):
            captured.outputs.append(type("Out", (), {"data": {"text/html": text}})())
    (set_,) = shown
    html = set_._repr_html_()
    assert "<table>1</table>" in html and "<table>2</table>" in html and ">second</label>" in html


def test_a_figure_says_what_it_shows_and_escapes_its_caption():
    table = pd.DataFrame({"group": ["<bos> model", "other"], "share": [0.5, 0.25]})
    fig = plots.grouped_bars(table, "group", {"share": "share of <h1>"}, "Shares per model", "share (0-1)")
    output = figures.FigureOutput(fig, caption="Caption with <script>x</script>")
    alt = figures.describe(fig)
    assert alt.startswith("Bar chart titled 'Shares per model': horizontal axis share (0-1); vertical axis "
                          "2 categories: <bos> model, other")
    html = output._repr_mimebundle_()["text/html"]
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html and "&lt;bos&gt; model" in html
    assert f'width: {output.width}px' in html and output.width == int.from_bytes(output.png[16:20], "big")
