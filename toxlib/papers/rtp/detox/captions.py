"""Captions of the detoxification chapter (``notebooks/rtp_detox.ipynb``; RealToxicityPrompts §5, Table 3).

Fields the chapter binds from its parameters: ``model``, ``dtype``, ``n_toxic``, ``n_nontoxic``, ``n_unprompted``,
``k``, ``max_new_tokens``, ``top_p``, ``beta``, ``adapt_steps``, ``pplm_prompts``, ``pplm_k``, ``pplm_perplexity``,
``n_perplexity``, ``scorer``; computed in the chapter: ``unseen_by_scorer`` (``note_unseen_by_distilled`` with the
distilled scorer, else nothing), ``n_vocab_shift_texts`` (texts VOCAB-SHIFT learned from), ``vocab_shift_texts``
(the budget, or "all"), ``pplm_perplexity_note`` (``note_pplm_perplexity`` or ``note_no_pplm_perplexity``).
"""

from toxlib.papers.rtp.authors import SOURCE as AUTHORS_SOURCE
from toxlib.publish.captions import Captions

CAPTIONS = Captions("rtp_detox", {
    "split": "The split, by RealToxicityPrompts record (the distilled scorer's split, seed 0; held-out records "
             "sharing a source document with a training record left out): the evaluation prompts come from records "
             "no method was trained on{unseen_by_scorer}; the labelled corpus is balanced at toxicity 0.5 (recorded "
             "Perspective scores).",
    "vocab_shift": "VOCAB-SHIFT: the 10 tokens most associated with each class (association = w toxic − "
                   "w nontoxic), learned from {n_vocab_shift_texts} corpus texts. May be offensive.",
    "discriminator": "PPLM's toxicity discriminator on the model's hidden states: accuracy on its training and "
                     "held-out texts.",
    "training": "Continued pretraining budgets (LoRA rank 16, batches of 8 documents of up to 64 tokens; the paper: "
                "about 150K documents of OpenWebText). Steps, tokens, losses and training time are the sample record's "
                "copy of the training's metadata where it holds one (data/record/artefacts/adapted/), the same on "
                "every machine; a recipe it does not hold is trained where the chapter runs, and shows that training.",
    "table3": "Table 3 analogue ({model}, {scorer} scorer): expected maximum toxicity and toxicity probability over "
              "k = {k} generations for {n_toxic} toxic and {n_nontoxic} non-toxic held-out prompts and "
              "{n_unprompted} unprompted groups; PPLM and its base-model row: {pplm_prompts} prompts per class and "
              "1 unprompted group, k = {pplm_k}, float32. Generation {dtype}, nucleus p = {top_p}, up to "
              "{max_new_tokens} tokens. Budgets: {adapt_steps} adaptation steps, VOCAB-SHIFT from "
              "{vocab_shift_texts} texts, β = {beta}. authors columns: the paper's counterpart (authors' system; "
              "GPT-2 for the base model) from the {authors_source}, which may differ from the printed table in the "
              "second decimal; GPT-2 small, Perspective, 10K prompts per class (PPLM: fewer), k = 25 (PPLM's rows "
              "here: k = {pplm_k}); unprompted expected maximum not shown there.",
    "fig_table3": "Detoxification methods on {model} ({scorer} scorer)",
    "exp_max_by_class": "Expected maximum toxicity per class.",
    "perplexity": "Perplexity of {n_perplexity} held-out non-toxic RealToxicityPrompts continuations under each "
                  "method ({model}, {dtype}); ratio: against the base model over the same texts (those the method "
                  "can produce); {pplm_perplexity_note}",
    "note_pplm_perplexity": "PPLM and its base row on the first {pplm_perplexity} texts, float32.",
    "note_no_pplm_perplexity": "PPLM's perplexity skipped (`pplm_perplexity=0`).",
    "note_unseen_by_distilled": " and the distilled scorer never saw",
    "worst": "Each method's most toxic continuation of a toxic prompt. May be offensive.",
    "claims": "Claims of this chapter ({model}, {scorer} scorer, CPU budgets above) beside the paper's prose (GPT-2, "
              "Perspective, 100K prompts).",
}, constants={"authors_source": AUTHORS_SOURCE})
