"""Figures shared by chapters (matplotlib/seaborn). Each returns the Figure; callers save it with
results.publish_figure (a numbered figure) or results.show_figure (in place, under its caption).

Every figure is drawn to stay readable on a phone: ``WIDTH`` inches wide at ``toxlib.publish.figures.DPI``, so that
scaled to a 390-pixel screen its smallest text (``READABLE``) is still about 9 pixels; categories sit on the
vertical axis, where long labels do not overlap; the legend stands below the plot, so it takes no width from it.
The title given to a function is the figure's caption (``results.figure_title``): it is kept on the axes for the
caption and the alternative text, but not drawn, since the page prints it under the figure. Every label that comes
from data (a model, a group, a claim) is escaped for matplotlib (``toxlib.publish.escape.figure``).
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from toxlib.publish import escape

#: the colour of each verdict (``toxlib.metrics.uncertainty.VERDICTS``) in the scorecard's table and in
#: ``claims_forest``, each at least 4.5:1 against white (the book's dark theme takes its own, lighter set from
#: _static/tables.css); "not informative" is violet, apart from the green, red, amber and grey of the others
VERDICT_COLOURS = {"holds": "#1a7f37", "fails": "#cf222e", "undecided": "#9a6700", "not informative": "#8250df",
                   "not judged": "#6e7781"}
#: a figure's width (inches): at 120 dpi, 624 pixels, shown at 0.57 of that on a 390-pixel phone
WIDTH = 5.2
#: text sizes (points): 10 points at 120 dpi, scaled to a phone's width, are about 9.5 pixels
READABLE = {"font.size": 11, "axes.titlesize": 11, "axes.labelsize": 11, "xtick.labelsize": 10,
            "ytick.labelsize": 10, "legend.fontsize": 10, "figure.titlesize": 11}
#: category labels are wrapped at this many characters
LABEL_CHARS = 26
#: a bar shorter than this share of its axis gets its value written beside it (and a missing one "n/a")
SMALL_BAR = 0.04


def _label(text, width: int = LABEL_CHARS) -> str:
    """A data-derived label, escaped for matplotlib and wrapped at ``width`` characters."""
    return "\n".join(textwrap.wrap(escape.figure(text), width, break_on_hyphens=False)) or escape.figure(text)


def _caption(ax, title: str) -> None:
    """Keep ``title`` on ``ax`` for the caption and alternative text, without drawing it."""
    ax.set_title(escape.figure(title))
    ax.title.set_visible(False)


def _legend_below(fig, ax, ncol: int | None = None) -> None:
    """The axes' legend entries as one legend under the plot (none for a single unlabelled series)."""
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    if len(labels) < 2:
        return
    short = max(len(label) for label in labels) <= 16
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol or min(3 if short else 2, len(labels)),
               frameon=False)


def _subplots(height: float, width: float = WIDTH):
    with plt.rc_context(READABLE):
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return fig, ax


