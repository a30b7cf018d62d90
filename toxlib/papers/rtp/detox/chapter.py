"""The rtp_detox chapter (``notebooks/rtp_detox.ipynb``; RealToxicityPrompts §5, Table 3; Appendix Table 10)
computed: ``compute(values, models)`` returns its ``ChapterResult``.

The split (evaluation prompts, labelled corpus, perplexity texts); each method trained or read from the cache
(VOCAB-SHIFT's weights, PPLM's discriminator, DAPT and ATCON by continued pretraining); every method's scored
generations for the same prompts (``generations``), Table 3 in the paper's layout with the authors' values
(``table3``, its long form and its bars), perplexity of held-out text under each method, the worst continuations,
the claims and the numbers the exercises quote. ``values``: every parameter of ``toxlib/chapters/rtp_detox.py``,
checked; ``models``: a ``toxlib.models.source.Models``.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate import RTP_SAMPLING
from toxlib.models.source import Models
from toxlib.papers.rtp import authors
from toxlib.papers.rtp.detox.captions import CAPTIONS
from toxlib.papers.rtp.detox.paper_claims import claims
from toxlib.papers.rtp.detox.perplexity import perplexity_table
from toxlib.papers.rtp.detox.prose import exercise_prose
from toxlib.papers.rtp.detox.runs import method_runs, scored_run, training_row
from toxlib.papers.rtp.detox.split import detox_split
from toxlib.papers.rtp.detox.table3 import table3_wide, worst_continuations
from toxlib.papers.rtp.detox.weights import discriminator, vocab_shift_weights
from toxlib.papers.rtp.prompted_toxicity import table2
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult
from toxlib.steer.adapt import AdaptConfig, adapt, training_metadata
from toxlib.steer.pplm import PPLM
from toxlib.steer.vocab_shift import top_tokens

#: the methods trained by continued pretraining: their corpus's label (None: the whole corpus) and recipe
ADAPTED = {"DAPT (non-toxic)": (0, "dapt"), "DAPT (toxic)": (1, "dapt"), "ATCON": (None, "atcon")}
#: the rows of the expected maximum per prompt class the chapter shows
BY_CLASS = ["DAPT (non-toxic)", "DAPT (toxic)", "base model"]


def adapted_models(base32, corpus: pd.DataFrame, steps: int, seed: int, dtype: str) -> tuple[dict, pd.DataFrame]:
    """({method: its continued-pretrained model, trained once from the float32 weights (or read from the cache)
    and loaded in ``dtype``}, the training table: one row per method)."""
    adapted, training = {}, []
    for method, (label, kind) in ADAPTED.items():
        texts = corpus if label is None else corpus[corpus["toxic"] == label]
        recipe = AdaptConfig(method=kind, max_steps=steps, seed=seed)
        adapted[method] = adapt(base32, texts, recipe, dtype=dtype)
        training.append(training_row(method, training_metadata(base32, texts, recipe), recipe.batch_size))
    return adapted, pd.DataFrame(training)


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("rtp_detox", v)
    caption = CAPTIONS.bind(**v)
    seed, scorer, k, pplm_k = v["seed"], v["scorer"], v["k"], v["pplm_k"]
    config = RTP_SAMPLING.with_(num_samples=k, max_new_tokens=v["max_new_tokens"], top_p=v["top_p"], seed=seed)
    split = detox_split(v["n_toxic"], v["n_nontoxic"], v["n_perplexity"], seed, max_corpus=v["corpus_size"] or None)
    base = models(v["model"], dtype=v["dtype"])
    base32 = models(v["model"], dtype="float32")
    out.add_table("split", split.summary(), caption(
        "split", unseen_by_scorer=caption("note_unseen_by_distilled") if scorer == "distilled" else ""))

    vs_weights = vocab_shift_weights(base, split.corpus, beta=v["beta"], max_texts=v["vocab_shift_texts"] or None,
                                     seed=seed)
    out.add_table("vocab_shift", top_tokens(vs_weights, base.tokenizer, k=10),
                  caption("vocab_shift", n_vocab_shift_texts=vs_weights.meta.get("n_texts", "the")), file=False)
    disc = discriminator(base32, split.corpus, max_texts=v["discriminator_texts"] or None, seed=seed)
    out.add_table("discriminator", pd.DataFrame([{key: disc.meta.get(key) for key in
                                                  ("n_train", "n_valid", "train_accuracy", "valid_accuracy")}]),
                  caption("discriminator"), file=False)
    adapted, training = adapted_models(base32, split.corpus, v["adapt_steps"], seed, v["dtype"])
    out.add_table("training", training, caption("training"))

    runs = method_runs(base, adapted, vs_weights, v["beta"])
    scored = pd.concat([scored_run(lm, method, split, steering, k, v["n_unprompted"], config, scorer)
                        for method, (lm, steering) in runs.items()], ignore_index=True)
    subset = split.prompts.groupby("prompt_class", sort=False).head(v["pplm_prompts"])
    pplm = PPLM(disc, step_size=v["pplm_step_size"])
    scored_pplm = pd.concat([scored_run(base32, method, split, steering, pplm_k, 1, config, scorer,
                                        prompt_subset=subset)
                             for method, steering in (("base model (PPLM subset, fp32)", None), ("PPLM", pplm))],
                            ignore_index=True)
    all_scored = pd.concat([scored, scored_pplm], ignore_index=True)
    out.add_table("generations", all_scored.drop(columns=["scorer", "version"]), compress=True, shown=False)
    long3 = pd.concat([table2(scored, k, by="method"), table2(scored_pplm, pplm_k, by="method")], ignore_index=True)
    out.add_table("table3_long", long3, shown=False)
    out.add_table("table3", authors.beside_table3(table3_wide(long3)),  # the authors' values beside ours
                  caption("table3", vocab_shift_texts=v["vocab_shift_texts"] or "all"))
    bars = (authors.beside_methods(long3[long3["prompt_class"] != "unprompted"])
            .assign(group=lambda t: t["method"] + " / " + t["prompt_class"]))
    out.add_figure("table3", lambda: plots.grouped_bars(bars, "group", authors.BAR_LABELS, caption("fig_table3"),
                                                        "toxicity (0-1)", references=authors.BESIDE_COLUMNS,
                                                        reference_label="the paper's counterpart (GPT-2)"))
    by_class = long3.pivot_table(index="method", columns="prompt_class", values="exp_max_toxicity", sort=False)
    out.add_table("exp_max_by_class", by_class.loc[BY_CLASS].reset_index(), caption("exp_max_by_class"), file=False)

    pplm_perplexity = v["pplm_perplexity"]
    perplexity = out.add_table("perplexity", perplexity_table(runs, base, base32, split.perplexity_texts, pplm,
                                                              pplm_perplexity),
                               caption("perplexity", pplm_perplexity_note=(
                                   caption("note_pplm_perplexity") if pplm_perplexity
                                   else caption("note_no_pplm_perplexity"))))
    out.add_table("worst", worst_continuations(all_scored).round(3), caption("worst"), file=False)
    claim_rows = claims(all_scored, perplexity, k, pplm_k, v["adapt_steps"])
    out.add_claims(claim_rows, caption("claims"))
    out.add_prose(exercise_prose(scored, perplexity, claim_rows, k, pplm_k))
    return out
