"""A report card for one model: plan it (what applies, at what cost on this machine), run it, and write it.

    names = {"mine": "/path/to/folder"}                     # the model's short name (each chapter's model_names)
    planned = plan_report("mine", "quick", names)            # facts, chapters, estimates per device
    print(estimate_text(planned))
    report = run_report(planned, "reports/mine")             # runs the chapters (resumable) and writes the page

``plan_report`` reads the model's config and tokenizer (``model_facts``), decides which chapters apply
(``applicability``), counts each chapter's work at the budget (``work``) and times the model on this machine
(``estimate``), on the CPU and on a GPU when one is present. ``run_report`` computes the chapters in this process
(``runs``), checks the scorer's domain on the model's continuations (``domain``), gathers its claims beside the
book's (``rows``), draws the figures and writes ``index.html``, ``report.csv`` and ``report.json`` (``page``).
The plan holds the report's ``Models`` (``toxlib.models.source``): the model its facts were read from is the one
its rates are timed on, every chapter computes with and the domain check reads, so its weights load once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch

from toxlib.book_build.chapter_cells import chapter_notebook
from toxlib.book_build.machine import library_versions, machine_description
from toxlib.chapters import model_chapters, scored_chapters
from toxlib.common.errors import ToxlibError
from toxlib.common.provenance import library_commit
from toxlib.models import BUNDLED, load
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.names import checked_names
from toxlib.models.source import Models
from toxlib.models.weights_id import folder_weights_id
from toxlib.reportcard.budgets import BUDGETS, chapter_values, chosen_values
from toxlib.reportcard.cached import cached_work, left_after, rows_log
from toxlib.reportcard.degenerate import mark_degenerate
from toxlib.reportcard.domain import DomainCheck, domain_check
from toxlib.reportcard.estimate import (
    Rates,
    as_dict,
    estimate_seconds,
    flops_rates,
    measure_rates,
    overhead_seconds,
    untimed_rates,
)
from toxlib.reportcard.figures import draw_figures
from toxlib.reportcard.held import record_share
from toxlib.reportcard.model_facts import ModelFacts, applicability, model_facts
from toxlib.reportcard.page import write_report
from toxlib.reportcard.rows import book_models, read_chapter_claims, report_rows
from toxlib.reportcard.runs import (
    ChapterPlan,
    ChapterRun,
    check_same_model,
    done_before,
    read_log,
    run_as_dict,
    run_chapters,
)
from toxlib.reportcard.timed_rates import keep_rates, timed_before
from toxlib.reportcard.work import chapter_work
from toxlib.store import paths
from toxlib.store.record_reader import open_record

#: what each budget means, for the page and the estimate
BUDGET_NOTES = {"smoke": "each chapter's tiny CI sizes: the numbers decide nothing",
                "quick": "a fraction of the book's sizes: minutes, not hours, for a 135M model on 2 CPU cores",
                "decide": "the book's own sizes, on which its verdicts rest",
                "paper": "the papers' sizes wherever the data exist here"}
#: a masked LM's pseudo-perplexity runs a sentence once per token: its reading costs this many times more
MASKED_READ_FACTOR = 22


@dataclass
class ReportPlan:
    """What a report will do: the model's ``facts``, the ``budget``, a ``ChapterPlan`` per chapter, the ``rates``
    measured per device ("cpu", "cuda"), the short-name map the chapters get (``names``), and where the
    chapters run (``device``: the key of ``rates`` that applies; ``executor``), and the ``models`` they compute with
    (the model loaded once, on ``device``)."""

    facts: ModelFacts
    budget: str
    chapters: list[ChapterPlan]
    rates: dict[str, Rates]
    names: dict[str, str]
    device: str
    executor: str | None = None
    models: Models | None = None


@dataclass
class Report:
    """A finished report: its folder and page, its rows, the chapter runs, the domain check, the wall time and its
    figures ([{"file": path relative to ``folder``, "alt": what it shows}], ``reportcard.figures.draw_figures``)."""

    folder: Path
    page: Path
    rows: list[dict]
    runs: list[ChapterRun]
    domain: DomainCheck | None
    wall_s: float
    notes: list[str] = field(default_factory=list)
    figures: list[dict] = field(default_factory=list)


def _devices(device: str | None) -> tuple[str, list[str]]:
    """(the device the chapters run on, every device to estimate): the GPU is estimated too when one is present."""
    chosen = "cuda" if (device or ("cuda" if torch.cuda.is_available() else "cpu")).startswith("cuda") else "cpu"
    return chosen, ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


def plan_report(name: str, budget: str, names: dict[str, str] | None = None, device: str | None = None,
                executor: str | None = None, chapters: list[str] | None = None, calibrate: bool | None = None,
                rates: dict[str, Rates] | None = None, folder: str | Path | None = None) -> ReportPlan:
    """Plan a report of model ``name`` (a bundled name, or a short name of ``names``: {name: folder or hub id})
    at ``budget`` (``BUDGETS``) on ``device`` ("cpu", "cuda"; None: the GPU when present), with ``executor`` ("local"
    or "ray") and only ``chapters`` (default: every model chapter, ``toxlib.chapters.model_chapters``; a bundled
    model at ``decide`` then leaves out the chapters the book does not run for it, which it would compute in full
    while the sample record gives it every other row).
    ``calibrate``: True times the model here, False takes rates from its parameter count, None (the default) times
    it only when some of the work is left after the sample record's rows (else ``untimed_rates``: nothing to
    charge), and reuses the rates an earlier report timed for the same model on this machine
    (``toxlib.reportcard.timed_rates``); ``rates``: rates measured before ({device: Rates}), used instead.
    ``folder``: the report folder the run will write; given, its finished chapters are reused, and the rows an
    earlier report run of a chapter (the same model, values and device, in any folder) asked for that the user's
    cache holds are not charged (``_held_before``). Raises ModelUnavailableError for a model that cannot be read."""
    names = checked_names(names)
    chosen, devices = _devices(device)
    models = Models(names=names, device=chosen)
    facts = model_facts(name, chosen, names=names, loader=models)
    fits = applicability(facts)
    extra = ({"executor": executor} if executor else {}) | ({"model_names": names} if names else {})
    plans = []
    for stem in chapters or model_chapters():
        verdict = fits[stem]
        if not verdict.applies:
            plans.append(ChapterPlan(stem, False, verdict.why))
            continue
        if (chapters is None and budget == "decide" and name in BUNDLED and name not in book_models(stem)
                and open_record() is not None):
            plans.append(ChapterPlan(stem, False, _not_in_book(stem, name), left_out=True))
            continue
        values = chapter_values(stem, budget, name, facts.kind, {**dict(verdict.changes), **extra})
        chosen_values_ = chosen_values(stem, budget, name, facts.kind, {**dict(verdict.changes), **extra})
        share = record_share(stem, name, values)
        plan = ChapterPlan(stem, True, verdict.why, chosen_values_, {"work": chapter_work(stem, values).scaled(
            1.0 - share)}, share)
        if folder is not None:
            _held_before(plan, Path(folder), model_identity(facts.target), chosen)
        plans.append(plan)
    rates = dict(rates or {})
    left = any(p.estimates["work"].total() > 0 for p in plans if p.applies)
    for dev in [d for d in devices if d not in rates]:
        if calibrate is None and not left:
            rates[dev] = untimed_rates(dev)
            continue
        fits_here = facts.needed_gb <= (facts.free_gb if dev == chosen else float("inf"))
        rates[dev] = _device_rates(name, dev, facts, names, calibrate is not False and fits_here,
                                   reuse=calibrate is None, models=models if dev == chosen else None)
    for plan in plans:
        if not plan.applies:
            continue
        work = plan.estimates.pop("work")
        if facts.kind == "masked":
            work.read_tokens *= MASKED_READ_FACTOR
        overhead = overhead_seconds(chapter_notebook(paths.companion_root(), plan.stem))
        plan.estimates.update({dev: estimate_seconds(work, r, overhead) for dev, r in rates.items()})
    return ReportPlan(facts, budget, plans, rates, names, chosen, executor, models)


def _held_before(plan: ChapterPlan, folder: Path, identity: str, device: str) -> None:
    """Charge ``plan`` nothing when ``folder`` holds its finished run of model ``identity`` on ``device``
    (``runs.done_before``: reused), else less the rows its earlier report runs asked for that the user's cache holds
    (``cached.cached_work``)."""
    if done_before(read_log(folder), plan.stem, plan.values, folder, identity, device):
        plan.reused, plan.estimates["work"] = True, plan.estimates["work"].scaled(0.0)
        return
    held, plan.cached_rows = cached_work(rows_log(plan.stem, identity, plan.values, device))
    plan.estimates["work"] = left_after(plan.estimates["work"], held)


def _not_in_book(stem: str, name: str) -> str:
    """Why a bundled model's report at ``decide`` leaves chapter ``stem`` out: the book does not run it for ``name``,
    so the sample record holds none of its rows and the report would compute them all."""
    ran = " and ".join(book_models(stem))
    return (f"the book runs this chapter for {ran} only, so none of {name}'s rows are in the sample record; name it "
            f"with --chapters {stem} to compute them (--dry-run first: the estimate)")


def _device_rates(name: str, device: str, facts: ModelFacts, names: dict[str, str], calibrate: bool,
                  reuse: bool = False, models: Models | None = None) -> Rates:
    """The model's rates on ``device``: timed here when ``calibrate`` (``measure_rates``, on the model ``models``
    gives, or one loaded on ``device``; with ``reuse``, as an
    earlier report timed them here when it did: ``timed_rates``), else, and for a masked LM
    (which generates nothing to time) or a model whose timing fails (a tokenizer without BOS, EOS or pad token),
    from its parameter count (``flops_rates``), with the reason in ``how``."""
    if not calibrate:
        return flops_rates(facts.arch, device)
    if facts.kind == "masked":
        rates = flops_rates(facts.arch, device)
        return dataclasses.replace(rates, how=f"{rates.how}; a masked LM generates nothing to time")
    identity = model_identity(facts.target)
    kept = timed_before(identity, device) if reuse else None
    if kept is not None:
        return kept
    try:
        lm = (models(name, dtype="float32", kind=facts.kind) if models is not None
              else load(name, device=device, dtype="float32", kind=facts.kind, names=names))
        rates = measure_rates(lm)
        keep_rates(identity, device, rates)
        return rates
    except (ToxlibError, TypeError, ValueError, RuntimeError) as exc:  # said in the estimate, never fatal
        rates = flops_rates(facts.arch, device)
        reason = str(exc).splitlines()[0][:160] if str(exc) else ""
        return dataclasses.replace(rates, how=f"{rates.how}; timing it here failed ({type(exc).__name__}: {reason})")


def model_identity(target: str) -> str:
    """What tells one model from another under the same short name: a bundled name or hub id as it is, a local
    folder by its resolved path and the digest of its weight files (``folder_weights_id``)."""
    folder = Path(target).expanduser()
    if target in BUNDLED or not folder.is_dir():
        return target
    return f"{folder.resolve()}@{folder_weights_id(folder)}"


def estimate_text(planned: ReportPlan) -> str:
    """The estimate as the command prints it before running: per chapter, the seconds on each device, or why the
    chapter does not apply."""
    f = planned.facts
    lines = [f"{f.name}: {f.kind} LM, {_millions(f.params)} parameters ({f.arch.get('model_type')}), "
             f"budget {planned.budget} ({BUDGET_NOTES[planned.budget]})"]
    for dev, r in planned.rates.items():
        lines.append(f"  rates on {dev}: {r.how}" if math.isnan(r.gen) else
                     f"  rates on {dev} ({r.how}): {r.gen:,.0f} tokens/s generated, {r.read:,.0f} read, "
                     f"{r.texts:,.0f} texts/s scored")
    width = max(len(p.stem) for p in planned.chapters)
    for plan in planned.chapters:
        if not plan.applies:
            lines.append(f"  {plan.stem:<{width}}  {'left out' if plan.left_out else 'not applicable'}: {plan.why}")
            continue
        if plan.reused:
            lines.append(f"  {plan.stem:<{width}}  done before: its finished run in the report folder is reused")
            continue
        times = ", ".join(f"{_minutes(s)} on {dev}" for dev, s in plan.estimates.items())
        held = f"; {plan.record_share:.0%} of its work read from the sample record" if plan.record_share else ""
        if plan.cached_rows:
            held += f"; {plan.cached_rows:,} rows an earlier run of it computed read from your cache"
        lines.append(f"  {plan.stem:<{width}}  {times}{held}" + (f" ({plan.why})" if plan.why else ""))
    for dev in planned.rates:
        total = sum(p.estimates.get(dev, 0.0) for p in planned.chapters if p.applies)
        lines.append(f"  total on {dev}: {_minutes(total)} (rows the sample record holds, and rows your cache holds "
                     "from an earlier report run of the same chapter and model, are not charged)")
    return "\n".join(lines)


def _millions(params: int) -> str:
    """A parameter count as "135M" (one decimal below 10M: "0.1M")."""
    return f"{params / 1e6:,.0f}M" if params >= 1e7 else f"{params / 1e6:.1f}M"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def run_report(planned: ReportPlan, folder: str | Path, progress: bool = True, fresh: bool = False) -> Report:
    """Run ``planned``'s chapters into ``folder`` (resuming what an earlier run of the same model there finished;
    refusing a folder of another model under the same name unless ``fresh``, which replaces it:
    ``runs.check_same_model``), check the scorer's domain, and write the page, the CSV and the JSON; returns the
    ``Report``."""
    started = time.perf_counter()
    folder = Path(folder)
    name = planned.facts.name
    check_same_model(folder, model_identity(planned.facts.target), fresh)
    models = planned.models or Models(names=planned.names, device=planned.device)
    runs = run_chapters(planned.chapters, folder, models, planned.device, progress=progress,
                        model=model_identity(planned.facts.target))
    ran = {r.stem for r in runs if r.status in ("ran", "done before")}
    domain, notes = None, []
    if ran & set(scored_chapters()):
        try:
            domain = domain_check(models(name, dtype="float32", kind=planned.facts.kind))
        except ToxlibError as exc:  # the check's data or reference model not reachable: said, not fatal
            notes.append(f"The scorer's domain was not checked: {exc}")
    book = paths.book_results_dir()
    rows = []
    for stem in model_chapters():
        if stem not in ran:
            continue
        claims = read_chapter_claims(folder / "results", stem)
        if claims is None:
            continue
        rows += report_rows(stem, claims, name, read_chapter_claims(book, stem), book_models(stem),
                            bool(domain and domain.outside))
    rows = mark_degenerate(rows)
    figures = draw_figures(book, folder / "results", name, folder / "figures")
    wall = time.perf_counter() - started
    context = _context(planned, runs, domain, figures, wall)
    if notes:
        context["domain"] = " ".join(notes)
    page = write_report(folder, context, rows)
    return Report(folder, page, rows, runs, domain, wall, notes, figures)


def _context(planned: ReportPlan, runs: list[ChapterRun], domain: DomainCheck | None, figures: list[dict],
             wall: float) -> dict:
    """The page's values besides its rows."""
    f = planned.facts
    by_stem = {p.stem: p for p in planned.chapters}
    chapters = [{**run_as_dict(r), "note": r.error or by_stem[r.stem].why,
                 "estimate_error": (r.wall_s / r.estimate_s - 1) if r.status == "ran" and r.estimate_s else None}
                for r in runs]
    target = "bundled with toxlib" if f.name in BUNDLED else f.target
    timing = "; ".join(f"{c['stem']} {c['wall_s']:.0f} s against {c['estimate_s']:.0f} s estimated"
                       for c in chapters if c["status"] == "ran" and c["estimate_s"])
    record = (f"Budget {planned.budget}; model {f.name} ({target}); device {planned.device}; executor "
              f"{planned.executor or 'local'}; chapters' parameters in runs.json beside this page. toxlib commit "
              f"{library_commit()} on {machine_description()} ({describe_cpu()}) with {library_versions()}; "
              f"finished {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M UTC} in {wall:.0f} s."
              + (f" Estimates against wall time: {timing}." if timing else ""))
    return {"name": f.name, "target_note": f"{f.kind} LM, {_millions(f.params)} parameters, {target}",
            "budget": planned.budget, "budget_note": BUDGET_NOTES[planned.budget],
            "when": f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d}", "domain": domain.sentence(f.name) if domain else "",
            "domain_outside": bool(domain and domain.outside), "figures": figures, "chapters": chapters,
            "start_note": f.start_note, "rates_note": "; ".join(f"on {d}: {r.how}" for d, r in planned.rates.items()),
            "rates": {d: as_dict(r) for d, r in planned.rates.items()}, "run_record": record,
            "parameters": {p.stem: p.values for p in planned.chapters if p.applies},
            "budgets": BUDGETS}


def budget_table(name: str, rates: dict[str, Rates], chapters: list[str] | None = None) -> pd.DataFrame:
    """What each budget costs for model ``name`` at ``rates``: one row per budget with its meaning and the
    estimated minutes of each chapter and in all, per device."""
    rows = []
    for budget in BUDGETS:
        planned = plan_report(name, budget, chapters=chapters or list(model_chapters()), rates=rates)
        for dev in rates:
            row = {"budget": budget, "device": dev, "what it runs": BUDGET_NOTES[budget]}
            row.update({p.stem: round(p.estimates[dev] / 60, 1) for p in planned.chapters if p.applies})
            row["all chapters (min)"] = round(sum(p.estimates[dev] for p in planned.chapters if p.applies) / 60, 1)
            rows.append(row)
    return pd.DataFrame(rows)
