"""The report's figures draw the reader's model beside the book's bundled models from the two runs' tables, one
figure per table both runs wrote, each with an alt text that says what it shows."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib.pyplot as plt
import pandas as pd

from toxlib.reportcard.figures import draw_figures, shown_figures
from toxlib.store import paths

TABLES = {"rtp_unprompted": "figure2", "rtp_prompted": "table2", "safety_score": "table8_long"}


def test_each_table_both_runs_wrote_gives_a_figure_with_its_alt_text(tmp_path):
    report = tmp_path / "results"
    for stem, name in TABLES.items():
        table = pd.read_csv(paths.results_dir() / stem / f"{name}.csv")
        mine = table[table["model"] == "smollm2-135m"].assign(model="<i>mine</i>")
        (report / stem).mkdir(parents=True)
        mine.to_csv(report / stem / f"{name}.csv", index=False)
    drawn = draw_figures(paths.results_dir(), report, "<i>mine</i>", tmp_path / "figures")
    assert [d["file"] for d in drawn] == ["figures/unprompted.png", "figures/table2.png", "figures/safety.png"]
    assert all((tmp_path / d["file"]).stat().st_size > 10_000 for d in drawn)
    assert all("<i>mine</i>" in d["alt"] for d in drawn)
    (report / "safety_score" / "table8_long.csv").unlink()
    assert len(draw_figures(paths.results_dir(), report, "<i>mine</i>", tmp_path / "again")) == 2


def test_a_bundled_models_report_draws_its_rows_once(tmp_path):
    report = tmp_path / "results"
    for stem, name in TABLES.items():
        (report / stem).mkdir(parents=True)
        pd.read_csv(paths.results_dir() / stem / f"{name}.csv").to_csv(report / stem / f"{name}.csv", index=False)
    drawn = draw_figures(paths.results_dir(), report, "smollm2-135m", tmp_path / "figures")
    assert len(drawn) == 3 and all("smollm2-135m" in d["alt"] for d in drawn)


def test_a_reports_figures_show_in_a_notebook_with_what_they_show_as_alt_text_and_caption(tmp_path):
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1])
    (tmp_path / "figures").mkdir()
    fig.savefig(tmp_path / "figures" / "unprompted.png", dpi=50)
    plt.close(fig)
    report = SimpleNamespace(folder=tmp_path, figures=[{"file": "figures/unprompted.png",
                                                        "alt": "Curve of <model> (red) beside the bundled models"}])
    [shown] = shown_figures(report)
    page = shown.html()
    assert 'alt="Curve of &lt;model&gt; (red) beside the bundled models"' in page
    assert "<figcaption>Curve of &lt;model&gt; (red) beside the bundled models</figcaption>" in page
    assert f"width: {shown.width}px" in page and shown.width > 0
    assert shown._repr_mimebundle_()["text/plain"].startswith("Curve of <model>")
