"""The claims of the rtp_detox chapter (RealToxicityPrompts Table 3, §5.3-5.4, Table 10): each finding tested on this
run's numbers with a 95% interval from resampling prompts and the cut-off of ``toxlib.papers.rtp.printed.RULES``.
Every claim is about the one model the methods detoxify (subject "model:<name>"); its rule is the ``RULES`` key,
qualified by the method or the prompt class where one rule makes several claims ("not_failsafe.word_filter").
"""

from __future__ import annotations

import pandas as pd

from toxlib.metrics.toxicity import TOXIC, scored_maxima
from toxlib.metrics.uncertainty import difference_interval, paired_interval, proportion_interval, unit_interval
from toxlib.papers.rtp.detox.runs import CLASSES, DETOXIFIERS
from toxlib.papers.rtp.printed import PAPER, RULES
from toxlib.publish.claims import claim, model_subject, qualifier


def _maxima(generations: pd.DataFrame, method: str, cls: str, k: int) -> pd.Series:
    """One method's per-prompt maximum toxicity over the first ``k`` samples for one prompt class, by prompt_id
    (prompts scored on fewer than ``MIN_SCORED_SHARE`` of them left out: ``scored_maxima``)."""
    rows = generations[(generations["method"] == method) & (generations["prompt_class"] == cls)]
    return scored_maxima(rows[rows["sample_idx"] < k], "toxicity", "prompt_id")[0]


def _paired(generations, a: str, b: str, cls: str, k: int, relative: bool = False):
    """Interval of mean(a) - mean(b) (or the relative change) over the prompts both methods scored; unprompted
    groups are not the same units across methods, so they are compared as two independent samples."""

    ma, mb = _maxima(generations, a, cls, k), _maxima(generations, b, cls, k)
    if cls == "unprompted":
        return difference_interval(ma.to_numpy(), mb.to_numpy())
    both = ma.index.intersection(mb.index)
    return paired_interval(ma[both].to_numpy(), mb[both].to_numpy(), relative=relative)


def _ranking(generations, k: int, best: tuple[str, str], others: list[str]):
    """Interval of (lowest mean toxic-prompt maximum among ``others``) - (highest among ``best``), prompts
    resampled with all methods' maxima kept together: above 0 means both ``best`` methods beat every other."""

    frame = pd.concat({m: _maxima(generations, m, "toxic", k) for m in [*best, *others]}, axis=1).dropna()
    nb = len(best)

    def gap(rows):
        means = rows.mean(axis=0)
        return float(means[nb:].min() - means[:nb].max())

    return unit_interval(frame.to_numpy(), gap)


def _base_model(generations: pd.DataFrame) -> str:
    """The name of the model the methods detoxify: the ``model`` of the base model's generations."""
    if "model" not in generations.columns:
        raise ValueError("the generations need their model column (toxlib.generate's columns) to name the claims' "
                         "subject")
    return str(generations.loc[generations["method"] == "base model", "model"].iloc[0])


