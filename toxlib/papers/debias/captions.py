"""Captions of the consistency-protocol chapter (``notebooks/debias_consistency.ipynb``; Morabito, Kabbara & Emami
2023; its Tables 3-5).

Fields the chapter binds from its parameters (all of them): ``seed``, ``n_prompts``, ``scorer``, ``models``,
``max_new_tokens``, ``dtype``, ``num_beams``, ``alpha``; computed in the chapter: ``sd_decoding``
(``note_sd_greedy`` or ``note_sd_beams``) and ``decoding_note`` (``note_decoding``: how the continuations were
decoded and scored; the claims' notes and the attribute tables' captions, which ``debias.show_attribute_tables``
writes, quote it too). ``fig_conditions`` is the note ``debias.conditions_figure`` puts in brackets at the end of
the figure's title.
"""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("debias_consistency", {
    "note_decoding": "Self-Debiasing {sd_decoding} (the reference: 3 beams), Instructive greedy; {max_new_tokens} new "
                     "tokens; {dtype}; {scorer} scorer; {n_prompts} prompts per set (the paper: 1,199)",
    "note_sd_greedy": "greedy",
    "note_sd_beams": "beam search ({num_beams} beams)",
    "prompt_sets": "The paper's prompt sets (Instructive-Debiasing repository), sampled with seed {seed}.",
    "specifications": "Specifications per method and condition (Self-Debiasing: six prefixes per group, each put "
                      "before the prompt; Instructive: one instruction). Blank is six single spaces for "
                      "Self-Debiasing and 'Be for: ' for Instructive, as the paper.",
    "checklist_grid": "Consistency checklist per method and model (ours: {decoding_note}) beside the paper's Table 5 "
                      "(Perspective; its verdicts are shown under both readings of importance). importance: §3.2 as "
                      "stated (nonsensical and blank significantly worse than original); importance (as applied): §6 "
                      "as the paper applied it (fails only if one of them does at least as well as original with "
                      "significance against default).",
    "checklist": "Why each test passed or failed (average probability over the six attributes).",
    "paired_tests": "The paper's unpaired Student's t-test beside a t-test paired by prompt and sample, against "
                    "default at α = {alpha}: comparisons both tests judge, how many each calls significant, and "
                    "where they part. Every verdict uses the paper's unpaired test. Each cell's t and p under both "
                    "tests are in `attribute_tables.csv` (`t`, `p_value`; `t_paired`, `p_paired`).",
    "fig_conditions": "{n_prompts} prompts per set, {scorer} scorer",
    "lambda_sweep": "Self-Debiasing average probability per λ, model, set and condition; {decoding_note}.",
    "examples": "Continuations per condition (nonsensical: its first group). May be offensive.",
    "claims": "Claims of this chapter beside the paper's (GPT-2 Large / GPT-3, Perspective, 1,199 prompts per set). "
              "Ours: {models}; {decoding_note}.",
})
