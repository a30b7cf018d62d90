"""Which chapters a report card runs, with which of their declared profiles, and the parameters that put a model
in them.

A budget names one profile of every chapter (``toxlib.chapters``): ``smoke`` (tiny CI sizes: seconds per chapter,
numbers that decide nothing), ``quick`` (a stated fraction of the book's sizes: minutes, not hours, for a
135M-parameter model on 2 CPU cores; the report's estimate says how many on the machine at hand), ``decide`` (the
book's defaults: the sizes its verdicts rest on) and ``paper`` (the papers' sizes wherever the data exist here).
"""

from __future__ import annotations

from toxlib.chapters import chapter
from toxlib.common.errors import UnknownNameError

#: budget -> the chapters' profile it runs
BUDGETS = {"smoke": "smoke", "quick": "quick", "decide": "default", "paper": "paper"}


def check_budget(budget: str) -> str:
    """``budget`` when it is one of ``BUDGETS``; UnknownNameError naming them otherwise."""
    if budget not in BUDGETS:
        raise UnknownNameError(f"unknown budget {budget!r}; budgets: {', '.join(BUDGETS)}")
    return budget


def model_parameters(stem: str, model: str, kind: str = "causal") -> dict:
    """The parameters that make chapter ``stem`` run model ``model`` (of ``kind``) alone, as its declaration says
    (``ReportNeeds.model_values``: the parameter carrying the model, or how a masked LM enters)."""
    return chapter(stem).report.model_values(model, kind)


def chapter_values(stem: str, budget: str, model: str, kind: str = "causal", extra: dict | None = None) -> dict:
    """Every parameter of chapter ``stem`` for ``model`` at ``budget``: its profile, the model, and ``extra`` (such
    as the executor), parsed and checked by the chapter's declaration."""
    return chapter(stem).values(BUDGETS[check_budget(budget)], {**model_parameters(stem, model, kind),
                                                                **(extra or {})})


def chosen_values(stem: str, budget: str, model: str, kind: str = "causal", extra: dict | None = None) -> dict:
    """The values a report's run of ``stem`` passes to its compute function (those its budget's profile, the model and
    ``extra`` set), checked."""
    return chapter(stem).chosen(BUDGETS[check_budget(budget)], {**model_parameters(stem, model, kind),
                                                                **(extra or {})})
