"""``python -m toxlib report --model M --budget smoke|quick|decide|paper``: a model's report card (the papers'
protocols on any model, every claim's verdict beside the bundled models and the papers; ``toxlib.reportcard``,
the [book] extra). It prints its estimate first."""

from __future__ import annotations

import os
from argparse import ArgumentTypeError

from toxlib.chapters import model_chapters
from toxlib.common.argtypes import short_model_name
from toxlib.common.errors import ParameterError


def short_name(model: str) -> str:
    """The name a report gives a model when none is given: a bundled name as it is, a folder's or hub id's last
    part."""
    from pathlib import Path

    return Path(model.rstrip("/")).name or model


def _report(args) -> int:
    from pathlib import Path

    # the report's own bars say where it is; the libraries' loading bars would bury its estimate
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import warnings

    warnings.filterwarnings("ignore", message="Cannot enable progress bars", category=UserWarning)
    from toxlib.models import BUNDLED
    from toxlib.reportcard.card import estimate_text, plan_report, run_report  # optional: the [book] extra

    names = args.name or [short_name(m) for m in args.model]
    if len(names) != len(args.model) or len(set(names)) != len(names):
        raise ParameterError(f"give one distinct --name per --model ({len(args.model)} models, names {names}), "
                             "or none")
    for model, name in zip(args.model, names):
        try:
            short_model_name(name)
        except ArgumentTypeError as exc:  # a default taken from a folder's name
            raise ParameterError(f"the name of --model {model} {exc}: give --name") from None
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ParameterError(f"--out {out} is a file; give a folder (it holds one report folder per model)")
    from toxlib.reportcard.card import model_identity
    from toxlib.reportcard.runs import check_same_model

    for model, name in zip(args.model, names):  # before any estimate: a refused folder costs nothing
        if not args.fresh:
            check_same_model(out / name, model_identity(model))
    status = 0
    for model, name in zip(args.model, names):
        given = {} if model == name and model in BUNDLED else {name: model}
        planned = plan_report(name, args.budget, given, device=args.device, executor=args.executor,
                              chapters=args.chapters, calibrate=False if args.no_calibrate else None,
                              folder=out / name)
        print(estimate_text(planned), flush=True)
        if args.dry_run:
            continue
        report = run_report(planned, Path(args.out) / name, fresh=args.fresh)
        failed = [r.stem for r in report.runs if r.status == "failed"]
        counts = {}
        for row in report.rows:
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
        print(f"{name}: {len(report.rows)} claims ({', '.join(f'{n} {v}' for v, n in counts.items())}) in "
              f"{report.wall_s / 60:.1f} min; page: {report.page}"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
        status = status or (1 if failed else 0)
    return status


def add_commands(sub) -> None:
    """``report``."""
    report = sub.add_parser("report", help="your model's report card: the papers' protocols on any model, every "
                            "claim's verdict beside the bundled models and the papers (prints its estimate first)")
    report.add_argument("--model", required=True, action="append", help="a bundled name, a local folder saved with "
                        "save_pretrained, or a hub id (repeat for several models: one report each)")
    report.add_argument("--name", action="append", type=short_model_name, help="the short name tables and claims give "
                        "the model: letters, digits, '.', '_', '-' (one per --model; default: the folder's or hub "
                        "id's last part)")
    report.add_argument("--budget", default="quick", choices=["smoke", "quick", "decide", "paper"],
                        help="smoke: seconds, decides nothing; quick (default): a fraction of the book's sizes "
                        "(--dry-run: how many minutes here); decide: the book's sizes; paper: the papers' sizes")
    report.add_argument("--dry-run", action="store_true", help="print the estimate only")
    report.add_argument("--device", choices=["cpu", "cuda"], help="where the model runs (default: the GPU when "
                        "present)")
    report.add_argument("--executor", choices=["local", "ray"], help="run generation and scoring on a Ray cluster "
                        "(RAY_ADDRESS) instead of this process")
    report.add_argument("--chapters", nargs="+", choices=model_chapters(),
                        help="only these chapters (default: every chapter whose claims concern a model; a bundled "
                        "model at decide leaves out those the book does not run for it)")
    report.add_argument("--out", default="reports", help="the folder that holds one report folder per model "
                        "(default: reports/; an interrupted report there resumes)")
    report.add_argument("--fresh", action="store_true", help="replace a report of another model under the same "
                        "--name in --out (without it, such a folder is refused)")
    report.add_argument("--no-calibrate", action="store_true", help="estimate from the parameter count instead of "
                        "timing the model here (a report whose rows the sample record holds times nothing either way)")
    report.set_defaults(func=_report)
