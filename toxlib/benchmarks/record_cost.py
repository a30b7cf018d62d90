"""What computing the sample record costs in CPU time, per chapter group: the record's own work (generated tokens,
scored sentence tokens, scored texts, read from each key's file) divided by the rates the benchmarks measured.

Inputs: a record folder (``data/record``: keys.csv and each key's rows) and the JSON lines that
``python -m toxlib bench generate | perplexity | self-debias | score`` print last (one file of them per machine
and engine, as in ``benchmarks/runs/`` at the repository's root). Each key is charged at the rate of the benchmark
that runs its kind of work on its model in its precision:

====================================================  ======================================================
record key                                            rate (benchmark JSON field)
====================================================  ======================================================
sampled generation (plain, word filter, vocabulary    ``bench generate``: ``toxlib_tok_s`` of the key's base
shift, an adapted model, attribute conditioning)      model (an adapter's ``smollm2-135m+...`` is charged as
                                                      ``smollm2-135m``: same shapes)
greedy generation, plain or instructive               ``bench self-debias``: ``greedy_tok_s``
Self-Debiasing                                        ``bench self-debias``: ``self_debias_tok_s``
sentence NLLs (``causal-nll``)                        ``bench perplexity``: ``tok_s``
scores (key ``<scorer>@<version>``)                   ``bench score``: ``texts_per_s`` of the same version
====================================================  ======================================================

A rate is looked up by (model, precision, field): a bf16 NLL key needs a bf16 ``bench perplexity`` line. Lines
measured with random weights (``"weights": "random"``) are skipped: their sampler runs its worst case. Keys no
benchmark measures (PPLM's gradient steps, steered NLLs, SASS's next-token readings) and keys with no rate in a file
are listed with the reason and count as unknown (NaN), never as 0 hours; a chapter group with no charged key has
unknown hours. The adapters' training is not a record key and is not counted. Tokens are what the benchmarks
count: new tokens for generation (``n_new_tokens``, a stop token included), scored tokens for NLLs. The rates are
the benchmarks' shapes (400-row batches, 2,000 sentences); a chapter's batches differ, so the hours are an
estimate of the record's cost on the benchmark's machine, not a measurement of it.

Why by hand: no library knows the record's layout or which benchmark measures which key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from toxlib.store.record_reader import Record, checked_bytes, key_chapters, read_csv_gz, record_dir

#: Columns of ``record_work``.
WORK_COLUMNS = ["kind", "key", "chapters", "model", "dtype", "work", "units", "rate_field", "reason"]


def base_model(name: str) -> str:
    """An adapted model's base ("smollm2-135m+dapt-toxic" -> "smollm2-135m")."""
    return name.split("+", 1)[0]


def _generation_path(config: dict) -> tuple[str | None, str]:
    """(rate field, reason when none) for a generation key's config."""
    steering = (config.get("steering") or {}).get("name", "plain")
    mode = config["decoding"]["mode"]
    if steering == "pplm":
        return None, "PPLM's gradient steps: no benchmark measures them"
    if steering == "self-debiasing":
        return "self_debias_tok_s", ""
    if mode == "greedy":
        return "greedy_tok_s", ""
    if mode == "sample":
        return "toxlib_tok_s", ""
    return None, f"{mode} decoding: no benchmark measures it"


def record_work(folder: str | Path | None = None) -> pd.DataFrame:
    """One row per record key (``WORK_COLUMNS``): kind, key, chapters ("; "-joined), model (the base model or
    scorer version the rate is looked up by), dtype (the key's precision; a scorer's is in its version), work
    (tokens or texts), units ("tokens" / "texts"), rate_field (the benchmark JSON field it is charged at; None when
    no benchmark measures it), reason (why not; "" when charged)."""
    record = Record(folder or record_dir())
    out = []
    for (kind, key), entry in sorted(record.keys.items()):
        path = record.folder / kind / f"{entry['file']}.csv.gz"
        raw = read_csv_gz(path, checked_bytes(record.folder, path, record.sums))
        chapters = "; ".join(key_chapters(entry))
        config = entry["config"] or {}
        if kind == "scores":  # a scorer key is "<scorer>@<version>"; bench score reports the version
            out.append([kind, key, chapters, key.split("@", 1)[-1], "", len(raw), "texts", "texts_per_s", ""])
            continue
        model, dtype = base_model(config["model"]), config.get("dtype", "float32")
        if kind == "generations":
            field, reason = _generation_path(config)
            tokens = sum(int(r["n_new_tokens"]) for r in raw)
        else:
            method = key.split("|")[0].split(":")[0]
            field, reason = ("tok_s", "") if method.startswith("causal-nll") else (
                None, f"{method}: no benchmark measures it")
            tokens = sum(int(r["n_tokens"]) for r in raw)
        out.append([kind, key, chapters, model, dtype, tokens, "tokens", field, reason])
    return pd.DataFrame(out, columns=WORK_COLUMNS)


