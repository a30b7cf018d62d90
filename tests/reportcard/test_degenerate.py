"""The report card marks the SASS verdicts that rest on a system answering as a constant would (issue: verdicts a
constant answer cannot earn): the sass claims name such systems in their note, from the classifiers table's
``degenerate`` column, and the report marks exactly those rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from toxlib.papers import sass
from toxlib.papers.sass.paper_claims import DEGENERATE_MARK, degenerate_note
from toxlib.reportcard.degenerate import mark_degenerate


def _classifiers(answers: dict[str, np.ndarray]) -> pd.DataFrame:
    labels = np.arange(100) % 3 == 0
    pred = pd.DataFrame({"human_label": labels.astype(float), **answers})
    lm_systems = pd.DataFrame([{"system": s, "model": s.split()[0], "setting": "few", "reading": "next-token",
                                "answer_mass": 0.9, "score_sd": 0.2} for s in answers])
    return sass.classifier_table(pred, {s: s for s in answers}, lm_systems)


def test_a_claim_resting_on_a_constant_system_says_so_and_the_report_marks_only_it():
    rng = np.random.default_rng(0)
    table = _classifiers({"flat FEW (next-token)": np.ones(100),
                          "lively FEW (next-token)": rng.integers(0, 2, 100).astype(float)})
    note = degenerate_note(table, ["flat FEW (next-token)", "lively FEW (next-token)"])
    assert note == f"; {DEGENERATE_MARK}: flat FEW (next-token) (100% one answer)"
    assert degenerate_note(table, ["lively FEW (next-token)"]) == ""
    assert degenerate_note(table.drop(columns="degenerate"), ["flat FEW (next-token)"]) == ""
    rows = [{"chapter": "sass", "note": "F1 difference" + note}, {"chapter": "sass", "note": "F1 difference"},
            {"chapter": "rtp_prompted", "note": "n"}]
    assert [r["degenerate"] for r in mark_degenerate(rows)] == [True, False, False]
