"""Data cards and the dataset statistics the papers report (RealToxicityPrompts section 4, ToxiGen Figure 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from toxlib.data.io import read_json_array, read_jsonl, read_lines
from toxlib.data.sources import Registry, fetch, registry
from toxlib.data.toxigen import explode_groups


def count_records(name: str, reg: Registry | None = None) -> int:
    """Records in one source file: JSON lines, JSON array items, CSV/TSV rows, or text lines."""
    source = (reg or registry())[name]
    path = fetch(name, reg=reg)
    if source.path.endswith(".jsonl"):
        return len(read_jsonl(path, name))
    if source.path.endswith(".json"):
        return len(read_json_array(path, name))
    if source.path.endswith((".csv", ".tsv")):
        return len(pd.read_csv(path, sep="\t" if source.path.endswith(".tsv") else ","))
    return len(read_lines(path))


def data_cards(reg: Registry | None = None) -> pd.DataFrame:
    """One row per registry source. Columns: name, description, repo, commit (12 chars), path, license, records,
    bytes, sha256 (12 chars), url."""
    reg = reg or registry()
    rows = []
    for name in reg.names():
        s = reg[name]
        rows.append(
            {
                "name": name,
                "description": s.description,
                "repo": s.repo,
                "commit": s.commit[:12],
                "path": s.path,
                "license": s.license,
                "records": count_records(name, reg),
                "bytes": s.bytes,
                "sha256": s.sha256[:12],
                "url": s.url,
            }
        )
    return pd.DataFrame(rows)


def rtp_statistics(records: pd.DataFrame, threshold: float = 0.5) -> dict:
    """The statistics RealToxicityPrompts reports about its prompts, for one set of records.

    records: frame of toxlib.data.load_rtp. Returns a dict: n_records, n_prompt_scored, n_toxic_prompts
    (prompt_toxicity >= threshold), share_toxic_prompts, mean_prompt_toxicity, mean_continuation_toxicity,
    pearson_r, pearson_p (prompt vs continuation toxicity over records with both scored), n_pearson.
    """
    prompt, cont = records["prompt_toxicity"], records["continuation_toxicity"]
    both = prompt.notna() & cont.notna()
    result = stats.pearsonr(prompt[both], cont[both]) if both.sum() >= 3 else None
    scored = prompt.notna()
    return {
        "n_records": int(len(records)),
        "n_prompt_scored": int(scored.sum()),
        "n_toxic_prompts": int((prompt[scored] >= threshold).sum()),
        "share_toxic_prompts": float((prompt[scored] >= threshold).mean()) if scored.any() else np.nan,
        "mean_prompt_toxicity": float(prompt.mean()),
        "mean_continuation_toxicity": float(cont.mean()),
        "pearson_r": float(result.statistic) if result else np.nan,
        "pearson_p": float(result.pvalue) if result else np.nan,
        "n_pearson": int(both.sum()),
    }


def group_label_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Harmful and benign sentences per target group (a sentence naming several groups counts for each).

    frame: load_toxigen() or load_implicit_hate(). Columns: target_group, harmful, benign, total, share_harmful;
    rows sorted by total, largest first.
    """
    exploded = explode_groups(frame)
    if exploded["target_group"].isna().any():
        raise ValueError(f"{int(exploded['target_group'].isna().sum())} sentence(s) name no target group")
    table = pd.crosstab(exploded["target_group"], exploded["harmful"]).reindex(columns=[True, False], fill_value=0)
    table.columns = ["harmful", "benign"]
    table["total"] = table["harmful"] + table["benign"]
    table["share_harmful"] = table["harmful"] / table["total"]
    return table.sort_values("total", ascending=False).rename_axis("target_group").reset_index()


def composition(frame: pd.DataFrame, rows: str, columns: str) -> pd.DataFrame:
    """Counts of ``rows`` x ``columns`` with margins (pd.crosstab), e.g. SASS category x tag."""
    return pd.crosstab(frame[rows], frame[columns], margins=True, margins_name="total").reset_index()