def read_rates(path: str | Path) -> dict[tuple[str, str, str], float]:
    """{(model or scorer version, precision, field): rate} from a file of benchmark JSON lines (lines that are not
    JSON objects, and lines measured with random weights, are skipped). A generate line gives (model, its dtype,
    "toxlib_tok_s"), a perplexity line (model, dtype, "tok_s"), a self-debias line "greedy_tok_s" and
    "self_debias_tok_s", a score line (version, "", "texts_per_s") for each scorer version (the first result of a
    version within a line: lines written before ``bench score`` timed each version once may time the default
    distilled scorer and its float32 variant, the same version, twice). A model given as a folder counts by its
    name. A later line replaces an earlier one."""
    rates: dict[tuple[str, str, str], float] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(row, dict) or row.get("weights") == "random":
            continue
        scored_here = {}
        for scored in row.get("results", []):  # the first of one version in a line: the scorer as chapters run it
            scored_here.setdefault((scored["version"], "", "texts_per_s"), float(scored["texts_per_s"]))
        rates.update(scored_here)
        for field in ("toxlib_tok_s", "tok_s", "greedy_tok_s", "self_debias_tok_s"):
            if "model" in row and field in row:
                model = base_model(Path(str(row["model"])).name)
                rates[(model, row.get("dtype", "float32"), field)] = float(row[field])
    return rates


def cpu_hours(work: pd.DataFrame, rates: dict[tuple[str, str, str], float]) -> pd.DataFrame:
    """``work`` (``record_work``) with rate and hours columns: hours = work / rate / 3600, NaN where the key has no
    rate field or the rates hold none for its model and precision (``reason`` then says which)."""
    keys = list(zip(work["model"], work["dtype"], work["rate_field"]))
    reason = [r or ("" if k in rates else f"no {k[2]} for {k[0]}{' in ' + k[1] if k[1] else ''} in the rates")
              for r, k in zip(work["reason"], keys)]
    out = work.assign(rate=[rates.get(k, float("nan")) for k in keys], reason=reason)
    return out.assign(hours=out["work"] / out["rate"] / 3600)


def per_chapter(costs: pd.DataFrame) -> pd.DataFrame:
    """``cpu_hours`` summed per chapter group (the keys.csv ``chapters`` field: a key several chapters share is
    counted once, in their group): chapters, keys, keys_charged, hours (of the charged keys; NaN when none is)."""
    return (costs.assign(charged=costs["hours"].notna())
            .groupby("chapters", sort=True)
            .agg(keys=("key", "size"), keys_charged=("charged", "sum"),
                 hours=("hours", lambda h: h.sum(min_count=1)))
            .reset_index())


@dataclass
class RecordCost:
    """What ``record_cost`` finds. hours: one row per chapter group, one column of hours per file of rates
    ("<label> (h)"; NaN where no key of the group is charged); uncharged: {label: the keys that file cannot charge,
    grouped by reason, chapters and units, with keys and work}; summary: {label: per_chapter_group_hours (None for
    unknown), charged_hours, keys_charged, keys}, the command's JSON object."""

    hours: pd.DataFrame
    uncharged: dict[str, pd.DataFrame]
    summary: dict[str, dict]


def record_cost(runs: list[str | Path], record: str | Path | None = None) -> RecordCost:
    """The sample record's CPU-hours per chapter group at the rates of each file of benchmark JSON lines in ``runs``
    (a file is labelled by its stem, or its path where two stems are the same); ``record``: the record folder
    (None: ``data/record``)."""
    work = record_work(record)
    paths = [Path(p) for p in runs]
    stems = [p.stem for p in paths]
    labels = [stem if stems.count(stem) == 1 else str(p) for stem, p in zip(stems, paths)]
    tables, summary, uncharged = [], {}, {}
    for label, path in zip(labels, paths):
        costs = cpu_hours(work, read_rates(path))
        table = per_chapter(costs).set_index("chapters")
        tables.append(table["hours"].rename(f"{label} (h)"))
        hours = {c: (None if pd.isna(h) else round(float(h), 3)) for c, h in table["hours"].items()}
        summary[label] = {"per_chapter_group_hours": hours, "charged_hours": round(float(costs["hours"].sum()), 3),
                          "keys_charged": int(costs["hours"].notna().sum()), "keys": len(costs)}
        part = costs[costs["hours"].isna()]
        uncharged[label] = (part.groupby(["reason", "chapters", "units"])
                            .agg(keys=("key", "size"), work=("work", "sum")).reset_index())
    return RecordCost(pd.concat(tables, axis=1), uncharged, summary)
