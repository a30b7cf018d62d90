"""The "Your model" page (``book/your_model.ipynb``) computed: ``compute(values, models)`` returns its
``ChapterResult``.

A report card of the page's model at the page's budget, made as ``python -m toxlib report`` makes one (in this
process, the model loaded once): its estimate, what each budget costs (the committed benchmark run's rates unless
``measure``), the report's claims beside the paper's and the bundled models' values, its figures, and the scorer's
domain check of the bundled models. The report's folder is under the user's cache (``reports/book-<model>-<budget>``):
a rebuild reuses its finished chapters. ``values``: every parameter of ``toxlib/chapters/your_model.py``, checked;
``models``: a ``toxlib.models.source.Models`` (unused: the report makes its own, on its device).
"""

from __future__ import annotations

from toxlib.models import BUNDLED
from toxlib.models.source import Models
from toxlib.publish.chapter_result import ChapterResult
from toxlib.reportcard.captions import CAPTIONS
from toxlib.reportcard.card import estimate_text, plan_report, run_report
from toxlib.reportcard.domain import DOMAIN_HEADERS, domain_table
from toxlib.reportcard.figures import shown_figures
from toxlib.reportcard.page import flat_table
from toxlib.reportcard.page_rates import budget_headers, page_budgets, page_rates
from toxlib.store import paths

REPORT_SHOWN = ["paper", "claim", "paper_value", "bundled", "value", "verdict", "n"]


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("your_model", v)
    caption = CAPTIONS.bind(**v)
    model, budget, chapters = v["model"], v["budget"], v["chapters"] or None
    rates = page_rates(model, budget, chapters, v["measure"])  # a committed run's, unless measure=True
    planned = plan_report(model, budget, chapters=chapters, rates=rates)
    out.add_text("estimate", estimate_text(planned))
    budgets = page_budgets(model, rates, chapters, v["measure"])
    out.add_table("budgets", budgets, caption("budgets"), headers=budget_headers(budgets))
    report = run_report(planned, paths.cache_dir() / "reports" / f"book-{model}-{budget}", progress=False)
    out.add_text("report_runs", f"{len(report.rows)} claims about {model}; chapters: "
                                + ", ".join(f"{r.stem} ({r.status})" for r in report.runs))
    out.add_table("report", flat_table(report.rows), caption("report"), columns=REPORT_SHOWN,
                  headers={"paper_value": "paper's value", "bundled": "bundled models", "value": model})
    out.add_display("report_figures", lambda: shown_figures(report), many=True)
    out.add_table("domains", domain_table(list(BUNDLED)), caption("domains"), digits=2, headers=DOMAIN_HEADERS)
    return out
