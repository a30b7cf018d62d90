"""Running a report's chapters: each chapter notebook executed by papermill (``toxlib.book_build.runner``) with the
model in place of the bundled ones, its executed notebook under ``<report>/chapters/`` and its tables and claims under
``<report>/results/`` (never the book's ``data/results/``).

Resumable at two levels: a chapter whose run finished with the same parameters, library commit and model
(``runs.json``; the model by ``model_identity``: another model under the same short name runs every chapter afresh)
is not run again, and a chapter cut short re-runs with every row it had computed read back from the user's caches
(generation, score and NLL rows are stored as they are computed, and named in the chapter's rows log,
``toxlib.reportcard.cached``, so the next estimate charges only the rest). A chapter that fails is recorded with its
error and the next one runs.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from toxlib.book_build.chapter_cells import chapter_notebook
from toxlib.book_build.runner import run_notebook
from toxlib.common.errors import NotebookExecutionError, ParameterError, ToxlibError
from toxlib.common.progress import tqdm
from toxlib.common.provenance import library_commit
from toxlib.reportcard.cached import rows_log
from toxlib.store import paths


@dataclass
class ChapterPlan:
    """One chapter of a report: whether it ``applies`` (and ``why``), the ``values`` its run passes to papermill,
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
    (its ``model_identity``), device and this library commit, its notebook and claims still there."""
    entry = log.get(stem, {})
    return (entry.get("status") == "ran" and entry.get("values") == values and entry.get("commit") == library_commit()
            and entry.get("model") == model and (device is None or entry.get("device") == device)
            and (folder / "chapters" / f"{stem}.ipynb").exists()
            and (folder / "results" / stem / "claims.csv").exists())


def check_same_model(folder: Path, model: str, fresh: bool = False) -> None:
    """Refuse to run ``model`` (its ``model_identity``) into a report folder whose chapters ran another model under
    the same short name: ParameterError naming both and the fix (another ``--name``, or ``--fresh``). With ``fresh``
    the folder's earlier report (runs.json, chapters, results, figures, page) is removed instead."""
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


def kernel_env(folder: Path, device: str | None) -> dict[str, str]:
    """The chapters' kernels' environment: their results in the report folder and the device every stage runs on
    (``TOXLIB_DEVICE``). The model's short name is a chapter parameter (``model_names``), not part of it."""
    env = {"TOXLIB_RESULTS_DIR": str(Path(folder) / "results")}  # made absolute where the kernel starts
    if device:
        env["TOXLIB_DEVICE"] = device
    return env


def run_chapters(plans: list[ChapterPlan], folder: Path, env: dict[str, str], device_key: str,
                 progress: bool = True, model: str = "") -> list[ChapterRun]:
    """Run each applicable plan's chapter into ``folder`` (see the module docstring); ``device_key``: which of the
    plans' estimates applies; ``model``: the model's ``model_identity``, kept in ``runs.json`` and compared before a
    chapter is taken as done. Returns one ``ChapterRun`` per plan, in order."""
    folder = Path(folder)
    (folder / "chapters").mkdir(parents=True, exist_ok=True)
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
            rows = {}
            try:
                done = run_notebook(chapter_notebook(paths.companion_root(), plan.stem), plan.values,
                                    output=folder / "chapters" / f"{plan.stem}.ipynb",
                                    env={**env, **_rows_log_env(plan, model, device_key)}, progress=False)
                status, error, rows = "ran", "", done.get("rows", {})
            except (NotebookExecutionError, ToxlibError) as exc:
                status, error = "failed", str(exc).splitlines()[0]
            wall = time.perf_counter() - started
            finished = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            runs.append(ChapterRun(plan.stem, status, wall, estimate, error, finished, rows))
            log[plan.stem] = {"status": status, "values": plan.values, "commit": library_commit(), "model": model,
                              "device": device_key, "wall_s": wall, "estimate_s": estimate, "finished": finished,
                              "error": error, "rows": rows}
            _write_log(folder, log)
            bar.update(round(estimate or 0))
    return runs


def _rows_log_env(plan: ChapterPlan, model: str, device: str) -> dict[str, str]:
    """``TOXLIB_ROWS_LOG`` for the chapter's kernel (``cached.rows_log``), or nothing where its folder cannot be
    made (a read-only cache: the run goes on, and a later estimate charges its rows)."""
    logged = rows_log(plan.stem, model, plan.values, device).resolve()
    try:
        logged.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return {}
    return {"TOXLIB_ROWS_LOG": str(logged)}


def run_as_dict(run: ChapterRun) -> dict:
    return asdict(run)
