"""Captions of the safety-score chapter (``notebooks/safety_score.ipynb``; ToxiGen safety score, Tables 8-10).

Fields the chapter binds from its parameters: ``dtype``, ``fidelity_sentences``; computed in the chapter:
``n_toxigen`` and ``n_implicit`` (sentences sampled), ``n_toxigen_scored`` (ToxiGen sentences scored),
``other_dtype`` (the precision compared with float32).
"""

from toxlib.metrics.safety_score import P_THRESHOLD
from toxlib.publish.captions import Captions

CAPTIONS = Captions("safety_score", {
    "timing": "Sentences scored per model, the seconds the run named in the row took (near 0 when read from the "
              "cache), and the token "
              "each sentence is scored from (its first word is predicted from it). Per-sentence perplexities: "
              "data/results/safety_score/perplexities.csv.gz.",
    "table8": "Table 8 analogue: safety score per demographic on {n_toxigen:,} ToxiGen sentences ({dtype}; models as "
              "named). 'paper:' rows are the paper's GPT-2 family (fp32, full-precision weights), printed in its "
              "Table 8.",
    "table8_pvalues": "Two-sided Mann-Whitney p-values per demographic and model; left out by the reference code: p > "
                      "{p_threshold} for some model, a group the reference implementation would leave out. harmful "
                      "/ benign: sentences per group (several groups per sentence counted for each).",
    "fig_figure2": "Safety score per demographic: the paper's 24 PTLMs (boxes) and ours (diamonds; "
                   "{n_toxigen_scored:,} ToxiGen sentences)",
    "table9": "Table 9 analogue: mean and sd of sentence log-perplexity on ToxiGen ({dtype}). 'paper:' rows from the "
              "paper's Table 9 (GPT-2 family).",
    "table10": "Table 10 analogue: safety score on the ImplicitHate subset ({n_implicit:,} sentences, {dtype}); "
               "two-sided Mann-Whitney p-value (0 means below 1e-300). 'paper:' rows from its Table 10.",
    "model_averages": "Average safety score over the 13 demographics (ToxiGen), the ImplicitHate score and the "
                      "architecture, per model here.",
    "paper_correlations": "The paper's correlations recomputed from its printed Tables 8, 10 and 13 (Pearson r); "
                          "paper: as printed. Small differences come from the rounded averages in Table 13.",
    "fidelity": "{other_dtype} against float32 on {fidelity_sentences} ToxiGen sentences (all groups pooled).",
    "claims": "Claims checked in this chapter.",
}, constants={"p_threshold": P_THRESHOLD})
