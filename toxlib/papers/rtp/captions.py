"""Captions of the RealToxicityPrompts chapters' tables and figures, each a ``toxlib.publish.captions.Captions``
filled with the run's values in its chapter (rtp_detox's are in ``detox.captions``).

``UNPROMPTED``: ``notebooks/rtp_unprompted.ipynb`` (RealToxicityPrompts §3, Figure 2). Fields the chapter binds from
its parameters: ``models``, ``pool_size``, ``max_new_tokens``, ``top_p``, ``resamples``, ``scorer``, ``seed``;
computed in the chapter: none.

``PROMPTED``: ``notebooks/rtp_prompted.ipynb`` (RealToxicityPrompts §4, Table 2). Fields the chapter binds from its
parameters: ``n_toxic``, ``n_nontoxic``, ``seed``, ``k``, ``dtype``, ``top_p``, ``max_new_tokens``, ``scorer``,
``models``; computed in the chapter: ``n_challenging_drawn`` (challenging prompts drawn).
"""

from toxlib.papers.rtp.authors import SOURCE as AUTHORS_SOURCE
from toxlib.papers.rtp.printed import PAPER
from toxlib.papers.rtp.prompts import PROMPT_POOL_DESCRIPTION
from toxlib.publish.captions import Captions

UNPROMPTED = Captions("rtp_unprompted", {
    "models": "What each model is given as its unprompted input: its start-of-sequence token (the paper: "
              "<|endoftext|> for GPT-2 and GPT-3, \". \" for GPT-1, control tokens for CTRL).",
    "pools": "Unprompted pools: {pool_size:,} generations per model (nucleus p = {top_p}, up to {max_new_tokens} new "
             "tokens, seed {seed}), {scorer} scorer; share toxic: the share scoring >= 0.5. Empty generations (the "
             "model ended the text at once) are kept and scored, as in the paper.",
    "fig_figure2": "Expected maximum toxicity over n unprompted generations (pool {pool_size:,}, {resamples} "
                   "resamples, {scorer} scorer)",
    "expected_max_at_n": "Expected maximum toxicity at n = 1, 10, 100, 1000 generations: bootstrap means over "
                         "{resamples} resamples, which the claims below replace by the exact expectation over the "
                         "pool (they can differ in the third decimal); the paper's GPT-2 value at 100 printed in its "
                         "text. Ours: smaller pools, other models, the distilled scorer.",
    "most_toxic": "The three most toxic generations of each pool ({scorer} scorer). May be offensive.",
    "claims": "Claims of this chapter: {models}, pools of {pool_size:,}, {scorer} scorer, beside the paper's values "
              "for its five models.",
})

PROMPTED = Captions("rtp_prompted", {
    "prompts": "Prompts: {n_toxic} toxic (Perspective toxicity >= 0.5) and {n_nontoxic} non-toxic, drawn with seed "
               "{seed} from the {pool}; plus {n_challenging_drawn} challenging prompts.",
    "table2": "Table 2 analogue: expected maximum toxicity (mean and std over prompts of the max over k generations) "
              "and toxicity probability (share of prompts with a generation >= 0.5), per model and prompt class; "
              "k = {k} as the paper, and k = 5 (the first 5 of the same samples) as HELM reads it. {dtype}, nucleus "
              "p = {top_p}, up to {max_new_tokens} tokens, {scorer} scorer. Columns under 'authors': GPT-2 in the "
              "paper, from the {authors_source}, which may differ from the printed table in the second decimal (the "
              "printed numbers are not in the text we have); GPT-2 small, Perspective, 100K prompts.",
    "fig_table2": "Prompted toxicity over k = {k} generations ({scorer} scorer)",
    "greedy": "One greedy continuation per prompt (lm-evaluation-harness style, up to {max_new_tokens} tokens): mean "
              "toxicity and share of continuations >= 0.5, per model and prompt class ({scorer} scorer).",
    "challenging": "Challenging prompts for which every model ({models}) yields at least one of its {k} generations "
                   "with toxicity >= 0.9 ({scorer} scorer); the paper: {paper_challenging} for its models.",
    "worst": "Most toxic continuations of challenging prompts where every model reached 0.9. May be offensive.",
    "claims": "Claims of this chapter ({models}, {dtype}, {scorer} scorer) beside the paper's prose.",
}, constants={"pool": PROMPT_POOL_DESCRIPTION, "authors_source": AUTHORS_SOURCE,
              "paper_challenging": PAPER["challenging_all_models"]})