def grouped_bars(table: pd.DataFrame, group: str, values: dict[str, str], title: str, ylabel: str,
                 horizontal: bool = True, references: dict[str, str] | None = None,
                 reference_label: str = "the paper"):
    """Grouped bar chart: one group of bars per row of ``table[group]`` (unique values), one bar per ``values``
    column; the legend stands under the plot. A bar too short to see (under ``SMALL_BAR`` of the axis) has its
    value written beside it, and a missing value "n/a", so a zero and a gap read differently.

    values: {column: legend label}. references: {values column: column of ``table`` holding the paper's value for
    that bar}, drawn as a black mark across the bar's end (no mark where the reference is NaN) and named
    ``reference_label`` in the legend. ``horizontal`` is kept for callers; bars are always horizontal (groups on
    the vertical axis, where their labels have room). Returns the matplotlib Figure.
    """
    if not table[group].is_unique:
        raise ValueError(f"grouped_bars draws one group per row: {group!r} has repeated values")
    order = [_label(g) for g in table[group]]
    long = table.assign(**{group: order}).melt(id_vars=group, value_vars=list(values), var_name="series",
                                               value_name="value")
    long["series"] = long["series"].map({k: escape.figure(v) for k, v in values.items()})
    lines = sum(label.count("\n") + 1 for label in order)
    height = 0.9 + max(0.22 * len(table) * len(values), 0.2 * lines) + 0.25 * (len(values) > 1 or bool(references))
    with plt.rc_context(READABLE):
        fig, ax = _subplots(max(2.6, height))
        hue_order = [escape.figure(v) for v in values.values()]
        sns.barplot(data=long, y=group, x="value", hue="series", ax=ax, orient="h", order=order,
                    hue_order=hue_order)
        ax.set_xlabel(escape.figure(ylabel))
        ax.set_ylabel("")
        marked = False
        for column, bars in zip(values, ax.containers):  # one container per hue level, in hue_order
            if not references or column not in references:
                continue
            for y, half, reference in _bar_rows(bars, table[references[column]]):
                if pd.isna(reference):
                    continue
                ax.plot([reference, reference], [y - 0.9 * half, y + 0.9 * half], color="black", lw=2.5,
                        solid_capstyle="butt", label=None if marked else escape.figure(reference_label))
                marked = True
        _mark_small_bars(ax, [table[c] for c in values])
        _caption(ax, title)
        _legend_below(fig, ax)
    return fig


def _bar_rows(bars, column: pd.Series):
    """(y centre, half height, value of ``column``) of each category's bar in one bar container, in category order;
    a category whose value drew no bar (missing) gets the place its bar would have."""
    by_category = {int(round(bar.get_y() + bar.get_height() / 2)): bar for bar in bars}
    some = next(iter(by_category.items()), None)
    offset = some[1].get_y() + some[1].get_height() / 2 - some[0] if some else 0.0
    half = some[1].get_height() / 2 if some else 0.2
    return [(i + offset, half, value) for i, value in enumerate(column)]


def _mark_small_bars(ax, columns: list[pd.Series]) -> None:
    """Write the value beside every bar shorter than ``SMALL_BAR`` of the axis, "n/a" where the value is missing
    (``columns``: each bar series' values in category order, one per container)."""
    low, high = ax.get_xlim()
    span = (high - low) or 1.0
    for bars, column in zip(ax.containers, columns):
        for y, _, value in _bar_rows(bars, column):
            if pd.isna(value):
                ax.text(0, y, " n/a", va="center", ha="left", fontsize=8, color="0.35")
            elif abs(value) < SMALL_BAR * span:
                ax.text(max(value, 0), y, f" {value:.3g}", va="center", ha="left", fontsize=8, color="0.2")


def histograms(frame: pd.DataFrame, column: str, by: str, title: str, xlabel: str,
               marker: float | list[float] | None = None, log_scale: bool = False, bins: int = 20):
    """Overlaid density-normalised histograms of ``frame[column]`` per value of ``frame[by]``; optional vertical
    line(s) at ``marker``; ``log_scale`` puts the x axis (and the bins) on a log10 scale."""
    with plt.rc_context(READABLE):
        fig, ax = _subplots(3.4)
        data = frame.assign(**{by: frame[by].map(escape.figure)})
        sns.histplot(data=data, x=column, hue=by, stat="density", common_norm=False, bins=bins, element="step",
                     ax=ax, log_scale=log_scale)
        for m in [marker] if isinstance(marker, (int, float)) else marker or []:
            ax.axvline(m, color="black", linestyle="--", linewidth=1)
        ax.set_xlabel(escape.figure(xlabel))
        _caption(ax, title)
        legend = ax.get_legend()
        if legend is not None:  # seaborn's legend holds the groups' handles; put it under the plot
            handles, labels = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
            legend.remove()
            fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), frameon=False)
    return fig


