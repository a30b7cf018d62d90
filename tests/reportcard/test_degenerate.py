"""The report card marks the SASS verdicts of a model that answers as a constant would (issue: verdicts a constant
answer cannot earn): the degenerate systems are read from the report's classifiers.csv as the chapter writes it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.papers import sass
from toxlib.reportcard.degenerate import degenerate_systems, mark_degenerate


def _classifiers(folder, answers: dict[str, np.ndarray]) -> None:
    labels = np.arange(100) % 3 == 0
    pred = pd.DataFrame({"human_label": labels.astype(float), **answers})
    lm_systems = pd.DataFrame([{"system": s, "model": s.split()[0], "setting": "few", "reading": "next-token",
                                "answer_mass": 0.9, "score_sd": 0.2} for s in answers])
    table = sass.classifier_table(pred, {s: s for s in answers}, lm_systems)
    (folder / "sass").mkdir(parents=True)
    table.to_csv(folder / "sass" / "classifiers.csv", index=False)


def test_a_constant_model_is_found_and_only_its_sass_rows_are_marked(tmp_path):
    rng = np.random.default_rng(0)
    _classifiers(tmp_path, {"flat FEW (next-token)": np.ones(100),
                            "lively FEW (next-token)": rng.integers(0, 2, 100).astype(float)})
    assert degenerate_systems(tmp_path, "flat") == {"flat FEW (next-token)": 1.0}
    assert degenerate_systems(tmp_path, "lively") == {}
    assert degenerate_systems(tmp_path / "elsewhere", "flat") == {}  # the chapter did not run
    rows = [{"chapter": "sass", "note": "F1 difference"}, {"chapter": "rtp_prompted", "note": "n"}]
    marked = mark_degenerate(rows, degenerate_systems(tmp_path, "flat"))
    assert [r["degenerate"] for r in marked] == [True, False]
    assert marked[0]["note"].startswith("the model answers as a constant would (flat FEW (next-token): 100% one")
    assert marked[1]["note"] == "n"
    assert not any(r["degenerate"] for r in mark_degenerate(rows, {}))