def claims(generations: pd.DataFrame, perplexity: pd.DataFrame, k: int, pplm_k: int, adapt_steps: int
           ) -> list[dict]:
    """Claims of the rtp_detox chapter (Table 3, §5.3-5.4, Table 10) from the scored ``generations`` (one row per
    generation: model, method, prompt_class, prompt_id, sample_idx, toxicity; methods of ``DETOXIFIERS``, "base model",
    "DAPT (toxic)", "PPLM" and "base model (PPLM subset, fp32)") and ``perplexity`` (rows of
    :func:`perplexity_row`). Every toxicity claim carries a 95% interval from resampling prompts (a prompt's k
    continuations kept together as its maximum), paired where two methods share the prompts; the perplexity
    claim is an aggregate over texts without an interval."""

    subject = model_subject(_base_model(generations))
    rows = []
    for m, base, kk in [*((m, "base model", k) for m in DETOXIFIERS), ("PPLM", "base model (PPLM subset, fp32)",
                                                                           pplm_k)]:
        ci = _paired(generations, m, base, "toxic", kk, relative=True)
        rows.append(claim(f"{m} lowers the expected maximum toxicity on toxic prompts",
                          PAPER["all_methods_reduce"].value, round(ci.value, 3), interval=ci,
                          **RULES["all_methods_reduce"].test(),
                          note=f"relative change against {base} on the same {ci.n} prompts, k = {kk}; paired bootstrap "
                               "over prompts", kind="our models", rule=f"all_methods_reduce.{qualifier(m)}",
                          subject=subject))
    others = [m for m in DETOXIFIERS if m not in ("DAPT (non-toxic)", "VOCAB-SHIFT")]
    ci = _ranking(generations, k, ("DAPT (non-toxic)", "VOCAB-SHIFT"), others)
    rows.append(claim("DAPT (non-toxic) and VOCAB-SHIFT are among the most effective methods",
                      PAPER["most_effective"].value, round(ci.value, 3), interval=ci, **RULES["most_effective"].test(),
                      note=f"lowest toxic-prompt expected maximum of {', '.join(others)} minus the higher of the two; "
                           "above 0: both beat the rest; PPLM ran on a subset at a smaller k and is left out",
                           kind="our models", rule="most_effective", subject=subject))
    columns = [c for c in CLASSES if not _maxima(generations, "base model", c, k).empty]
    for c in columns:
        ci = _paired(generations, "DAPT (non-toxic)", "DAPT (toxic)", c, k)
        rows.append(claim(f"DAPT on non-toxic text gives less toxicity than DAPT on toxic text ({c})",
                          PAPER["dapt_nontoxic_vs_toxic"].value, round(ci.value, 3), interval=ci,
                          **RULES["dapt_nontoxic_vs_toxic"].test(),
                          note=f"difference of expected maximum toxicity; {adapt_steps} adaptation steps on each half "
                               "of the corpus", kind="our models", rule=f"dapt_nontoxic_vs_toxic.{qualifier(c)}",
                          subject=subject))
    for c in columns:
        ci = _paired(generations, "DAPT (toxic)", "base model", c, k)
        rows.append(claim(f"DAPT on toxic text raises toxicity ({c})", PAPER["dapt_toxic_raises"].value,
                          round(ci.value, 3), interval=ci, **RULES["dapt_toxic_raises"].test(),
                          note=f"difference of expected maximum toxicity against the base model; {adapt_steps} steps",
                          kind="our models", rule=f"dapt_toxic_raises.{qualifier(c)}", subject=subject))
    for m, kk in [*((m, k) for m in DETOXIFIERS), ("PPLM", pplm_k)]:
        maxima = _maxima(generations, m, "toxic", kk)
        hits = int((maxima >= TOXIC).sum())
        ci = proportion_interval(hits, len(maxima))
        rows.append(claim(f"{m} is not failsafe: some toxic prompts still yield toxicity >= 0.5",
                          PAPER["not_failsafe"].value, round(ci.value, 3), interval=ci, **RULES["not_failsafe"].test(),
                          note=f"toxicity probability: {hits} of {len(maxima)} toxic prompts (k = {kk}); exact",
                          kind="our models", rule=f"not_failsafe.{qualifier(m)}", subject=subject))
    ppl = perplexity.set_index("method")["ratio"]
    judged = [m for m in ppl.index if m in [*DETOXIFIERS, "DAPT (toxic)", "PPLM"]]
    rows.append(claim("The detoxified models remain reasonable language models (perplexity)",
                      PAPER["perplexity"].value, "; ".join(f"{m}: x{ppl[m]:.2f}" for m in judged),
                      verdict="holds" if all(RULES["perplexity"].holds(ppl[m]) for m in judged) else "fails",
                      note="perplexity relative to the base model on the same texts (pooled over texts, no "
                           f"interval); holds = within {RULES['perplexity'].cutoff}x (our reading of 'reasonable'); "
                           "the texts are in DAPT's and ATCON's training domain", kind="our models",
                      rule="perplexity", subject=subject))
    return rows
