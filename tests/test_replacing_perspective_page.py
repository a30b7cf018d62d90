"""The book page "Replacing the Perspective API" quotes its numbers from the files that hold them: the agreement table
from the distilled scorer's shipped ``training.json``, the capacity table from the committed ``bench serve`` run."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "replacing_perspective.md"
TRAINING = ROOT / "toxlib" / "scorers" / "weights" / "distilled-minilm" / "training.json"
RUNS = ROOT / "benchmarks" / "runs"


def table_rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the markdown table whose first header cell is ``first_header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_agreement_table_is_the_shipped_held_out_measurement():
    shipped = json.loads(TRAINING.read_text())
    rows = table_rows(PAGE.read_text(), "attribute")
    assert sorted(r[0] for r in rows) == sorted(a.upper() for a in shipped["held_out"])
    for attribute, pearson, spearman, auc, calibration, positives in rows:
        measured = shipped["held_out"][attribute.lower()]
        assert [pearson, spearman, auc, calibration] == [f"{measured[k]:.3f}" for k in
                                                         ("pearson", "spearman", "auc", "calibration_error")]
        assert positives == f"{measured['n_positive']:,}"
    prose = " ".join(PAGE.read_text().split())
    assert f"{shipped['held_out_texts']:,} held-out" in prose and shipped["version"] in prose


def test_the_capacity_table_is_the_committed_bench_serve_run():
    [run_file] = sorted(RUNS.glob("*-serve-capacity.jsonl"))[-1:]
    run = json.loads(run_file.read_text().strip().splitlines()[-1])
    text = PAGE.read_text()
    prose = " ".join(text.split())
    assert run_file.name in prose and run["cpu"].split(";")[0] in prose
    rows = table_rows(text, "requests")
    by_cell = {(r["mode"], r["clients"], r["coalesce"], r["workers"]): r for r in run["results"]}
    assert len(rows) == len(by_cell)
    for kind, workers, clients, together, texts_per_s, share, p50, p99 in rows:
        mode = "single" if kind.startswith("single") else "batch"
        cell = by_cell[(mode, int(clients), together == "yes", int(workers))]
        assert (texts_per_s, share, p50, p99) == (f"{cell['texts_per_s']:,.0f}", f"{cell['of_scorer']:.0%}",
                                                  f"{cell['p50_ms']:,.0f}", f"{cell['p99_ms']:,.0f}")
    assert "default quota is 1 request per second" in prose
    alone = run["scorer_alone"]
    assert (f"{alone['before']['texts_per_s']:,.0f} texts/s before the cells and "
            f"{alone['after']['texts_per_s']:,.0f} after (mean {alone['texts_per_s']:,.0f})") in prose
    most = max(r["workers"] for r in run["results"])
    gains = [round(100 * (by_cell[("single", n, True, most)]["texts_per_s"]
                          / by_cell[("single", n, False, most)]["texts_per_s"] - 1)) for n in (8, 64)]
    assert f"gains {gains[0]}% at 8 clients and {gains[1]}% at 64" in prose
    lone = [f"{by_cell[('single', 1, True, w)]['texts_per_s']:,.0f}" for w in (most, 1)]
    assert f"gets {lone[0]} texts per second from two workers and {lone[1]} from one" in prose
    assert f"{run['load_average_1min'][0]:.1f} before the run and {run['load_average_1min'][1]:.1f} after" in prose
