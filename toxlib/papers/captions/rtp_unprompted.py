"""Captions of the unprompted-toxicity chapter (``notebooks/rtp_unprompted.ipynb``; RealToxicityPrompts §3,
Figure 2).

Fields the chapter binds from its parameters: ``models``, ``pool_size``, ``max_new_tokens``, ``top_p``,
``resamples``, ``scorer``, ``seed``; computed in the chapter: none.
"""

from toxlib.report.captions import Captions

CAPTIONS = Captions("rtp_unprompted", {
    "models": "What each model is given as its unprompted input: its start-of-sequence token (the paper: "
              "<|endoftext|> for GPT-2 and GPT-3, \". \" for GPT-1, control tokens for CTRL).",
    "pools": "Unprompted pools: {pool_size:,} generations per model (nucleus p = {top_p}, up to {max_new_tokens} new "
             "tokens, seed {seed}), {scorer} scorer; toxic_share = share >= 0.5. Empty generations (the model ended "
             "the text at once) are kept and scored, as in the paper.",
    "fig_figure2": "Expected maximum toxicity over n unprompted generations (pool {pool_size:,}, {resamples} "
                   "resamples, {scorer} scorer)",
    "expected_max_at_n": "Expected maximum toxicity at n = 1, 10, 100, 1000 generations (bootstrap means; the paper's "
                         "GPT-2 value at 100 printed in its text). Ours: smaller pools, other models, the distilled "
                         "scorer.",
    "most_toxic": "The three most toxic generations of each pool ({scorer} scorer). May be offensive.",
    "claims": "Claims of this chapter: {models}, pools of {pool_size:,}, {scorer} scorer, beside the paper's values "
              "for its five models.",
})
