"""Column headers for readers: a table's CSV keeps its column names (``exp_max_toxicity_non-toxic_authors``); the
page shows what they mean ("expected max toxicity, non-toxic" over "ours" and "authors"), with units, and says what a
difference is of ("ours − paper").

``header(column)`` is one column's header: ``HEADERS`` for the names the chapters use, else the longest known
prefix and the rest ("toxicity_probability_toxic" -> "toxicity probability, toxic"), else the name with spaces for
underscores. A name that already reads as words (no underscore: "Asian", "GPT-2 (paper)") is kept.

``grouped(columns, headers)`` pairs each column with the columns holding the paper's value beside it
(``<name>_paper``, ``<name>_authors``, ``<name>_diff``) as a two-level header: (header of the name, "ours" |
"paper" | "authors" | "ours − paper"); the other columns get ("", header). Columns that are already pairs (a
pivot's (value, column value), as ``pivot_table`` names them) keep their order and read (header of the value,
header of the column value); a pair with an empty second part (the pivot's index, once reset) reads ("", header).
Returns the columns in display order (each group together, where its first member stood) and their headers.
"""

from __future__ import annotations

#: suffix of a column holding a value beside ours, and the sub-header it gets
BESIDE = {"_paper": "paper", "_authors": "authors", "_diff": "ours − paper"}
#: the sub-header of our own value in a group
OURS = "ours"

HEADERS = {
    "exp_max_toxicity": "expected max toxicity",
    "exp_max_std": "expected max toxicity, sd",
    "toxicity_probability": "toxicity probability",
    "max_toxicity": "max toxicity",
    "mean_toxicity": "mean toxicity",
    "mean_prompt_toxicity": "mean prompt toxicity",
    "mean_continuation_toxicity": "mean continuation toxicity",
    "share_toxic_prompts": "share of toxic prompts",
    "toxic_share": "share toxic",
    "share_at_or_above": "share at or above",
    "share_harmful": "share harmful",
    "share_positive": "share positive",
    "k_scored_min": "scored per prompt (min)",
    "k_scored_mean": "scored per prompt (mean)",
    "n": "n",
    "n_prompts": "prompts",
    "n_records": "records",
    "n_prompt_scored": "prompts scored",
    "n_toxic_prompts": "toxic prompts",
    "n_unscored": "unscored generations",
    "n_unscored_prompts": "prompts with an unscored generation",
    "n_pearson": "n (Pearson)",
    "n_new_tokens": "new tokens",
    "n_pred_pos": "predicted positive",
    "n_true_pos": "true positive",
    "n_missing": "missing",
    "n_failed": "failed",
    "n_to_decide": "n to decide",
    "n_flagged": "flagged",
    "n_contains": "with a swear word",
    "n_both": "flagged and with a swear word",
    "n_unparsed_replies": "unparsed replies",
    "n_unparsed_labels": "unparsed labels",
    "pearson_r": "Pearson r",
    "pearson_p": "p-value (Pearson)",
    "p_value": "p-value",
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "spearman_perplexity": "Spearman ρ of perplexities",
    "auc": "AUC",
    "f1": "F1",
    "p_swear_given_toxic": "P(swear word | flagged)",
    "p_toxic_given_swear": "P(flagged | swear word)",
    "gpt3_zero": "GPT-3 zero-shot",
    "gpt3_one": "GPT-3 one-shot",
    "gpt3_few": "GPT-3 few-shot",
    "perspective": "Perspective",
    "sample_idx": "sample",
    "start_of_sequence": "start token",
    "kv_heads": "KV heads",
    "params_m": "parameters (M)",
    "non_embedding_params_m": "non-embedding parameters (M)",
    "wall_s": "wall time (s)",
    "train_seconds": "training time (s)",
    "seconds": "seconds",
    "first_call_s": "first call (s)",
    "second_call_s": "second call (s)",
    "tok_s": "tokens/s",
    "toxlib_tok_s": "toxlib tokens/s",
    "baseline_tok_s": "baseline tokens/s",
    "roofline_tok_s": "roofline tokens/s",
    "roofline_pct": "% of roofline",
    "matmul_gflops": "matmul GFLOP/s",
    "texts_per_s": "texts/s",
    "change_pct": "change vs default (%)",
    "loss_first_10pct": "loss, first 10% of steps",
    "loss_last_10pct": "loss, last 10% of steps",
    "safety_bfloat16": "safety score (bf16)",
    "safety_float32": "safety score (float32)",
    "toxicity_pearson": "toxicity Pearson r",
    "toxicity_auc": "toxicity AUC",
    "toxicity_calibration_error": "toxicity calibration error",
    "calibration_error": "calibration error",
    "dtype": "precision",
    "authors_system": "authors' system",
    "dropped_by_reference_any": "left out by the reference code",
    "paper_value": "paper",
    "our_value": "ours",
}


def header(column) -> str:
    """The header a reader sees for ``column`` (see the module's docstring)."""
    name = str(column)
    if name in HEADERS:
        return HEADERS[name]
    if "_" not in name:
        return name
    prefixes = [p for p in HEADERS if len(p) > 1 and name.startswith(p + "_")]
    if prefixes:
        prefix = max(prefixes, key=len)
        return f"{HEADERS[prefix]}, {name[len(prefix) + 1:].replace('_', ' ')}"
    words = name.replace("_pct", " (%)").replace("_", " ")
    return words[2:] if words.startswith("n ") and len(words) > 2 else words  # n_texts: a count of texts


def _base(column: str, columns: set) -> tuple[str, str] | None:
    """(base column, sub-header) when ``column`` holds a value beside ``base`` (which is among ``columns``)."""
    for suffix, label in BESIDE.items():
        if column.endswith(suffix) and column[: -len(suffix)] in columns:
            return column[: -len(suffix)], label
    return None


def grouped(columns: list, headers: dict | None = None) -> tuple[list, list]:
    """(columns in display order, their headers): a two-level header (tuples) where some column has a value beside
    it (see the module's docstring), else one level (strings). ``headers`` overrides ``header()`` per column (for the
    group's top level, per base column)."""
    headers = headers or {}
    if columns and all(isinstance(c, tuple) and len(c) == 2 for c in columns):
        return list(columns), [("", headers.get(str(a), header(a))) if b in ("", None) else
                               (headers.get(str(a), header(a)), header(b)) for a, b in columns]
    names = [str(c) for c in columns]
    present = set(names)
    beside = {c: _base(c, present) for c in names}
    if not any(beside.values()):
        return list(columns), [headers.get(c, header(c)) for c in names]
    order, labels, placed = [], [], set()
    by_name = dict(zip(names, columns))
    for name in names:
        if name in placed:
            continue
        base = beside[name][0] if beside[name] else name
        members = [base] + [c for c in names if beside[c] and beside[c][0] == base]
        top = headers.get(base, header(base))
        grouped_here = len(members) > 1
        for member in members:
            if member in placed or member not in by_name:
                continue
            placed.add(member)
            order.append(by_name[member])
            if grouped_here:
                labels.append((top, OURS if member == base else beside[member][1]))
            else:
                labels.append(("", headers.get(member, header(member))))
    return order, labels
