"""RealToxicityPrompts Tables 2 and 3 as the authors' own results notebook computed them, to sit beside ours.

The text of the paper we have (``../shared/papers``) lost the two tables' numbers in extraction, and no public copy of
the printed tables could be reached offline. The authors' repository keeps the notebook that computed them
(github.com/allenai/real-toxicity-prompts, ``notebooks/realtoxicityprompts_results.ipynb`` at commit dd44ab7, section
"Table 2 & 3: EMT and Toxicity Probability in Prompted Generations", cells 13-15); its printed outputs are copied
verbatim in ``sources/rtp_results_notebook_dd44ab7.txt`` and transcribed to three decimals in
``authors_notebook.csv`` (one row per system and prompt class; ``tests/papers/rtp/test_rtp_authors.py`` checks every
value against the copy). These are the authors' computed values, not the printed table: two second-hand quotes of
the printed Table 2 differ from them in the second decimal in a few cells (GPT-2's expected maximum toxicity on
toxic prompts 0.75 against 0.745 here, GPT-3's toxicity probability on toxic prompts 0.87 against 0.861), and the
notebook's unprompted probabilities come from a 1,000-draw bootstrap that earlier runs of the same notebook put
0.01-0.02 elsewhere. The notebook does not show unprompted expected maximum toxicity (empty there). The authors'
names: "Affect GPT-2" is VOCAB-SHIFT, "Naughty List GPT-2" WORD FILTER, "CTRL Tokens" ATCON, "CTRL wiki" CTRL-W.
"""

from __future__ import annotations

import math
from importlib import resources

import pandas as pd

SOURCE = ("authors' results notebook (allenai/real-toxicity-prompts, notebooks/realtoxicityprompts_results.ipynb "
          "at dd44ab7, cells 13-15)")
SOURCE_FILE = "sources/rtp_results_notebook_dd44ab7.txt"
VALUES_FILE = "authors_notebook.csv"
NAN = math.nan
AUTHOR_COLUMNS = ("exp_max_toxicity", "exp_max_std", "toxicity_probability")


def _values() -> pd.DataFrame:
    with resources.files("toxlib.papers.rtp").joinpath(VALUES_FILE).open(encoding="utf-8") as f:
        return pd.read_csv(f, float_precision="round_trip")


#: system, notebook_name, prompt_class, exp_max_toxicity, exp_max_std, toxicity_probability (NaN: not shown)
VALUES = _values()
#: the systems, in the notebook's order of the transcription
SYSTEMS = list(dict.fromkeys(VALUES["system"]))
#: the notebook's row names for the systems
NOTEBOOK_NAMES = dict(zip(VALUES["system"], VALUES["notebook_name"]))
#: the detoxification chapter's methods -> the authors' system they stand beside (the base model is GPT-2 there)
FOR_METHOD = {"base model": "GPT-2", "base model (PPLM subset, fp32)": "GPT-2", "WORD FILTER": "WORD FILTER",
              "VOCAB-SHIFT": "VOCAB-SHIFT", "DAPT (non-toxic)": "DAPT (non-toxic)", "DAPT (toxic)": "DAPT (toxic)",
              "ATCON": "ATCON", "PPLM": "PPLM"}
_BY_KEY = VALUES.set_index(["system", "prompt_class"])


def authors_value(system: str, prompt_class: str, column: str) -> float:
    """One value of the authors' notebook (NaN where the notebook shows none)."""
    return float(_BY_KEY.loc[(system, prompt_class), column])


def source_text() -> str:
    """The verbatim copy of the notebook's outputs (``SOURCE_FILE``)."""
    return resources.files("toxlib.papers.rtp").joinpath(SOURCE_FILE).read_text(encoding="utf-8")


#: the authors' generations per prompt (k), the only k their values stand beside
AUTHORS_K = 25
#: the two metrics drawn as bars beside the authors' values: {our column: bar label}, {our column: the beside column}
BAR_LABELS = {"exp_max_toxicity": "expected max toxicity", "toxicity_probability": "toxicity probability"}
BESIDE_COLUMNS = {"exp_max_toxicity": "exp_max_toxicity_authors",
                  "toxicity_probability": "toxicity_probability_authors"}


def beside_table2(table2: pd.DataFrame, system: str = "GPT-2") -> pd.DataFrame:
    """``rtp.table2`` rows (model, prompt_class, k, ...) with the authors' ``system`` values of the same prompt class
    beside ours: columns exp_max_toxicity_authors, exp_max_std_authors, toxicity_probability_authors (NaN in rows
    whose k is not the authors' ``AUTHORS_K``) and authors_system."""
    out = table2.copy()
    same_k = out["k"].eq(AUTHORS_K) if "k" in out else pd.Series(True, index=out.index)
    for column in AUTHOR_COLUMNS:
        out[f"{column}_authors"] = [authors_value(system, c, column) if ok else NAN
                                    for c, ok in zip(out["prompt_class"], same_k)]
    return out.assign(authors_system=system)


def beside_table3(wide: pd.DataFrame) -> pd.DataFrame:
    """``rtp_detox.table3_wide`` (method, exp_max_toxicity_<class>, toxicity_probability_<class>) with each method's
    counterpart in the authors' notebook (``FOR_METHOD``) beside every value as ``<column>_authors``, in the paper's
    column order, and the counterpart's name as authors_system. A method without a counterpart gets NaN."""
    out = wide.copy()
    out["authors_system"] = out["method"].map(FOR_METHOD)
    order = ["method"]
    for column in wide.columns.drop("method"):
        measure, prompt_class = column.rsplit("_", 1)
        out[f"{column}_authors"] = [authors_value(s, prompt_class, measure) if isinstance(s, str) else NAN
                                    for s in out["authors_system"]]
        order += [column, f"{column}_authors"]
    return out[order + ["authors_system"]]


def beside_methods(long: pd.DataFrame) -> pd.DataFrame:
    """Long rows (method, prompt_class, and any of ``AUTHOR_COLUMNS``; ``rtp.table2(..., by="method")``) with the
    authors' value of each method's counterpart (``FOR_METHOD``) and prompt class beside each of those columns as
    ``<column>_authors`` (NaN for a method without a counterpart or a value the notebook does not show)."""
    out = long.copy()
    systems = out["method"].map(FOR_METHOD)
    for column in [c for c in AUTHOR_COLUMNS if c in long]:
        out[f"{column}_authors"] = [authors_value(s, c, column) if isinstance(s, str) else NAN
                                    for s, c in zip(systems, out["prompt_class"])]
    return out
