"""What the sample record holds: ``python -m toxlib record status``.

``record_status(folder)`` returns one row per key (pandas DataFrame: kind, what (model, precision, decoding or
scorer, read from the key's config), rows, commit, machine, date (of the provenance entries, joined by "; "),
bytes (of the key's file)); ``record_totals`` gives the totals (keys, rows, texts, megabytes of the folder), which
``status_text`` prints under the table with what ``toxlib.store.record_reader.verify`` found (every file against
SHA256SUMS, every key's rows against keys.csv, files that differ from the commit).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toxlib.store.record_reader import RESTORE, SUMS, Record, record_dir, verify


def describe_key(kind: str, key: str, config: dict | None) -> str:
    """A short description of what decides a key's rows: "smollm2-135m float32 sample p=0.9 20 tok; self-debiasing"
    for a generation run, the key itself (model key or "<scorer>@<version>") otherwise."""
    if kind != "generations" or not config:
        return key
    decoding = config.get("decoding", {})
    parts = [config.get("model", "?"), config.get("dtype", "?"), decoding.get("mode", "?")]
    if decoding.get("mode") == "sample":
        parts.append(f"p={decoding.get('top_p')}")
    parts.append(f"{decoding.get('max_new_tokens')} tok")
    steering = (config.get("steering") or {}).get("name")
    return " ".join(str(p) for p in parts) + (f"; {steering}" if steering else "")


def record_status(folder: str | Path | None = None) -> pd.DataFrame:
    folder = Path(folder) if folder else record_dir()
    record = Record(folder)
    rows = []
    for (kind, key), row in sorted(record.keys.items()):
        made_by = row["made_by"] or [{}]
        path = folder / kind / f"{row['file']}.csv.gz"
        rows.append({"kind": kind, "what": describe_key(kind, key, row["config"]), "rows": row["rows"],
                     "commit": "; ".join(sorted({str(m.get("commit", "unknown")) for m in made_by})),
                     "machine": "; ".join(sorted({str(m.get("cpu", m.get("machine", "unknown"))).split(";")[0]
                                                  for m in made_by})),
                     "date": "; ".join(sorted({str(m.get("date", "unknown")) for m in made_by})),
                     "bytes": path.stat().st_size if path.exists() else 0})
    return pd.DataFrame(rows, columns=["kind", "what", "rows", "commit", "machine", "date", "bytes"])


def status_text(folder: str | Path | None = None, check: dict | None = None) -> str:
    """The status table, its totals and what ``verify`` found, as text. ``check``: ``verify(folder)`` when the
    caller has it already."""
    folder = Path(folder) if folder else record_dir()
    check = verify(folder) if check is None else check
    if check["problems"]:
        return (f"the record at {folder} failed its check ({len(check['problems'])} problem(s)):\n  "
                + "\n  ".join(check["problems"]) + f"\n{RESTORE}")
    table = record_status(folder)
    if table.empty:
        return f"the record at {folder} holds nothing (no keys.csv): build it with `python -m toxlib record write`"
    totals = record_totals(folder, table)
    with pd.option_context("display.max_colwidth", 70, "display.width", 200):
        body = table.to_string(index=False)
    per_kind = table.groupby("kind")["rows"].agg(["count", "sum"])
    summary = ", ".join(f"{kind}: {int(r['count'])} keys, {int(r['sum']):,} rows" for kind, r in per_kind.iterrows())
    changed = check["changed"]
    verified = (f"checked: {check['files']} files match {SUMS}; {check['keys']} keys hold the {check['rows']:,} rows "
                "keys.csv says; " + (f"{len(changed)} file(s) differ from the commit: {', '.join(changed)}"
                                     if changed else "the same as the commit"))
    return (f"{body}\n\n{folder}: {summary}; {totals['texts']:,} texts; {totals['megabytes']:.1f} MB\n{verified}")


def record_totals(folder: str | Path | None = None, table: pd.DataFrame | None = None) -> dict:
    """The record's totals: keys, rows, texts (stored once) and megabytes (every file in the folder, 1 MB = 1e6
    bytes). ``table``: ``record_status(folder)`` when the caller has it already."""
    folder = Path(folder) if folder else record_dir()
    table = record_status(folder) if table is None else table
    return {"keys": len(table), "rows": int(table["rows"].sum()), "texts": len(Record(folder).texts()),
            "megabytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6}
