"""What computing the sample record costs in CPU time, per chapter: the record's own work (generated tokens,
scored sentence tokens, scored texts, read from each key's file) divided by the rates the benchmarks measured.

Inputs: a record folder (``data/record``: keys.csv and each key's rows) and the JSON lines that
``python -m toxlib bench generate | perplexity | self-debias | score`` print last (one file of them per machine
and engine, as in ``toxlib/benchmarks/runs/``). Each key is charged at the rate of the benchmark that runs its
kind of work on its model:

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

Keys no benchmark measures (PPLM's gradient steps, steered NLLs, SASS's next-token readings, training the
adapters) and keys whose model has no rate in the file are listed with no hours and the reason. Tokens are what
the benchmarks count: new tokens for generation (``n_new_tokens``, a stop token included), scored tokens for NLLs.
The rates are the benchmark's shapes (400-row batches, 2,000 sentences); a chapter's batches differ, so the hours
are an estimate of the record's cost on the benchmark's machine, not a measurement of it.

Why by hand: no library knows the record's layout or which benchmark measures which key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from toxlib.store.record import Record, checked_bytes, key_chapters, read_csv_gz, record_dir

#: Columns of ``record_work``.
WORK_COLUMNS = ["kind", "key", "chapters", "model", "work", "units", "rate_field", "reason"]


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
    scorer version the rate is looked up by; "" if none), work (tokens or texts), units ("tokens" / "texts"),
    rate_field (the benchmark JSON field it is charged at; None when no benchmark measures it), reason (why not;
    "" when charged)."""
    record = Record(folder or record_dir())
    weights_model = {entry["config"]["weights"]: base_model(entry["config"]["model"])
                     for (kind, _), entry in record.keys.items() if kind == "generations" and entry["config"]
                     and entry["config"].get("weights")}
    out = []
    for (kind, key), entry in sorted(record.keys.items()):
        path = record.folder / kind / f"{entry['file']}.csv.gz"
        raw = read_csv_gz(path, checked_bytes(record.folder, path, record.sums))
        chapters = "; ".join(key_chapters(entry))
        if kind == "generations":
            field, reason = _generation_path(entry["config"])
            out.append([kind, key, chapters, base_model(entry["config"]["model"]),
                        sum(int(r["n_new_tokens"]) for r in raw), "tokens", field, reason])
        elif kind == "lm_scores":
            method, weights = key.split("|")[:2]
            if method.startswith("causal-nll") and weights in weights_model:
                out.append([kind, key, chapters, weights_model[weights], sum(int(r["n_tokens"]) for r in raw),
                            "tokens", "tok_s", ""])
            else:
                out.append([kind, key, chapters, weights_model.get(weights, ""), sum(int(r["n_tokens"]) for r in raw),
                            "tokens", None, f"{method.split(':')[0]}: no benchmark measures it"])
        else:  # a scorer key is "<scorer>@<version>"; bench score reports the version
            out.append([kind, key, chapters, key.split("@", 1)[-1], len(raw), "texts", "texts_per_s", ""])
    return pd.DataFrame(out, columns=WORK_COLUMNS)


def read_rates(path: str | Path) -> dict[tuple[str, str], float]:
    """{(model or scorer version, field): rate} from a file of benchmark JSON lines (lines that are not JSON
    objects are skipped). A generate line gives (model, "toxlib_tok_s"), a perplexity line (model, "tok_s"), a
    self-debias line (model, "greedy_tok_s") and (model, "self_debias_tok_s"), a score line (version,
    "texts_per_s") for each scorer version (the first result of a version within a line: ``bench score`` times the
    default distilled scorer and then its float32 variant, the same version). A later line replaces an earlier one."""
    rates: dict[tuple[str, str], float] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(row, dict):
            continue
        scored_here = {}
        for scored in row.get("results", []):  # the first of one version in a line: the scorer as chapters run it
            scored_here.setdefault((scored["version"], "texts_per_s"), float(scored["texts_per_s"]))
        rates.update(scored_here)
        for field in ("toxlib_tok_s", "tok_s", "greedy_tok_s", "self_debias_tok_s"):
            if "model" in row and field in row:
                rates[(base_model(row["model"]), field)] = float(row[field])
    return rates


def cpu_hours(work: pd.DataFrame, rates: dict[tuple[str, str], float]) -> pd.DataFrame:
    """``work`` (``record_work``) with rate and hours columns: hours = work / rate / 3600, NaN where the key has no
    rate field or the rates hold none for its model (``reason`` then says which)."""
    rate = [rates.get((m, f), float("nan")) if f else float("nan") for m, f in zip(work["model"], work["rate_field"])]
    reason = [r or (f"no {f} for {m} in the rates" if (m, f) not in rates else "")
              for r, m, f in zip(work["reason"], work["model"], work["rate_field"])]
    out = work.assign(rate=rate, reason=reason)
    return out.assign(hours=out["work"] / out["rate"] / 3600)


def per_chapter(costs: pd.DataFrame) -> pd.DataFrame:
    """``cpu_hours`` summed per chapter group (the keys.csv ``chapters`` field: a key several chapters share is
    counted once, in their group): chapters, keys, keys_charged, hours (of the charged keys)."""
    return (costs.assign(charged=costs["hours"].notna())
            .groupby("chapters", sort=True)
            .agg(keys=("key", "size"), keys_charged=("charged", "sum"), hours=("hours", "sum"))
            .reset_index())


def main_record_cost(args) -> int:
    """``bench record-cost RUNS.jsonl [RUNS.jsonl ...]``: CPU-hours per chapter group for each file of rates,
    side by side, then the keys no rate covers; last line: one JSON object."""
    work = record_work(args.record)
    tables, result = [], {}
    for path in args.runs:
        label = Path(path).stem
        table = per_chapter(cpu_hours(work, read_rates(path)))
        tables.append(table.set_index("chapters")["hours"].rename(f"{label} (h)"))
        result[label] = {"per_chapter_hours": table.set_index("chapters")["hours"].round(3).to_dict(),
                         "total_hours": round(float(table["hours"].sum()), 3)}
    charged = cpu_hours(work, read_rates(args.runs[0]))
    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print(pd.concat(tables, axis=1).round(2).to_string())
        missing = charged[charged["hours"].isna()]
        if len(missing):
            print(f"\n{len(missing)} keys not charged ({Path(args.runs[0]).stem}), by reason:")
            print(missing.groupby(["reason", "chapters", "units"]).agg(keys=("key", "size"), work=("work", "sum"))
                  .reset_index().to_string(index=False))
    print(json.dumps(result))
    return 0
