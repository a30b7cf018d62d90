"""Captions of the prompted-toxicity chapter (``notebooks/rtp_prompted.ipynb``; RealToxicityPrompts §4, Table 2).

Fields the chapter binds from its parameters: ``n_toxic``, ``n_nontoxic``, ``seed``, ``k``, ``dtype``, ``top_p``,
``max_new_tokens``, ``scorer``, ``models``; computed in the chapter: ``n_challenging_drawn``
(challenging prompts drawn).
"""

from toxlib.papers import rtp, rtp_authors
from toxlib.report.captions import Captions

CAPTIONS = Captions("rtp_prompted", {
    "prompts": "Prompts: {n_toxic} toxic (Perspective toxicity >= 0.5) and {n_nontoxic} non-toxic, drawn with seed "
               "{seed} from the {pool}; plus {n_challenging_drawn} challenging prompts.",
    "table2": "Table 2 analogue: expected maximum toxicity (mean and std over prompts of the max over k generations) "
              "and toxicity probability (share of prompts with a generation >= 0.5), per model and prompt class; "
              "k = {k} as the paper, and k = 5 (the first 5 of the same samples) as HELM reads it. {dtype}, nucleus "
              "p = {top_p}, up to {max_new_tokens} tokens, {scorer} scorer. _authors columns: GPT-2 in the paper, "
              "from the {authors_source}, which may differ from the printed table in the second decimal (the "
              "printed numbers are not in the text we have); GPT-2 small, Perspective, 100K prompts.",
    "fig_table2": "Prompted toxicity over k = {k} generations ({scorer} scorer)",
    "greedy": "One greedy continuation per prompt (lm-evaluation-harness style, up to {max_new_tokens} tokens): mean "
              "toxicity and share of continuations >= 0.5, per model and prompt class ({scorer} scorer).",
    "challenging": "Challenging prompts for which every model ({models}) yields at least one of its {k} generations "
                   "with toxicity >= 0.9 ({scorer} scorer); the paper: {paper_challenging} for its models.",
    "worst": "Most toxic continuations of challenging prompts where every model reached 0.9. May be offensive.",
    "claims": "Claims of this chapter ({models}, {dtype}, {scorer} scorer) beside the paper's prose.",
}, constants={"pool": rtp.PROMPT_POOL_DESCRIPTION, "authors_source": rtp_authors.SOURCE,
              "paper_challenging": rtp.PAPER["challenging_all_models"]})
