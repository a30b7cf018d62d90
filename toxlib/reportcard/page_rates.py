"""The Your model page's rates and budgets table: by default a committed benchmark run's for the page's model (so
a default build writes the same ``budgets.csv`` on every machine and times nothing), else timed on this machine;
with ``measure``, timed here and written as this machine's run (``toxlib.benchmarks.chapter_timings``).

In: the page's model, its chapters and ``measure``. Out: ``page_rates`` ({device: Rates}, ``how`` naming the run or
"timed here") and ``page_budgets`` (``card.budget_table``'s frame with ``machine`` and ``date``).
"""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from toxlib.benchmarks.chapter_timings import committed_rows, newest_run, this_machine, today, write_run
from toxlib.chapters import STEMS
from toxlib.publish.pages import chapter_title
from toxlib.reportcard.card import budget_table, model_identity, plan_report
from toxlib.reportcard.estimate import Rates

COMMAND = "python -m toxlib run book/your_model.ipynb -p measure True"


def _values(model: str, chapters: list[str] | None) -> dict:
    return {"model": model_identity(model), "chapters": chapters or "every model chapter"}


def _newest(rows: list[dict]) -> pd.DataFrame:
    return newest_run(pd.DataFrame(rows)).reset_index(drop=True)


def page_rates(model: str, budget: str, chapters: list[str] | None = None, measure: bool = False
               ) -> dict[str, Rates]:
    """The rates the page estimates with: the newest committed run's for ``model`` unless ``measure`` (or no run
    timed it), else timed here (``card.plan_report``), and with ``measure`` written as this machine's run."""
    values = _values(model, chapters)
    committed = [] if measure else committed_rows("your_model/rates", {"model": values["model"]})
    if committed:
        return {row["device"]: Rates(row["device"], row["gen"], row["read"], row["texts"],
                                     f"timed on {row['machine']} on {row['date']}, a committed benchmark run")
                for row in _newest(committed).to_dict("records")}
    rates = plan_report(model, budget, chapters=chapters, calibrate=True).rates  # the budgets table needs rates
    if measure:
        write_run("your_model/rates", {"model": values["model"]},
                  [{k: v for k, v in asdict(r).items() if k != "how"} for r in rates.values()], COMMAND)
    return rates


def page_budgets(model: str, rates: dict[str, Rates], chapters: list[str] | None = None, measure: bool = False
                 ) -> pd.DataFrame:
    """What each budget costs: the newest committed run's table for ``model`` and ``chapters`` unless ``measure``
    (or no run has one), else ``budget_table`` at ``rates`` (written as this machine's run with ``measure``).
    Columns: budget_table's, machine, date."""
    values = _values(model, chapters)
    committed = [] if measure else committed_rows("your_model/budgets", values)
    if committed:
        return _newest(committed)
    table = budget_table(model, rates, chapters)
    if measure:
        write_run("your_model/budgets", values, table.to_dict("records"), COMMAND)
    return table.assign(machine=this_machine(), date=today())


def budget_headers(table: pd.DataFrame) -> dict[str, str]:
    """The budgets table's headers for readers: each chapter column by the chapter's title up to its colon, in
    minutes ("Prompted toxicity (min)", "SASS (min)"), for ``toxlib.publish.results.publish(..., headers=...)``."""
    return {stem: f"{chapter_title(stem).split(':')[0]} (min)" for stem in table.columns if stem in STEMS}
