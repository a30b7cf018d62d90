"""A report written out: ``index.html`` (one page: the headline per paper, every claim beside the paper and the
bundled models, the figures, each chapter's status and timing, the run record), ``report.csv`` and ``report.json``
(the same rows, for comparing many models).

The page is rendered by Jinja2 with autoescaping on, so every string from a model, a data set or a path is shown as
text, never read as HTML.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import jinja2
import pandas as pd

from toxlib.metrics.uncertainty import VERDICTS
from toxlib.reportcard.rows import REPORT_COLUMNS
from toxlib.store import paths


def paper_counts(rows: list[dict]) -> list[dict]:
    """Per paper, in the order its first claim appears: how many claims hold, fail, are undecided, are not
    informative or are not judged (one key per verdict of ``VERDICTS``, spaces as underscores: holds, fails,
    undecided, not_informative, not_judged; zero where none), and how many rest on scores of text outside the
    scorer's domain (marked)."""
    out: dict[str, dict] = {}
    for row in rows:
        counts = out.setdefault(row["paper"], {"paper": row["paper"], **{v.replace(" ", "_"): 0 for v in VERDICTS},
                                               "marked": 0})
        counts[row["verdict"].replace(" ", "_")] += 1
        counts["marked"] += bool(row["outside_domain"])
    return list(out.values())


def flat_table(rows: list[dict]) -> pd.DataFrame:
    """The report's rows as one table (``toxlib.reportcard.rows.REPORT_COLUMNS``): the bundled models' values as one
    text column ("model: value (verdict); ..."), a verdict resting on text outside the scorer's domain marked with
    *, one resting on a model that answers as a constant would (``reportcard.degenerate``) with †."""
    return pd.DataFrame([{**row, "bundled": "; ".join(f"{b['model']}: {b['value']} ({b['verdict']})"
                                                      for b in row["bundled"]),
                          "verdict": row["verdict"] + ("*" if row["outside_domain"] else "")
                          + ("†" if row.get("degenerate") else "")} for row in rows],
                        columns=REPORT_COLUMNS)


def _missing(value) -> bool:
    """None, NaN or pandas' NA."""
    return value is None or bool(pd.isna(value))


def _seconds(value) -> str:
    if _missing(value):
        return ""
    return f"{value / 60:.1f} min" if value >= 90 else f"{value:.0f} s"


def _n(value) -> str:
    return "" if _missing(value) else f"{int(value):,}"


def rows_text(rows: dict) -> str:
    """Where a chapter's rows came from, as the page shows it: "800 from the sample record, 0 from your cache,
    0 computed"; "" when none are known (the chapter did not run)."""
    if not rows:
        return ""
    return (f"{rows.get('record', 0):,} from the sample record, {rows.get('cache', 0):,} from your cache, "
            f"{rows.get('computed', 0):,} computed")


def write_report(folder: Path, context: dict, rows: list[dict]) -> Path:
    """Write index.html, report.csv and report.json into ``folder`` and return the page's path. ``context``: the
    page's values (name, budget, chapters, figures, ...: see ``toxlib.reportcard.card.write``); ``rows``: the
    report's rows (``toxlib.reportcard.rows.REPORT_COLUMNS``)."""
    folder = Path(folder)
    template = resources.files("toxlib.reportcard").joinpath("templates/report.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    shown = [{**row, "n_shown": _n(row["n"])} for row in rows]
    chapters = [{**c, "estimated": _seconds(c.get("estimate_s")), "took": _seconds(c.get("wall_s")),
                 "rows_shown": rows_text(c.get("rows") or {})} for c in context["chapters"]]
    page = env.from_string(template).render(**{**context, "chapters": chapters}, rows=shown,
                                            headline=paper_counts(rows))
    with paths.written_atomically(folder / "index.html") as partial:
        Path(partial).write_text(page, encoding="utf-8")
    with paths.written_atomically(folder / "report.csv") as partial:
        flat_table(rows).to_csv(partial, index=False)
    document = _plain({key: value for key, value in context.items() if key != "figures"} | {"claims": rows})
    with paths.written_atomically(folder / "report.json") as partial:
        Path(partial).write_text(json.dumps(document, indent=1, allow_nan=False), encoding="utf-8")
    return folder / "index.html"


def _plain(value):
    """``value`` as JSON can hold it: NaN as null, numpy scalars as numbers, anything else unknown as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (str, int, bool)):
        return value
    return str(value)
