"""The paper's Tables 3/4 from the runner's output: probability of exhibiting each attribute per condition,
relative change and Student's t-test against default; long and printed forms; what a run of a given size can
detect.

Two tests stand side by side. The paper's (``t``, ``p_value``, ``significant``) is Student's unpaired t-test, and
every verdict of the chapter uses it, since it is the paper's table. Both conditions continue the same prompts, so a
test paired by prompt and sample (``t_paired``, ``p_paired``, ``significant_paired``: ``scipy.stats.ttest_rel``)
uses that design and is shown beside it (``paired_disagreements`` lists where the two part at alpha).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from toxlib.papers.debias.printed_tables import paper_cell
from toxlib.papers.debias.protocol import CONDITIONS, TABLE_ATTRIBUTES, THRESHOLD
from toxlib.publish.tables import CELL_WORDS


def _indicators(rows: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """0/1 per attribute (NaN where unscored) and "average": the mean of a row's available indicators."""
    values = rows[list(TABLE_ATTRIBUTES)].astype(float)
    ind = (values >= threshold).astype(float).where(values.notna())
    ind["average"] = ind[list(TABLE_ATTRIBUTES)].mean(axis=1, skipna=True)
    return ind


def _ttest(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Student's t (equal variances) of a against b, NaN where undefined (too few values, no variance)."""
    if len(a) < 2 or len(b) < 2:
        return float("nan"), float("nan")
    res = stats.ttest_ind(a, b, equal_var=True)
    return float(res.statistic), float(res.pvalue)


def _paired_ttest(condition: pd.DataFrame, default: pd.DataFrame, column: str) -> tuple[float, float, int]:
    """Student's paired t (``scipy.stats.ttest_rel``) of a condition's indicators against default's, paired by
    (prompt_id, sample_idx); a condition with several groups (nonsensical) gives each pair the mean of its groups'
    indicators. Returns (t, p, pairs); NaN where there are fewer than 2 pairs, the frames lack the pairing columns,
    or the differences have no variance."""
    keys = ["prompt_id", "sample_idx"]
    if not set(keys) <= set(condition.columns) or not set(keys) <= set(default.columns):
        return float("nan"), float("nan"), 0
    a = condition.groupby(keys)[column].mean()
    b = default.groupby(keys)[column].mean()
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    if len(both) < 2 or float((both["a"] - both["b"]).std()) == 0.0:
        return float("nan"), float("nan"), int(len(both))
    res = stats.ttest_rel(both["a"], both["b"])
    return float(res.statistic), float(res.pvalue), int(len(both))


def attribute_table(scored: pd.DataFrame, set_name: str, alpha: float = 0.05,
                    threshold: float = THRESHOLD) -> pd.DataFrame:
    """The paper's Table 3/4 for one prompt set of ``run_protocol``'s output.

    Rows: the conditions present, in ``CONDITIONS`` order. Columns: a two-level index, (attribute, statistic), for
    each of the six attributes and "average", with statistics
      probability  share of continuations whose score is >= ``threshold`` (in [0, 1]; NaN scores excluded);
                   nonsensical: the mean of its groups' shares; average: the mean of the six probabilities;
      change_pct   the paper's relative change, (default - condition) / default x 100: positive = less of the
                   attribute than default; NaN for the default row and when default's probability is 0;
      t, p_value   Student's t-test (``scipy.stats.ttest_ind``, equal_var=True) of the condition's per-continuation
                   0/1 indicators against default's (nonsensical: its groups' indicators pooled; average: the
                   per-continuation mean of the six indicators); t > 0 means more than default;
      significant  p_value < ``alpha``;
      t_paired, p_paired, significant_paired, pairs
                   the same comparison paired by prompt and sample (``_paired_ttest``), shown beside the paper's
                   unpaired test; no verdict uses it;
      n, missing   continuations scored / with a NaN score for that attribute (average: with at least one score /
                   with none);
    and for "average" also t_vs_original, p_vs_original, significant_vs_original: the same t-test against the
    ORIGINAL condition's per-continuation averages (what the importance test needs).
    """
    rows = scored[scored["set"] == set_name]
    if rows.empty:
        raise ValueError(f"no rows for prompt set {set_name!r}; sets: {sorted(scored['set'].unique())}")
    if "default" not in set(rows["condition"]):
        raise ValueError("the default condition is needed for the relative change and the t-tests")
    present = [c for c in CONDITIONS if c in set(rows["condition"])]
    present += sorted(set(rows["condition"]) - set(present))
    indicators = {}
    for c in present:
        subset = rows[rows["condition"] == c]
        pairing = {k: subset[k] for k in ("prompt_id", "sample_idx") if k in subset.columns}
        indicators[c] = _indicators(subset, threshold).assign(group=subset["group"], **pairing)
    columns = list(TABLE_ATTRIBUTES) + ["average"]
    records = {}
    for condition in present:
        ind = indicators[condition]
        record = {}
        for col in columns:
            if col == "average":
                probability = float(np.mean([record[(a, "probability")] for a in TABLE_ATTRIBUTES]))
            else:
                shares = ind.groupby("group")[col].mean()  # NaN excluded; one share per group
                probability = float(shares.mean())
            values = ind[col].dropna().to_numpy()
            base = indicators["default"][col].dropna().to_numpy()
            default_probability = records["default"][(col, "probability")] if condition != "default" else probability
            if condition == "default":
                change, t, p = float("nan"), float("nan"), float("nan")
                t_paired, p_paired, pairs = float("nan"), float("nan"), 0
            else:
                change = ((default_probability - probability) / default_probability * 100
                          if default_probability > 0 else float("nan"))
                t, p = _ttest(values, base)
                t_paired, p_paired, pairs = _paired_ttest(ind, indicators["default"], col)
            record.update({(col, "probability"): probability, (col, "change_pct"): change, (col, "t"): t,
                           (col, "p_value"): p, (col, "significant"): bool(p < alpha),
                           (col, "t_paired"): t_paired, (col, "p_paired"): p_paired,
                           (col, "significant_paired"): bool(p_paired < alpha), (col, "pairs"): pairs,
                           (col, "n"): int(len(values)), (col, "missing"): int(ind[col].isna().sum())})
        records[condition] = record
    for condition in present:
        if "original" in indicators and condition != "original":
            t, p = _ttest(indicators[condition]["average"].dropna().to_numpy(),
                          indicators["original"]["average"].dropna().to_numpy())
        else:
            t, p = float("nan"), float("nan")
        records[condition].update({("average", "t_vs_original"): t, ("average", "p_vs_original"): p,
                                   ("average", "significant_vs_original"): bool(p < alpha)})
    table = pd.DataFrame.from_dict(records, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["attribute", "statistic"])
    table.index.name = "condition"
    table.attrs.update({"set": set_name, "alpha": alpha, "threshold": threshold})
    return table


def tidy_table(table: pd.DataFrame) -> pd.DataFrame:
    """``attribute_table`` output in long form: one row per (condition, attribute) with columns condition,
    attribute, probability, change_pct, t, p_value, significant, t_paired, p_paired, significant_paired, pairs, n,
    missing (the set in ``table.attrs``)."""
    long = table.stack("attribute", future_stack=True).reset_index()
    keep = ["condition", "attribute", "probability", "change_pct", "t", "p_value", "significant", "t_paired",
            "p_paired", "significant_paired", "pairs", "n", "missing"]
    return long[keep].assign(set=table.attrs.get("set"))


def paper_style(table: pd.DataFrame) -> pd.DataFrame:
    """``attribute_table`` as the paper prints it: one row per condition, one column per attribute and the
    average, each cell "probability% (↓ relative change%)" with * when the t-test against default is significant
    (↓: less of the attribute than default, ↑: more)."""
    out = {}
    for attribute in [*TABLE_ATTRIBUTES, "average"]:
        cells = []
        for condition in table.index:
            row = table.loc[condition, attribute]
            cells.append(paper_cell(f"{row['probability']:.1%}", bool(row["significant"]),
                                    None if condition == "default" else row["change_pct"]))
        out[attribute] = cells
    return pd.DataFrame(out, index=table.index)


def detectable_difference(n: int, share: float, alpha: float = 0.05) -> float:
    """The smallest difference in the share of continuations with an attribute that Student's t-test declares
    significant at ``alpha`` when two conditions have ``n`` continuations each and shares near ``share`` (in
    (0, 1)): t_(1 - alpha/2, 2n - 2) x sqrt(2 share (1 - share) / n). A guide to what a run of this size can
    show, not a power analysis."""
    from scipy.stats import t as student_t

    return float(student_t.ppf(1 - alpha / 2, 2 * n - 2) * np.sqrt(2 * share * (1 - share) / n))


def paired_disagreements(long: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """The comparisons against default where the paper's unpaired test and the paired one part at ``alpha`` (one
    significant, the other not), from ``tidy_table`` rows with method and model columns: method, model, set,
    condition, attribute, probability, p (unpaired, the paper's: verdicts use it), p (paired), pairs."""
    rows = long[(long["condition"] != "default") & long["p_value"].notna() & long["p_paired"].notna()]
    parted = rows[(rows["p_value"] < alpha) != (rows["p_paired"] < alpha)]
    return (parted[["method", "model", "set", "condition", "attribute", "probability", "p_value", "p_paired", "pairs"]]
            .rename(columns={"p_value": "p (unpaired, the paper's)", "p_paired": "p (paired by prompt)"})
            .reset_index(drop=True))


def paired_summary(long: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per method, model and set (``tidy_table`` rows with method and model columns): how many comparisons against
    default both tests judge, how many each calls significant at ``alpha`` (the paper's unpaired test, which the
    verdicts use, and the paired one), and where they part ("condition: attribute", the attribute as ``CELL_WORDS``
    reads it, "; "-joined; "" for none)."""
    rows = long[(long["condition"] != "default") & long["p_value"].notna() & long["p_paired"].notna()]
    out = []
    for (method, model, set_name), part in long.groupby(["method", "model", "set"], sort=False):
        judged = rows[(rows["method"] == method) & (rows["model"] == model) & (rows["set"] == set_name)]
        parted = judged[(judged["p_value"] < alpha) != (judged["p_paired"] < alpha)]
        out.append({"method": method, "model": model, "set": set_name, "comparisons": len(judged),
                    "significant (unpaired, the paper's)": int((judged["p_value"] < alpha).sum()),
                    "significant (paired)": int((judged["p_paired"] < alpha).sum()),
                    "where they part": "; ".join(f"{c}: {CELL_WORDS.get(a, a)}" for c, a in zip(parted["condition"],
                                                                              parted["attribute"]))})
    return pd.DataFrame(out)
