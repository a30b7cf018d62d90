"""results.publish / scorecard.publish_claims: one call writes the table and displays it."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from toxlib.publish import claims, results, scorecard


@pytest.fixture()
def shown(monkeypatch):
    """What the chapter displays; myst-nb's glue (a raw display with scrapbook metadata) goes to ``shown.glued``."""
    seen = ShownList()

    def display(obj, raw=False, metadata=None, **_):
        if raw:
            seen.glued.append((metadata or {}).get("scrapbook", {}).get("name"))
        else:
            seen.append(obj)

    monkeypatch.setattr("IPython.display.display", display)
    return seen


class ShownList(list):
    def __init__(self):
        super().__init__()
        self.glued = []


def test_publish_writes_every_column_and_displays_the_chosen_ones(results_dir, shown):
    table = pd.DataFrame({"a": [1.23456, 2.0], "b": ["x", "y"], "c": [1, 2]})
    assert results.publish("chapter", "t", table, "A caption", digits=2, columns=["a", "b"]) is None
    assert pd.read_csv(results_dir / "chapter" / "t.csv").equals(table)
    (styler,) = shown
    html = styler.to_html()
    assert "A caption" in html and "1.23" in html and "1.235" not in html and ">c<" not in html


def test_publish_refuses_an_empty_table_before_writing(results_dir, shown):
    with pytest.raises(ValueError, match="empty table"):
        results.publish("chapter", "empty", pd.DataFrame({"a": []}), "nothing")
    assert shown == []


def test_publish_claims_writes_claims_csv_and_displays_it(results_dir, shown):
    rows = [claims.claim("x holds", 1.0, 1.0, verdict="holds", kind="our models", rule="holds", subject="model:m")]
    scorecard.publish_claims("chapter", rows, "Claims")
    written = pd.read_csv(results_dir / "chapter" / "claims.csv")
    assert written["claim"].tolist() == ["x holds"] and written["verdict"].tolist() == ["holds"]
    html = shown[0].to_html()
    assert "Claims" in html and "our models" in html and "holds" in html
    assert ">shown<" not in html and ">ci_low<" not in html  # the narrow reader's form, not every column
    assert shown.glued == ["chapter-findings"]  # the findings box at the top of the page


def test_publish_figure_saves_glues_the_figure_and_its_title_and_shows_nothing(results_dir, shown, monkeypatch):
    import matplotlib.pyplot as plt

    glued = {}
    monkeypatch.setattr("myst_nb.glue", lambda key, value, display=True: glued.update({key: (value, display)}))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_title("Curve (model m, 12 prompts)")
    path = results.publish_figure("chapter", "curve", fig)
    assert (results_dir / "chapter" / "curve.png").is_file() and str(path).endswith("chapter/curve.png")
    key = results.figure_key("chapter", "curve")
    output, displayed = glued[key]
    assert not displayed and output.png == (results_dir / "chapter" / "curve.png").read_bytes()
    html = output._repr_mimebundle_()["text/html"]
    assert "data:image/png;base64," in html and "curve.png" not in html
    assert re.search(r'alt="[^"]*titled &#x27;Curve \(model m, 12 prompts\)&#x27;', html)  # what it shows
    assert glued[f"{key}-caption"] == ("Curve (model m, 12 prompts)", False)
    assert not plt.fignum_exists(fig.number) and list(shown) == []


def test_publish_figure_refuses_a_figure_without_a_title(results_dir, shown, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr("myst_nb.glue", lambda *a, **k: None)
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="no title"):
        results.publish_figure("chapter", "bare", fig)
    plt.close(fig)