def box_with_points(reference: pd.DataFrame, ours: pd.DataFrame, x: str, y: str, hue: str, title: str,
                    ylabel: str, line: float | None = None):
    """Box plots of ``reference[y]`` per ``x`` category (e.g. the paper's models per demographic), with ``ours``
    drawn on top as one marker per ``hue`` value (e.g. our models). Optional reference line at ``line``. The
    categories run down the vertical axis, so their names never overlap; ``ylabel`` names the value axis."""
    order = [escape.figure(c) for c in dict.fromkeys(reference[x])]
    reference = reference.assign(**{x: reference[x].map(escape.figure)})
    ours = ours.assign(**{x: ours[x].map(escape.figure), hue: ours[hue].map(escape.figure)})
    with plt.rc_context(READABLE):
        fig, ax = _subplots(1.2 + 0.36 * len(order))
        sns.boxplot(data=reference, y=x, x=y, order=order, color="0.85", ax=ax, fliersize=2, orient="h")
        # seaborn jitters with numpy's global generator: seed it for this call only, so the figure is the same
        state = np.random.get_state()
        np.random.seed(0)
        try:
            sns.stripplot(data=ours, y=x, x=y, hue=hue, order=order, ax=ax, size=6, jitter=0.15, marker="D",
                          edgecolor="black", linewidth=0.5, orient="h")
        finally:
            np.random.set_state(state)
        if line is not None:
            ax.axvline(line, color="black", linestyle="--", linewidth=1)
        ax.set_xlabel(escape.figure(ylabel))
        ax.set_ylabel("")
        _caption(ax, title)
        _legend_below(fig, ax)
    return fig


def calibration(bins: pd.DataFrame, by: str, title: str, xlabel: str, ylabel: str):
    """Calibration curves: ``mean_reference`` against ``mean_score`` per bin (rows of
    ``toxlib.metrics.agreement.calibration_bins``, stacked with a ``by`` column naming each curve) and the diagonal
    of perfect calibration. The bins' counts are in the table, not the figure."""
    with plt.rc_context(READABLE):
        fig, ax = _subplots(WIDTH, WIDTH * 0.9)
        ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--", label="perfectly calibrated")
        sns.lineplot(data=bins.assign(**{by: bins[by].map(escape.figure)}), x="mean_score", y="mean_reference",
                     hue=by, marker="o", ax=ax)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel=escape.figure(xlabel), ylabel=escape.figure(ylabel))
        _caption(ax, title)
        _legend_below(fig, ax)
    return fig


def bootstrap_curves(curves: pd.DataFrame, by: str, title: str, threshold: float | None = 0.5,
                     reference: tuple[float, float, str] | None = None):
    """Expected maximum over n draws against n (log x axis), one line per ``by`` value with its mean +/- std band
    (rows of ``toxlib.metrics.bootstrap_expected_max`` stacked with a ``by`` column); a dotted line at
    ``threshold``; ``reference`` = (n, value, label): the paper's value at n as a black marker."""
    with plt.rc_context(READABLE):
        fig, ax = _subplots(3.6)
        for name, curve in curves.groupby(by, sort=False):
            line, = ax.plot(curve["n"], curve["mean"], label=escape.figure(name))
            ax.fill_between(curve["n"], curve["mean"] - curve["std"], curve["mean"] + curve["std"], alpha=0.2,
                            color=line.get_color())
        if threshold is not None:
            ax.axhline(threshold, color="grey", ls=":", lw=1, label=f"toxicity {threshold}")
        if reference is not None:
            n, value, label = reference
            ax.plot([n], [value], marker="X", markersize=9, color="black", linestyle="none",
                    label=escape.figure(label))
        ax.set(xscale="log", ylim=(0, 1), xlabel="number of generations n (log scale)",
               ylabel="expected maximum toxicity (0-1)")
        _caption(ax, title)
        _legend_below(fig, ax)
    return fig


def _threshold_band(text) -> tuple[float, float] | None:
    """A claims table's threshold cell ("0.5" or "0.48..0.52") as (low, high); None when empty or not numeric."""
    parts = str(text).split("..") if isinstance(text, str) and text.strip() else []
    try:
        values = [float(p) for p in parts]
    except ValueError:
        return None
    return (values[0], values[-1]) if values else None


