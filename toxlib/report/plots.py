"""Figures shared by chapters (matplotlib/seaborn). Each returns the Figure; callers save it with
results.save_figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

#: the colour of each verdict in the scorecard's table and in ``claims_forest``
VERDICT_COLOURS = {"holds": "#1a7f37", "fails": "#cf222e", "undecided": "#9a6700", "not judged": "#6e7781"}


def grouped_bars(table: pd.DataFrame, group: str, values: dict[str, str], title: str, ylabel: str,
                 horizontal: bool = True, references: dict[str, str] | None = None,
                 reference_label: str = "the paper"):
    """Grouped bar chart: one group of bars per row of ``table[group]`` (unique values), one bar per ``values``
    column; the legend stands outside the axes, so it covers no bar.

    values: {column: legend label}. references: {values column: column of ``table`` holding the paper's value for
    that bar}, drawn as a black mark across the bar's end (no mark where the reference is NaN) and named
    ``reference_label`` in the legend. Returns the matplotlib Figure.
    """
    if not table[group].is_unique:
        raise ValueError(f"grouped_bars draws one group per row: {group!r} has repeated values")
    order = [str(g) for g in table[group]]
    long = table.assign(**{group: order}).melt(id_vars=group, value_vars=list(values), var_name="series",
                                               value_name="value")
    long["series"] = long["series"].map(values)
    height = max(3.0, 0.45 * len(table) * max(1, len(values)) / 2)
    fig, ax = plt.subplots(figsize=(7.5, height) if horizontal else (9, 4))
    hue_order = list(values.values())
    if horizontal:
        sns.barplot(data=long, y=group, x="value", hue="series", ax=ax, orient="h", order=order, hue_order=hue_order)
        ax.set_xlabel(ylabel)
        ax.set_ylabel("")
    else:
        sns.barplot(data=long, x=group, y="value", hue="series", ax=ax, order=order, hue_order=hue_order)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("")
        ax.tick_params(axis="x", rotation=30)
    marked = False
    for column, bars in zip(values, ax.containers):  # one container per hue level, in hue_order
        if not references or column not in references:
            continue
        for bar in bars:
            # the group a bar belongs to is the category at its centre (a missing value draws no bar)
            centre = bar.get_y() + bar.get_height() / 2 if horizontal else bar.get_x() + bar.get_width() / 2
            reference = table[references[column]].iloc[int(round(centre))]
            if pd.isna(reference):
                continue
            if horizontal:
                ax.plot([reference, reference], [centre - 0.45 * bar.get_height(), centre + 0.45 * bar.get_height()],
                        color="black", lw=2.5, solid_capstyle="butt", label=None if marked else reference_label)
            else:
                ax.plot([centre - 0.45 * bar.get_width(), centre + 0.45 * bar.get_width()], [reference, reference],
                        color="black", lw=2.5, solid_capstyle="butt", label=None if marked else reference_label)
            marked = True
    ax.set_title(title)
    ax.legend(title=None, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def histograms(frame: pd.DataFrame, column: str, by: str, title: str, xlabel: str,
               marker: float | list[float] | None = None, log_scale: bool = False, bins: int = 20):
    """Overlaid density-normalised histograms of ``frame[column]`` per value of ``frame[by]``; optional vertical
    line(s) at ``marker``; ``log_scale`` puts the x axis (and the bins) on a log10 scale."""
    fig, ax = plt.subplots(figsize=(7.5, 3.5))
    sns.histplot(data=frame, x=column, hue=by, stat="density", common_norm=False, bins=bins, element="step", ax=ax,
                 log_scale=log_scale)
    for m in [marker] if isinstance(marker, (int, float)) else marker or []:
        ax.axvline(m, color="black", linestyle="--", linewidth=1)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    fig.tight_layout()
    return fig


def box_with_points(reference: pd.DataFrame, ours: pd.DataFrame, x: str, y: str, hue: str, title: str,
                    ylabel: str, line: float | None = None):
    """Box plots of ``reference[y]`` per ``x`` category (e.g. the paper's models per demographic), with ``ours``
    drawn on top as one marker per ``hue`` value (e.g. our models). Optional horizontal line at ``line``."""
    order = list(dict.fromkeys(reference[x]))
    fig, ax = plt.subplots(figsize=(9, 4))
    sns.boxplot(data=reference, x=x, y=y, order=order, color="0.85", ax=ax, fliersize=2)
    # seaborn jitters with numpy's global generator: seed it for this call only, so the figure is the same each build
    state = np.random.get_state()
    np.random.seed(0)
    try:
        sns.stripplot(data=ours, x=x, y=y, hue=hue, order=order, ax=ax, size=7, jitter=0.15, marker="D",
                      edgecolor="black", linewidth=0.5)
    finally:
        np.random.set_state(state)
    if line is not None:
        ax.axhline(line, color="black", linestyle="--", linewidth=1)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("")
    ax.tick_params(axis="x", rotation=35)
    ax.legend(title=None, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the boxes
    fig.tight_layout()
    return fig


def calibration(bins: pd.DataFrame, by: str, title: str, xlabel: str, ylabel: str):
    """Calibration curves: ``mean_reference`` against ``mean_score`` per bin (rows of
    ``toxlib.metrics.agreement.calibration_bins``, stacked with a ``by`` column naming each curve) and the diagonal
    of perfect calibration. The bins' counts are in the table, not the figure."""
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--", label="perfectly calibrated")
    sns.lineplot(data=bins, x="mean_score", y="mean_reference", hue=by, marker="o", ax=ax)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(title=None, frameon=False, loc="upper left")
    fig.tight_layout()
    return fig


def bootstrap_curves(curves: pd.DataFrame, by: str, title: str, threshold: float | None = 0.5,
                     reference: tuple[float, float, str] | None = None):
    """Expected maximum over n draws against n (log x axis), one line per ``by`` value with its mean +/- std band
    (rows of ``toxlib.metrics.bootstrap_expected_max`` stacked with a ``by`` column); a dotted line at
    ``threshold``; ``reference`` = (n, value, label): the paper's value at n as a black marker."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, curve in curves.groupby(by, sort=False):
        line, = ax.plot(curve["n"], curve["mean"], label=name)
        ax.fill_between(curve["n"], curve["mean"] - curve["std"], curve["mean"] + curve["std"], alpha=0.2,
                        color=line.get_color())
    if threshold is not None:
        ax.axhline(threshold, color="grey", ls=":", lw=1, label=f"toxicity {threshold}")
    if reference is not None:
        n, value, label = reference
        ax.plot([n], [value], marker="X", markersize=9, color="black", linestyle="none", label=label)
    ax.set(xscale="log", ylim=(0, 1), xlabel="number of generations n (log scale)",
           ylabel="expected maximum toxicity (0-1)", title=title)
    ax.legend(frameon=False, loc="lower right")
    fig.tight_layout()
    return fig


def _threshold_band(text) -> tuple[float, float] | None:
    """A claims table's threshold cell ("0.5" or "0.48..0.52") as (low, high); None when empty or not numeric."""
    parts = str(text).split("..") if isinstance(text, str) and text.strip() else []
    try:
        values = [float(p) for p in parts]
    except ValueError:
        return None
    return (values[0], values[-1]) if values else None


def claims_forest(claims: pd.DataFrame, title: str, wrap: int = 48):
    """Each claim's value and 95% interval against the threshold that separates holding from failing: one row per
    claim with its own x scale (claims measure different things), value as a dot, interval as a bar, threshold as
    a dashed line (a shaded band for "within" claims), coloured by verdict. Call it once per chapter.

    claims: rows with the claims contract's columns (``results.collect_claims``, one chapter). Rows whose value or
    threshold is not a number are left out (listed in the figure's footnote). Returns the Figure (None when no row
    can be drawn).
    """
    import textwrap

    values = pd.to_numeric(claims["our_value"], errors="coerce")
    bands = claims["threshold"].map(_threshold_band)
    drawable = values.notna() & bands.notna()
    rows = claims[drawable]
    if rows.empty:
        return None
    fig, axes = plt.subplots(len(rows), 1, figsize=(8.5, 0.2 + 0.62 * len(rows)), squeeze=False)
    for ax, (i, row) in zip(axes[:, 0], rows.iterrows()):
        value, (t_low, t_high) = values[i], bands[i]
        low, high = row["ci_low"], row["ci_high"]
        has_ci = pd.notna(low) and pd.notna(high)
        colour = VERDICT_COLOURS.get(row["verdict"], "black")
        points = [value, t_low, t_high] + ([float(low), float(high)] if has_ci else [])
        span = (max(points) - min(points)) or max(abs(value), 1.0) * 0.1
        ax.set_xlim(min(points) - 0.15 * span, max(points) + 0.15 * span)
        if t_low < t_high:
            ax.axvspan(t_low, t_high, color="0.85")
        for t in {t_low, t_high}:
            ax.axvline(t, color="0.3", ls="--", lw=1)
        if has_ci:
            ax.hlines(0, float(low), float(high), color=colour, lw=3)
        ax.plot([value], [0], "o", color=colour, ms=6)
        ax.set_yticks([0], ["\n".join(textwrap.wrap(str(row["claim"]), wrap)[:2])], fontsize=8)
        ax.set_ylim(-1, 1)
        ax.tick_params(axis="x", labelsize=7, pad=1)
        ax.text(1.01, 0.5, row["verdict"], transform=ax.transAxes, color=colour, fontsize=8, va="center",
                fontweight="bold")
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    axes[0, 0].set_title(title, fontsize=10, loc="left")
    skipped = len(claims) - len(rows)
    if skipped:
        fig.text(0.01, 0.0, f"{skipped} claim(s) without a numeric value and threshold are not drawn", fontsize=7)
    fig.tight_layout(h_pad=0.4)
    return fig
