"""The machine timings a chapter shows: by default those of the committed benchmark runs, so that a default build
writes the same files on every machine; this machine's own only when the chapter is asked to ``measure``.

A run file is ``benchmarks/runs/<date>-<cpu>-chapter-timings.jsonl``, one JSON line per timed table: ``table``
("generation/speed"), ``key`` (the digest of the values that decide what was timed) and ``values`` (those values,
readable), ``rows`` (the table's rows as timed), ``machine`` (CPU model and threads), ``cpu`` (its kernel features),
``torch``, ``date`` and ``command``. A chapter run with ``measure=True`` times this machine, shows its rows beside the
committed runs' and writes them to this machine's run file of the day (replacing its earlier line for the same table
and key); committing that file makes them part of every default build. A toxlib installed from a wheel shows the
committed runs it carries and writes this machine's to the results folder's ``benchmark-runs/``.

In: a table name, the values that decide it, ``measure`` and a function returning this machine's rows. Out: a
DataFrame of the rows of every run that timed the same values, oldest run first, each with ``machine`` and ``date``.
Written by hand: what is matched and shown is this book's convention, not a library's.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import torch

from toxlib.models.cpu_kernels import cpu_model, describe_cpu, kernel_features
from toxlib.publish import results
from toxlib.store import paths
from toxlib.store.keys import stable_hash

RUN_SUFFIX = "-chapter-timings.jsonl"
#: columns each shown row gains: which machine timed it, and on which day
RUN_COLUMNS = ["machine", "date"]


def committed_runs_dir() -> Path:
    """The committed runs: the checkout's ``benchmarks/runs/``, or the copies a wheel carries."""
    return paths.companion_root() / "benchmarks" / "runs"


def runs_dir() -> Path:
    """Where this machine's runs are written: the checkout's ``benchmarks/runs/``; installed from a wheel, the
    results folder's ``benchmark-runs/`` (never inside the installed package)."""
    return committed_runs_dir() if paths.in_checkout() else paths.results_dir() / "benchmark-runs"


def run_files() -> list[Path]:
    """The chapter-timing run files, oldest first (by name: the date leads): the committed ones (the checkout's
    ``benchmarks/runs/``, or the copies a wheel carries) and, installed, this machine's own."""
    folders = dict.fromkeys([committed_runs_dir(), runs_dir()])
    return sorted((p for folder in folders for p in folder.glob(f"*{RUN_SUFFIX}")), key=lambda p: p.name)


def key_of(values: dict) -> str:
    """The digest that matches a table's rows to the values that decided them (order of keys does not matter)."""
    return stable_hash(values)[:16]


def this_machine() -> str:
    """How a shown row names the machine that timed it: "AMD EPYC, 2 threads"."""
    return f"{cpu_model()}, {torch.get_num_threads()} threads"


def machine_slug() -> str:
    """This machine in a run file's name: "amd-epyc-avx2" (the widest vector extension; "-amx" where it has AMX)."""
    features = kernel_features()
    name = re.sub(r"[^a-z0-9]+", "-", cpu_model().lower()).strip("-") or "cpu"
    return f"{name}-{'avx512' if features['AVX-512'] else 'avx2'}{'-amx' if features['AMX'] else ''}"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def committed_rows(table: str, values: dict, skip: Path | None = None) -> list[dict]:
    """Every committed run's rows of ``table`` timed at ``values`` (oldest run first), each with ``machine`` and
    ``date``; ``skip``: a run file left out (the one this run is writing)."""
    key, rows = key_of(values), []
    for path in run_files():
        if skip is not None and path.resolve() == skip.resolve():
            continue
        for line in _lines(path):
            if line["table"] == table and line["key"] == key:
                rows += [{**row, "machine": line["machine"], "date": line["date"]} for row in line["rows"]]
    return rows


def _native(value):
    return value.item() if hasattr(value, "item") else str(value)  # numpy scalars as numbers, anything else as text


def today() -> str:
    """The UTC date a run is named and shown by, as YYYY-MM-DD."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def write_run(table: str, values: dict, rows: list[dict], command: str) -> Path:
    """Write this machine's ``rows`` of ``table`` at ``values`` to its run file of the day, replacing an earlier
    line for the same table and key. Returns the file."""
    path = runs_dir() / f"{today()}-{machine_slug()}{RUN_SUFFIX}"
    key = key_of(values)
    kept = [line for line in (_lines(path) if path.exists() else [])
            if (line["table"], line["key"]) != (table, key)]
    line = {"table": table, "key": key, "values": values, "rows": rows, "machine": this_machine(),
            "cpu": describe_cpu(), "torch": torch.__version__, "date": today(), "command": command}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, default=_native) + "\n" for x in [*kept, line]))
    return path


def timing_table(table: str, values: dict, measure: bool, time_here: Callable[[], list[dict]],
                 columns: list[str]) -> pd.DataFrame:
    """The rows of ``table`` to show: every committed run's at ``values``, and with ``measure`` this machine's
    (``time_here()``, written to its run file and shown last). Columns: ``columns`` then ``machine``, ``date``;
    empty when no run timed these values (the chapter then says how to time them)."""
    rows, skip = [], None
    if measure:
        here = [{column: row.get(column) for column in columns} for row in time_here()]
        command = f"python -m toxlib run notebooks/{table.split('/')[0]}.ipynb -p measure True"
        skip = write_run(table, values, here, command)
        rows = [{**row, "machine": this_machine(), "date": today()} for row in here]
    shown = committed_rows(table, values, skip) + rows
    return pd.DataFrame(shown, columns=[*columns, *RUN_COLUMNS])


def newest_run(shown: pd.DataFrame) -> pd.DataFrame:
    """The rows of the newest run in a :func:`timing_table` frame (the last shown): what a machine-speed claim is
    judged on."""
    if shown.empty:
        return shown
    last = shown.iloc[-1]
    return shown[(shown["machine"] == last["machine"]) & (shown["date"] == last["date"])]


def not_timed_note(table: str) -> str:
    """What a chapter prints in place of an empty timing table."""
    where = "benchmarks/runs" if paths.in_checkout() else runs_dir()
    return (f"No committed benchmark run timed {table} at these values: set the chapter's parameter measure=True to "
            f"time your machine (its run is written under {where}/).")


def add_timings(out, name: str, shown: pd.DataFrame, caption: str, what: str, digits: int = 3) -> bool:
    """Add a :func:`timing_table` frame to ``out`` (a ``toxlib.publish.chapter_result.ChapterResult``) as its table
    ``name``, or, when no run timed its values, :func:`not_timed_note` for ``what`` as a text of that name. Returns
    whether the table was added."""
    if shown.empty:
        out.add_text(name, not_timed_note(what))
        return False
    out.add_table(name, shown, caption, digits=digits)
    return True


def publish_timings(stem: str, name: str, shown: pd.DataFrame, caption: str, what: str, digits: int = 3) -> bool:
    """Publish a :func:`timing_table` frame as the chapter's table ``name`` (``results.publish``), or, when no run
    timed its values, print :func:`not_timed_note` for ``what`` in its place. Returns whether it was published."""
    if shown.empty:
        print(not_timed_note(what))
        return False
    results.publish(stem, name, shown, caption, digits=digits)
    return True