def drawable_claims(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims ``claims_forest`` draws: a numeric value and a numeric threshold."""
    values = pd.to_numeric(claims["our_value"], errors="coerce")
    bands = claims["threshold"].map(_threshold_band)
    return claims[values.notna() & bands.notna()]


def _paper_number(text) -> float | None:
    try:
        return float(str(text).strip())
    except ValueError:
        return None


#: a forest row's layout, in data units of its vertical axis: one line of the claim's text, the gap from the text to
#: the interval, the gap to the next claim; and the height of one such unit (inches)
FOREST_LINE, FOREST_GAP, FOREST_AFTER, FOREST_UNIT = 0.34, 0.32, 0.42, 0.5


def claims_forest(claims: pd.DataFrame, title: str, wrap: int = 52):
    """Each claim's value and 95% interval against the threshold that separates holding from failing, on one x
    scale for the whole figure: per claim, its text (wrapped at ``wrap`` characters, fewer beside a verdict longer
    than "not judged", across the figure's width) with its verdict at the right, and under it the value as a dot,
    the interval as a bar, the threshold as a grey dashed mark (a shaded band for "within" claims) and the paper's
    value as an open diamond where it is a number, coloured by verdict. Call it once per chapter.

    claims: rows with the claims contract's columns (``claims.collect_claims``, one chapter). Rows whose value or
    threshold is not a number are left out (``drawable_claims``). Returns the Figure (None when no row can be
    drawn).
    """
    rows = drawable_claims(claims)
    if rows.empty:
        return None
    # a verdict longer than "not judged" ("not informative") takes its extra characters from the claim's lines
    texts = [textwrap.wrap(escape.figure(c), wrap - max(0, len(str(v)) - len("not judged")), break_on_hyphens=False)[:3]
             for c, v in zip(rows["claim"], rows["verdict"])]
    total = sum(FOREST_LINE * len(t) + FOREST_GAP + FOREST_AFTER for t in texts)
    with plt.rc_context(READABLE):
        fig, ax = _subplots(0.9 + FOREST_UNIT * total)
        y, centres = 0.0, []
        for lines, (_, row) in zip(texts, rows.iterrows()):
            colour = VERDICT_COLOURS.get(row["verdict"], "black")
            ax.text(0.0, y, "\n".join(lines), transform=ax.get_yaxis_transform(), va="top", ha="left", fontsize=10)
            ax.text(1.0, y, row["verdict"], transform=ax.get_yaxis_transform(), va="top", ha="right", fontsize=10,
                    color=colour, fontweight="bold")
            centre = y + FOREST_LINE * len(lines) + FOREST_GAP
            centres.append(centre)
            value, (t_low, t_high) = float(row["our_value"]), _threshold_band(row["threshold"])
            if t_low < t_high:
                ax.fill_betweenx([centre - 0.18, centre + 0.18], t_low, t_high, color="0.88", lw=0)
            for t in {t_low, t_high}:
                ax.plot([t, t], [centre - 0.2, centre + 0.2], color="0.35", lw=1.5, ls="--")
            if pd.notna(row["ci_low"]) and pd.notna(row["ci_high"]):
                ax.plot([float(row["ci_low"]), float(row["ci_high"])], [centre, centre], color=colour, lw=3,
                        solid_capstyle="butt")
            ax.plot([value], [centre], "o", color=colour, ms=7)
            paper = _paper_number(row["paper_value"])
            if paper is not None:
                ax.plot([paper], [centre], "D", mfc="none", mec="black", ms=7, mew=1.2)
            y = centre + FOREST_AFTER
        ax.set_ylim(y, -0.05)
        ax.set_yticks(centres, [""] * len(centres))
        ax.tick_params(axis="y", length=0)
        ax.grid(axis="x", color="0.9")
        ax.set_xlabel("each claim's value (grey: its threshold)")
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        _caption(ax, title)
    return fig
