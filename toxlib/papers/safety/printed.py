"""What the safety-score paper printed ("An empirical study of metrics to measure representational harms in
pre-trained language models", seed paper 004), and how each claim in its words becomes a test on a number.

Its Tables 8, 9, 10 and 13 are data files beside this module (``table8.csv`` ...: one row per model, the paper's
numbers as printed), read by pandas into ``PAPER_TABLE8`` ...; chapters put the paper's rows beside ours and
recompute the paper's own correlations from them (``paper_correlations``). ``PAPER`` holds each value with the
table it comes from (``toxlib.papers.printed.Printed``), ``RULES`` the cut-off that decides each claim.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd
from scipy.stats import pearsonr

from toxlib.papers.printed import Printed, Rule
from toxlib.publish.headers import header

#: ToxiGen target-group keys (as in the data) -> the paper's column names, in the paper's order.
GROUPS = {
    "asian": "Asian", "black": "Black", "chinese": "Chinese", "jewish": "Jewish", "latino": "Latino",
    "lgbtq": "LGBTQ", "mental dis": "Mentally disabled", "mexican": "Mexican", "middle-eastern": "Middle Eastern",
    "muslim": "Muslim", "native-american": "Native American", "physical dis": "Physically disabled",
    "women": "Women",
}


def _printed_table(name: str) -> pd.DataFrame:
    """A printed table, one row per model as the paper prints it: ``<name>.csv`` beside this module, numbers read
    exactly as written (``float_precision="round_trip"``)."""
    with resources.files("toxlib.papers.safety").joinpath(f"{name}.csv").open(encoding="utf-8") as f:
        return pd.read_csv(f, float_precision="round_trip")


#: Table 8: safety score per PTLM (24 rows) and demographic (13 columns, data keys as in GROUPS).
PAPER_TABLE8 = _printed_table("table8")
#: Table 9: log-perplexity mean and sd of benign and harmful ToxiGen sentences per PTLM.
PAPER_TABLE9 = _printed_table("table9")
#: Table 10: safety score on the ImplicitHate subset per PTLM.
PAPER_TABLE10 = _printed_table("table10")
#: Table 13: architecture and average safety score (19 PTLMs).
PAPER_TABLE13 = _printed_table("table13")


#: The GPT-2 family rows, the paper's models closest to the causal LMs run here.
PAPER_GPT2 = ["GPT-2-xl", "GPT-2-large", "GPT-2-medium", "GPT-2", "DistilGPT-2"]


#: Every value of the paper the chapter (and the datasets chapter, ``toxlib.studies.datasets``) uses, with the table
#: or section it comes from (PAPER_TABLE8 ... are the same frames).
PAPER = {
    "table8": Printed(PAPER_TABLE8, "Table 8"),
    "table9": Printed(PAPER_TABLE9, "Table 9"),
    "table10": Printed(PAPER_TABLE10, "Table 10"),
    "table13": Printed(PAPER_TABLE13, "Table 13"),
    "max_group_score": Printed("max 0.497 (24 PTLMs)", "Table 8",
                               quote="the safety scores for all these groups are below 0.5",
                               derived="max 0.497: the largest safety score in Table 8"),
    "harmful_higher_perplexity": Printed("24 of 24", "Table 9",
                                         derived="Table 9: the harmful mean log-perplexity above the benign one in "
                                                 "each of its 24 rows"),
    # the datasets chapter
    "toxigen_size": Printed(6541, "§3.2 (the ToxiGen evaluation set)",
                            quote="our evaluation set reduced to 6541 sentences"),
    "toxigen_groups": Printed(13, "§3.2, Figure 1; Table 8's columns",
                              quote="benign sentences towards 13 marginalized demographics in our evaluation dataset"),
    "implicit_balance": Printed(0.5, "§4.5 (the ImplicitHate subset)",
                                quote="we down sampled the neutral examples to have equal number of harmful and benign "
                                      "examples",
                                derived="equal numbers of harmful and benign sentences: a harmful share of 0.5"),
}


#: How each claim of the safety-score chapter turns the paper's words into a test on a number (``Rule.printed``
#: names the PAPER value it reads).
RULES = {
    "max_group_score": Rule("max_group_score", 0.5, "below",
                            "'below 0.5': every demographic's safety-score interval below 0.5"),
    "harmful_higher_perplexity": Rule("harmful_higher_perplexity", 0.0, "above",
                                      "harmful minus benign mean log-perplexity above 0"),
    "toxigen_implicit_correlation": Rule("table13", 0.01, "within",
                                         "the correlation recomputed from the printed Tables 8 and 10 equals the "
                                         "printed one to 0.01 (the averages in Table 13 are rounded)"),
}


def paper_table8_long() -> pd.DataFrame:
    """The paper's Table 8 as rows (model, target_group, demographic, safety_score), for plots."""
    long = PAPER_TABLE8.melt(id_vars="model", var_name="target_group", value_name="safety_score")
    long["demographic"] = long["target_group"].map(GROUPS)
    return long


def paper_correlations() -> pd.DataFrame:
    """The paper's correlations recomputed from its printed tables: ToxiGen (mean of Table 8 over groups) vs
    ImplicitHate (Table 10) over its 24 PTLMs, and, per family with three or more variants in Table 13, the PCC
    of the average safety score with heads, layers and hidden size (its Table 4).
    Columns: correlation, paper_value, recomputed."""
    toxigen = PAPER_TABLE8.set_index("model").mean(axis=1)
    implicit = PAPER_TABLE10.set_index("model")["safety_score"].loc[toxigen.index]
    rows = [{"correlation": "ToxiGen vs ImplicitHate safety score (24 PTLMs)", "paper_value": 0.68,
             "recomputed": pearsonr(toxigen, implicit).statistic}]
    t13 = PAPER_TABLE13.assign(family=PAPER_TABLE13["model"].str.extract(r"^(GPT2|Albert|Electra)", expand=False))
    printed = {"GPT2": (-0.54, -0.55, -0.54), "Albert": (-0.61, 0.09, -0.83), "Electra": (-0.63, -0.63, -0.98)}
    for family, values in printed.items():
        g = t13[t13["family"] == family]
        for column, paper in zip(("heads", "layers", "hidden_size"), values):
            rows.append({"correlation": f"{family.upper()}: average safety score vs {header(column)} (Table 4)",
                         "paper_value": paper, "recomputed": pearsonr(g[column], g["average_safety_score"]).statistic})
    return pd.DataFrame(rows)
