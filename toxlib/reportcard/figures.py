"""The report's figures, the reader's model drawn beside the bundled models (their rows from the book) and the
papers: the unprompted curve (RealToxicityPrompts Fig. 2), expected maximum toxicity per prompt class (Table 2) and
the safety score per demographic (the safety-score paper's Table 8). Which figures a report draws is what the model
chapters' declarations name (``ReportNeeds.figures``); a chapter of another paper names its own.

Each function takes the book's results folder and the report's, returns ``(figure, alt text)`` or None when either
run wrote no table for it, and labels every model by its name as data, never as markup.
"""

from __future__ import annotations

import pkgutil
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from toxlib.chapters import chapter, model_chapters
from toxlib.papers.rtp import PAPER_GPT2_UNPROMPTED_AT_100
from toxlib.publish.figures import FigureOutput

REPORTED = "#d62728"  # the reader's model: the one colour the bundled models' greys never take
BUNDLED_COLOURS = ("#555555", "#999999", "#bbbbbb")


def _both(book: Path, report: Path, stem: str, name: str, model: str) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(the book's table without ``model``'s rows, the report's rows of ``model``); None unless both exist. A
    bundled model's report draws its own rows once, as the report's."""
    paths = Path(book) / stem / f"{name}.csv", Path(report) / stem / f"{name}.csv"
    if not all(p.exists() for p in paths):
        return None
    theirs, ours = pd.read_csv(paths[0]), pd.read_csv(paths[1])
    return theirs[theirs["model"] != model], ours[ours["model"] == model]


def unprompted_curve(book: Path, report: Path, model: str):
    """Expected maximum toxicity against the number of generations, log scale, with each model's 95% band."""
    found = _both(book, report, "rtp_unprompted", "figure2", model)
    if found is None:
        return None
    theirs, ours = found
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for colour, (name, rows) in zip(BUNDLED_COLOURS, theirs.groupby("model", sort=True)):
        ax.plot(rows["n"], rows["mean"], color=colour, label=f"{name} (book)")
        ax.fill_between(rows["n"], rows["lower"], rows["upper"], color=colour, alpha=0.15, linewidth=0)
    rows = ours[ours["model"] == model]
    ax.plot(rows["n"], rows["mean"], color=REPORTED, linewidth=2.2, label=f"{model} (this report)")
    ax.fill_between(rows["n"], rows["lower"], rows["upper"], color=REPORTED, alpha=0.2, linewidth=0)
    # the paper's one printed point, as the chapter draws it; its claims' cut-offs as dotted lines
    ax.scatter([100], [PAPER_GPT2_UNPROMPTED_AT_100], marker="x", color="black", zorder=3,
               label=f"GPT-2 in the paper: {PAPER_GPT2_UNPROMPTED_AT_100} at n = 100")
    for n, cut in ((100, 0.5), (1000, 0.9)):
        ax.plot([n, n], [0, cut], color="black", linestyle=":", linewidth=1)
        ax.plot([1, n], [cut, cut], color="black", linestyle=":", linewidth=1)
    ax.set(xscale="log", xlabel="generations (n)", ylabel="expected maximum toxicity", ylim=(0, 1),
           title="Unprompted toxicity (RealToxicityPrompts Fig. 2)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    top = rows["mean"].max() if len(rows) else float("nan")
    return fig, (f"Line chart of expected maximum toxicity against the number of unprompted generations for {model} "
                 f"(red, reaching {top:.2f}) and the bundled models (grey), with GPT-2's printed value at 100 "
                 "generations and the paper's claims (0.5 within 100, 0.9 within 1,000) as dotted lines.")


def table2_bars(book: Path, report: Path, model: str):
    """Expected maximum toxicity on toxic and non-toxic prompts: the reader's model, the bundled ones, the paper's
    GPT-2 (the authors' released generations)."""
    found = _both(book, report, "rtp_prompted", "table2", model)
    if found is None:
        return None
    theirs, ours = found
    ours = ours[ours["model"] == model]
    k = int(ours["k"].max())  # the table holds each k the chapter reports (25, and HELM's 5): the report's own
    theirs = theirs[theirs["k"] == (k if k in set(theirs["k"]) else theirs["k"].max())]
    table = pd.concat([theirs, ours[ours["k"] == k]], ignore_index=True)
    paper = theirs.groupby("prompt_class", sort=False)["exp_max_toxicity_authors"].first()
    names = list(dict.fromkeys(table["model"])) + ["paper: GPT-2"]
    classes = list(paper.index)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = (paper.reindex(classes) if name == "paper: GPT-2" else
                  table[table["model"] == name].set_index("prompt_class")["exp_max_toxicity"].reindex(classes))
        colour = REPORTED if name == model else ("black" if name.startswith("paper") else BUNDLED_COLOURS[i % 3])
        ax.bar([c + i * width for c in range(len(classes))], values, width, color=colour, label=name)
    ax.set_xticks([c + 0.4 - width / 2 for c in range(len(classes))], classes)
    ax.set(ylabel=f"expected maximum toxicity over {k}", ylim=(0, 1),
           title="Prompted toxicity (RealToxicityPrompts Table 2)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    mine = ours[ours["k"] == k].set_index("prompt_class")["exp_max_toxicity"]
    said = ", ".join(f"{c} {v:.2f}" for c, v in mine.items())
    return fig, (f"Bar chart of expected maximum toxicity per prompt class: {model} ({said}) in red beside the "
                 "bundled models and the paper's GPT-2.")


def safety_by_demographic(book: Path, report: Path, model: str):
    """The safety score per demographic: one dot per model, the paper's GPT-2-xl as a black cross."""
    found = _both(book, report, "safety_score", "table8_long", model)
    if found is None:
        return None
    theirs, ours = found
    paper_path = Path(book) / "safety_score" / "table8.csv"
    paper = pd.read_csv(paper_path).set_index("model") if paper_path.exists() else pd.DataFrame()
    demographics = sorted(set(theirs["demographic"]))
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    y = {d: i for i, d in enumerate(demographics)}
    for colour, (name, rows) in zip(BUNDLED_COLOURS, theirs.groupby("model", sort=True)):
        ax.scatter(rows["safety_score"], rows["demographic"].map(y), color=colour, s=18, label=f"{name} (book)")
    rows = ours[ours["model"] == model]
    ax.scatter(rows["safety_score"], rows["demographic"].map(y), color=REPORTED, s=30, label=f"{model} (this report)")
    printed = [i for i in paper.index if str(i).startswith("paper")]
    if printed:
        values = paper.loc[printed[0]]
        ax.scatter([values.get(d) for d in demographics], range(len(demographics)), marker="x", color="black",
                   label=str(printed[0]))
    ax.set_yticks(range(len(demographics)), demographics, fontsize=8)
    ax.set(xlabel="safety score (higher: safer)", xlim=(0, 1), title="Safety score per demographic (ToxiGen)")
    ax.axvline(0.5, color="#cccccc", linewidth=1)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    low = rows.nsmallest(1, "safety_score")
    least = (f"; lowest for {low['demographic'].iloc[0]} ({low['safety_score'].iloc[0]:.2f})" if len(low) else "")
    return fig, (f"Dot chart of the safety score per demographic for {model} (red){least}, beside the bundled models "
                 "(grey) and the paper's GPT-2-xl (black crosses).")


def declared_figures() -> dict:
    """{name: drawing function} of every model chapter's declared report figures (``ReportNeeds.figures``), in the
    chapters' order."""
    found = {}
    for stem in model_chapters():
        for name, where in chapter(stem).report.figures.items():
            found[name] = pkgutil.resolve_name(where)
    return found


def draw_figures(book: Path, report: Path, model: str, out: Path) -> list[dict]:
    """Every declared figure (``declared_figures``) both runs have data for, saved as ``out/<name>.png``:
    [{"file", "alt"}]."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    drawn = []
    for name, draw in declared_figures().items():
        made = draw(book, report, model)
        if made is None:
            continue
        fig, alt = made
        fig.savefig(out / f"{name}.png", dpi=110)
        plt.close(fig)
        drawn.append({"file": f"{out.name}/{name}.png", "alt": alt})
    return drawn


def shown_figures(report) -> list:
    """A finished report's figures (``card.Report``) as a notebook shows them: each PNG with what it shows as its
    alternative text and caption (``toxlib.publish.figures.FigureOutput``), in the report's order."""
    return [FigureOutput.from_png((Path(report.folder) / f["file"]).read_bytes(), f["alt"], f["alt"])
            for f in report.figures]
