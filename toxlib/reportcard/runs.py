"""Running a report's chapters in this process: each chapter's compute function (``toxlib.chapters.compute``) called
with the model in place of the bundled ones and handed the report's one ``Models`` (the model loaded once for every
chapter), its tables and claims written under ``<report>/results/`` (never the book's ``data/results/``; no
figures: the report draws its own).

Resumable at two levels: a chapter whose run finished with the same parameters, library commit and model
(``runs.json``; the model by ``model_identity``: another model under the same short name runs every chapter afresh)
is not run again, and a chapter cut short re-runs with every row it had computed read back from the user's caches
(generation, score and NLL rows are stored as they are computed, and named in the chapter's rows log,
``toxlib.reportcard.cached``, so the next estimate charges only the rest). A chapter that fails is recorded with its
error (its exception's type and first line) and the next one runs; an interrupt (Ctrl-C) stops the report, and
the next run resumes it.

While a chapter computes, the caches it fills name its rows in its rows log and the record's usage names the
chapter (``TOXLIB_ROWS_LOG``, ``TOXLIB_RECORD_CHAPTER``: the store reads them where a row is served), its scorers
run on the report's device (``TOXLIB_DEVICE``; its model is on it already, as ``Models`` gives it), and its own
progress bars stay off the terminal (``toxlib.common.progress.hidden``): the report's bar stands for them.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from toxlib.chapters.compute import compute_chapter
from toxlib.common import settings
from toxlib.common.errors import ParameterError
from toxlib.common.progress import hidden, tqdm
from toxlib.common.provenance import library_commit
from toxlib.models.source import Models
from toxlib.reportcard.cached import rows_log
from toxlib.store import paths
from toxlib.store.record_usage import served_counts


@dataclass
class ChapterPlan:
    """One chapter of a report: whether it ``applies`` (and ``why``), the ``values`` its compute function gets,
    its estimated seconds per device (``estimates``) and the share of its work whose rows the sample record holds
    (``record_share``, ``toxlib.reportcard.held``: not charged). ``left_out``: the chapter could run but is not
    run unless named (a bundled model's chapter the book does not run for it: ``why`` says so). ``cached_rows``:
    rows an earlier report run of it asked for that the user's cache holds (``toxlib.reportcard.cached``: not
    charged); ``reused``: the folder's finished run of it is reused (nothing charged)."""

    stem: str
    applies: bool
    why: str = ""
    values: dict = field(default_factory=dict)
    estimates: dict = field(default_factory=dict)
    record_share: float = 0.0
    left_out: bool = False
    cached_rows: int = 0
    reused: bool = False


@dataclass
class ChapterRun:
    """How a chapter of a report went: ``status`` "ran", "done before" (resumed), "not applicable", "left out"
    (``ChapterPlan.left_out``) or "failed";
    ``wall_s`` the seconds it took (``None`` unless it ran), ``error`` why it failed, ``rows`` where its generation,
    score and NLL rows came from ({"record": n, "cache": n, "computed": n}; empty unless it ran)."""

    stem: str
    status: str
    wall_s: float | None = None
    estimate_s: float | None = None
    error: str = ""
    finished: str = ""
    rows: dict = field(default_factory=dict)


def done_before(log: dict, stem: str, values: dict, folder: Path, model: str, device: str | None = None) -> bool:
    """Whether ``runs.json``'s ``log`` has chapter ``stem`` finished in ``folder`` with these ``values``, ``model``
    (its ``model_identity``), device and this library commit, its claims still there."""
    entry = log.get(stem, {})
    return (entry.get("status") == "ran" and entry.get("values") == values and entry.get("commit") == library_commit()
            and entry.get("model") == model and (device is None or entry.get("device") == device)
            and (Path(folder) / "results" / stem / "claims.csv").exists())


def check_same_model(folder: Path, model: str, fresh: bool = False) -> None:
    """Refuse to run ``model`` (its ``model_identity``) into a report folder whose chapters ran another model under
    the same short name: ParameterError naming both and the fix (another ``--name``, or ``--fresh``). With ``fresh``
    the folder's earlier report (runs.json, results, figures, page; the executed notebooks of reports made before
    the chapters ran in process) is removed instead."""
    folder = Path(folder)
    others = sorted({str(e.get("model")) for e in read_log(folder).values() if e.get("model")} - {model})
    if not others:
        return
    if fresh:
        for name in ("runs.json", "index.html", "report.csv", "report.json"):
            (folder / name).unlink(missing_ok=True)
        for name in ("chapters", "results", "figures"):
            shutil.rmtree(folder / name, ignore_errors=True)
        return
    raise ParameterError(f"{folder} holds a report of another model under this name ({', '.join(others)}), not of "
                         f"{model}: give another --name, or --fresh to replace that report")


