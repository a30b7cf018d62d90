"""Figures are the same in every build: the jittered points of ``box_with_points`` do not depend on numpy's global
random state, which the call leaves as it found it."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from toxlib.publish import plots


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def test_box_with_points_is_the_same_whatever_the_global_random_state():
    reference = pd.DataFrame({"group": ["a", "a", "b", "b"], "score": [0.2, 0.4, 0.5, 0.7]})
    ours = pd.DataFrame({"group": ["a", "a", "b", "b"], "score": [0.3, 0.35, 0.6, 0.65],
                         "model": ["m1", "m2", "m1", "m2"]})
    np.random.seed(1)
    first = _png(plots.box_with_points(reference, ours, "group", "score", "model", "t", "score"))
    np.random.seed(2)
    before = np.random.get_state()[1].copy()
    second = _png(plots.box_with_points(reference, ours, "group", "score", "model", "t", "score"))
    assert first == second
    assert (np.random.get_state()[1] == before).all()  # the caller's stream is untouched


def _marks(ax) -> list[tuple[float, float]]:
    """(x, y centre) of every reference mark ``grouped_bars`` drew (its two-point black lines)."""
    return [(float(line.get_xdata()[0]), float(np.mean(line.get_ydata()))) for line in ax.lines
            if line.get_color() == "black" and len(line.get_xdata()) == 2]


def test_grouped_bars_marks_the_papers_value_on_the_bar_it_belongs_to_and_keeps_the_legend_off_the_bars():
    table = pd.DataFrame({"group": ["base", "filter", "new"], "emt": [0.7, 0.6, 0.5], "prob": [0.9, 0.8, 0.7],
                          "emt_paper": [0.75, 0.68, np.nan], "prob_paper": [0.87, np.nan, np.nan]})
    fig = plots.grouped_bars(table, "group", {"emt": "EMT", "prob": "probability"}, "t", "toxicity (0-1)",
                             references={"emt": "emt_paper", "prob": "prob_paper"}, reference_label="paper")
    ax = fig.axes[0]
    emt_bars, prob_bars = ax.containers
    marks = _marks(ax)
    assert len(marks) == 3  # NaN references draw nothing
    centre = lambda bar: bar.get_y() + bar.get_height() / 2  # noqa: E731
    assert marks == [(0.75, centre(emt_bars[0])), (0.68, centre(emt_bars[1])), (0.87, centre(prob_bars[0]))]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["EMT", "probability", "paper"]
    fig.canvas.draw()
    assert legend.get_window_extent().y1 <= ax.get_window_extent().y0  # under the plot: it takes no bar's width


def test_bootstrap_curves_marks_the_papers_point():
    curves = pd.DataFrame({"n": [1, 10, 100], "mean": [0.2, 0.4, 0.6], "std": [0.1, 0.1, 0.1], "model": "m"})
    fig = plots.bootstrap_curves(curves, "model", "t", reference=(100, 0.65, "GPT-2 in the paper"))
    ax = fig.axes[0]
    point = [line for line in ax.lines if line.get_label() == "GPT-2 in the paper"]
    assert len(point) == 1 and list(point[0].get_xdata()) == [100] and list(point[0].get_ydata()) == [0.65]
    assert "log" in ax.get_xlabel()


def test_grouped_bars_marks_follow_their_group_when_a_bar_is_missing_or_groups_are_numbers():
    table = pd.DataFrame({"group": [3, 1, 2], "emt": [0.7, np.nan, 0.5], "emt_paper": [0.75, 0.6, 0.55]})
    fig = plots.grouped_bars(table, "group", {"emt": "EMT"}, "t", "toxicity (0-1)",
                             references={"emt": "emt_paper"})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["3", "1", "2"]  # the table's order, not sorted
    # the paper's value is drawn where ours is missing too, and the missing bar says so
    assert [round(y) for _, y in _marks(ax)] == [0, 1, 2] and [x for x, _ in _marks(ax)] == [0.75, 0.6, 0.55]
    assert [t.get_text().strip() for t in ax.texts] == ["n/a"]


def test_a_bar_too_short_to_see_carries_its_value_and_a_zero_differs_from_a_gap():
    table = pd.DataFrame({"group": ["a", "b", "c"], "share": [0.4, 0.002, 0.0], "other": [0.3, np.nan, 0.1]})
    fig = plots.grouped_bars(table, "group", {"share": "share", "other": "other"}, "t", "share")
    assert sorted(t.get_text().strip() for t in fig.axes[0].texts) == ["0", "0.002", "n/a"]


def test_labels_from_data_are_not_read_as_mathtext_and_the_title_is_the_caption_only():
    table = pd.DataFrame({"group": ["costs $5 and $6"], "v": [0.5]})
    fig = plots.grouped_bars(table, "group", {"v": "v"}, "Title $x$", "share")
    ax = fig.axes[0]
    fig.canvas.draw()  # mathtext would fail or typeset here
    assert ax.get_yticklabels()[0].get_text() == r"costs \$5 and \$6"
    assert not ax.title.get_visible() and ax.get_title() == r"Title \$x\$"


def test_box_plot_categories_run_down_the_vertical_axis():
    reference = pd.DataFrame({"group": ["Asian", "Asian", "Middle Eastern", "Middle Eastern"],
                              "score": [.4, .5, .3, .4]})
    ours = pd.DataFrame({"group": ["Asian", "Middle Eastern"], "score": [.45, .35], "model": ["m", "m"]})
    fig = plots.box_with_points(reference, ours, "group", "score", "model", "t", "safety score")
    fig.canvas.draw()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["Asian", "Middle Eastern"]


def test_grouped_bars_refuses_repeated_groups():
    import pytest

    with pytest.raises(ValueError, match="repeated"):
        plots.grouped_bars(pd.DataFrame({"g": ["a", "a"], "v": [1.0, 2.0]}), "g", {"v": "v"}, "t", "y")
