"""A chapter that declares what a report needs of it is in every report, with nothing else to edit: the report card
iterates over the declarations (issue 63, item 2). A toy chapter is declared here and seen in the plan, the
estimate, the applicability and the rows."""

from __future__ import annotations

import pandas as pd
import pytest

import toxlib.chapters
from toxlib.chapters import chapter, model_chapters, scored_chapters
from toxlib.chapters.report_needs import ChapterWork, Fit, ReportNeeds
from toxlib.chapters.spec import COUNT, MODELS, Chapter, Parameter
from toxlib.models.tiny import tiny_causal_lm
from toxlib.reportcard import card
from toxlib.reportcard.rows import report_rows


def _toy_fit(facts) -> Fit:
    return Fit(True, "the toy asks for two greedy tokens", {"n": 2}) if facts.kind == "causal" else Fit(False, "no")


TOY = Chapter("toy", "A toy chapter", "Parameters (papermill).",
              (Parameter("models", ["smollm2-135m"], MODELS, "the models"), Parameter("n", 10, COUNT, "tokens")),
              {"smoke": {"n": 3}},
              report=ReportNeeds(paper="The toy paper", model_parameter="models", scored=True,
                                 work=lambda v: ChapterWork(gen_tokens=1000.0 * v["n"]), applies=_toy_fit))


class _ToyPoint:
    """The toy chapter as an installed package would declare it (an entry point of ``toxlib.chapters``)."""

    name, value = "toy", "toy_package:CHAPTER"

    def load(self):
        return TOY


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(toxlib.chapters, "entry_points",
                        lambda group: [_ToyPoint()] if group == toxlib.chapters.ENTRY_POINTS else [])
    toxlib.chapters.forget()
    monkeypatch.setattr(card, "overhead_seconds", lambda notebook: 0.0)
    monkeypatch.setattr(card, "chapter_notebook", lambda root, stem: root / "notebooks" / f"{stem}.ipynb")
    yield TOY
    toxlib.chapters.forget()


def test_a_declared_chapter_is_planned_estimated_and_reported(toy, tmp_path):
    assert model_chapters()[-1] == "toy" and "toy" in scored_chapters() and chapter("toy") is toy
    model = tiny_causal_lm(tmp_path / "tiny")
    planned = card.plan_report(str(model), "smoke", calibrate=False)
    plan = {p.stem: p for p in planned.chapters}["toy"]
    assert plan.applies and plan.values == {"models": [str(model)], "n": 2}  # the fit's change over the profile's
    assert plan.estimates["cpu"] > 0 and "toy" in card.estimate_text(planned)
    claims = pd.DataFrame([{"claim": f"Toy claim ({model})", "id": f"toy_rule:model:{model}",
                            "subject": f"model:{model}", "kind": "our models", "paper_value": "1",
                            "our_value": 0.5, "shown": "0.5", "ci_low": 0.4, "ci_high": 0.6, "n": 10,
                            "verdict": "holds", "note": "", "n_to_decide": None, "threshold": "0.3"}])
    rows = report_rows("toy", claims, str(model), None, ["smollm2-135m"], outside_domain=True)
    assert [(r["paper"], r["verdict"], r["outside_domain"]) for r in rows] == [("The toy paper", "holds", True)]


def test_a_report_folder_charges_nothing_for_a_finished_chapter_and_less_for_cached_rows(toy, tmp_path, monkeypatch):
    import json

    from toxlib.common.provenance import library_commit
    from toxlib.reportcard.cached import rows_log
    from toxlib.store.cache import GenerationStore

    model, folder = tiny_causal_lm(tmp_path / "tiny"), tmp_path / "report"
    identity = card.model_identity(str(model))
    first = card.plan_report(str(model), "smoke", calibrate=False, folder=folder)
    plan, rates = {p.stem: p for p in first.chapters}["toy"], first.rates  # the rates measured once: a fixed scale
    full = plan.estimates["cpu"]
    assert full > 0 and plan.cached_rows == 0 and not plan.reused
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path / "cache"))
    log = rows_log("toy", identity, plan.values, "cpu")
    log.parent.mkdir(parents=True)
    monkeypatch.setenv("TOXLIB_ROWS_LOG", str(log))
    with GenerationStore() as store:  # an earlier run (in any report folder) computed half the toy's 2,000 tokens
        store.register_run("toy run", {"decoding": {"max_new_tokens": 1000}})
        store.add("toy run", [("a prompt", 0, "text", 1000, False)])
    planned = card.plan_report(str(model), "smoke", rates=rates, folder=folder)
    plan = {p.stem: p for p in planned.chapters}["toy"]
    assert plan.cached_rows == 1 and plan.estimates["cpu"] == pytest.approx(full / 2)
    assert "1 rows an earlier run of it computed read from your cache" in card.estimate_text(planned)
    (folder / "chapters").mkdir(parents=True)
    (folder / "chapters" / "toy.ipynb").write_text("{}")
    (folder / "results" / "toy").mkdir(parents=True)
    (folder / "results" / "toy" / "claims.csv").write_text("claim\n")
    (folder / "runs.json").write_text(json.dumps({"toy": {"status": "ran", "values": plan.values, "model": identity,
                                                          "commit": library_commit(), "device": "cpu"}}))
    planned = card.plan_report(str(model), "smoke", rates=rates, folder=folder)
    plan = {p.stem: p for p in planned.chapters}["toy"]
    assert plan.reused and plan.estimates["cpu"] == 0
    assert "done before: its finished run in the report folder is reused" in card.estimate_text(planned)