def read_log(folder: Path) -> dict:
    """The report folder's ``runs.json`` ({stem: entry}; {} when there is none)."""
    path = Path(folder) / "runs.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _write_log(folder: Path, log: dict) -> None:
    with paths.written_atomically(Path(folder) / "runs.json") as partial:
        Path(partial).write_text(json.dumps(log, indent=1, sort_keys=True, default=str), encoding="utf-8")


def chapter_settings(folder: Path, plan: ChapterPlan, model: str, device: str | None) -> dict[str, str]:
    """The settings the store and the scorers read while chapter ``plan`` computes (module docstring): its results
    folder, its name, its device and its rows log (left out where the log's folder cannot be made, a read-only
    cache: the run goes on, and a later estimate charges its rows)."""
    env = {"TOXLIB_RESULTS_DIR": str((Path(folder) / "results").resolve()), "TOXLIB_RECORD_CHAPTER": plan.stem}
    if device:
        env["TOXLIB_DEVICE"] = device
    logged = rows_log(plan.stem, model, plan.values, device or "cpu").resolve()
    try:
        logged.parent.mkdir(parents=True, exist_ok=True)
        env["TOXLIB_ROWS_LOG"] = str(logged)
    except OSError:
        pass
    return env


def run_chapter(plan: ChapterPlan, folder: Path, models: Models, device_key: str, model: str) -> tuple[str, str, dict]:
    """Compute chapter ``plan`` with ``models`` and write its tables and claims under ``<folder>/results``:
    (status "ran" or "failed", the error's first line, the rows it was served: {"record": n, "cache": n,
    "computed": n})."""
    before = served_counts()
    try:
        with settings.overridden(chapter_settings(folder, plan, model, device_key)), hidden():
            result = compute_chapter(plan.stem, plan.values, models=models)
            result.write(Path(folder) / "results", figures=False)
    except Exception as exc:  # a chapter that fails is reported and the next one runs (KeyboardInterrupt stops)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return "failed", f"{type(exc).__name__}: {first}"[:300], {}
    after = served_counts()
    return "ran", "", {source: after[source] - before.get(source, 0) for source in after}


def run_chapters(plans: list[ChapterPlan], folder: Path, models: Models, device_key: str, progress: bool = True,
                 model: str = "") -> list[ChapterRun]:
    """Run each applicable plan's chapter into ``folder`` (see the module docstring) with ``models`` (the report's:
    its model loaded once); ``device_key``: which of the plans' estimates applies, and the device its stages run on;
    ``model``: the model's ``model_identity``, kept in ``runs.json`` and compared before a chapter is taken as done.
    Returns one ``ChapterRun`` per plan, in order."""
    folder = Path(folder)
    (folder / "results").mkdir(parents=True, exist_ok=True)
    log, runs = read_log(folder), []
    total = sum(p.estimates.get(device_key, 0.0) for p in plans if p.applies)
    with tqdm(total=round(total), unit="s", desc="report (estimated seconds done)", disable=not progress) as bar:
        for plan in plans:
            estimate = plan.estimates.get(device_key)
            if not plan.applies:
                runs.append(ChapterRun(plan.stem, "left out" if plan.left_out else "not applicable", error=plan.why))
                continue
            if done_before(log, plan.stem, plan.values, folder, model, device_key):
                runs.append(ChapterRun(plan.stem, "done before", log[plan.stem]["wall_s"], estimate,
                                       finished=log[plan.stem]["finished"], rows=log[plan.stem].get("rows", {})))
                bar.update(round(estimate or 0))
                continue
            bar.set_postfix_str(plan.stem)
            started = time.perf_counter()
            status, error, rows = run_chapter(plan, folder, models, device_key, model)
            wall = time.perf_counter() - started
            finished = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            runs.append(ChapterRun(plan.stem, status, wall, estimate, error, finished, rows))
            log[plan.stem] = {"status": status, "values": plan.values, "commit": library_commit(), "model": model,
                              "device": device_key, "wall_s": wall, "estimate_s": estimate, "finished": finished,
                              "error": error, "rows": rows}
            _write_log(folder, log)
            bar.update(round(estimate or 0))
    return runs


def run_as_dict(run: ChapterRun) -> dict:
    return asdict(run)
