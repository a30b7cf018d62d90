"""What the rtp_detox exercise solutions quote, {glue key: text} for myst-nb glue (``toxlib.publish.glue``), computed
from the chapter's tables so that the text always states this run's numbers (keys "detox-").
"""

from __future__ import annotations

import pandas as pd

from toxlib.papers.rtp.detox.runs import CLASSES
from toxlib.papers.rtp.prompted_toxicity import table2 as rtp_table2
from toxlib.publish.claims import qualifier, rule_of


def exercise_prose(scored: pd.DataFrame, perplexity: pd.DataFrame, claim_rows: list[dict], k: int, pplm_k: int
                   ) -> dict[str, str]:
    """The rtp_detox exercises' figures and phrases, {glue key: text} (keys start with "detox-"), from the scored
    generations of the main methods (``scored``: method, prompt_class, prompt_id, sample_idx, toxicity; k samples
    per prompt), the ``perplexity`` table, the chapter's ``claim_rows`` and PPLM's samples per prompt."""
    small = min(5, k)
    at = {kk: rtp_table2(scored, kk, by="method").set_index(["method", "prompt_class"]) for kk in (k, small)}
    emt = {kk: t["exp_max_toxicity"] for kk, t in at.items()}
    prob = at[k]["toxicity_probability"]
    classes = [c for c in CLASSES if ("base model", c) in emt[k].index]
    methods = list(dict.fromkeys(scored["method"]))
    swapped = [f"{a} and {b}" for i, a in enumerate(methods) for b in methods[i + 1:]
               if (emt[k][a, "toxic"] > emt[k][b, "toxic"]) != (emt[small][a, "toxic"] > emt[small][b, "toxic"])]
    n = at[k]["n_prompts"]

    def trio(method, values, fmt):  # "0.778, 0.537 and 0.443": one value per class, in CLASSES order
        texts = [format(values[method, c], fmt) for c in classes]
        return ", ".join(texts[:-1]) + " and " + texts[-1] if len(texts) > 1 else texts[0]

    dapt, base = "DAPT (non-toxic)", "base model"
    pairs = [(f"expected maximum toxicity ({c})", emt[k][dapt, c], emt[k][base, c]) for c in classes] \
        + [(f"toxicity probability ({c})", prob[dapt, c], prob[base, c]) for c in classes]
    above, below = sum(d > b for _, d, b in pairs), sum(d < b for _, d, b in pairs)
    where = {n: " in every column" if n == len(pairs) else " in more columns than not" for n in (above, below)}
    found = next(r for r in claim_rows if rule_of(r["id"]) == f"all_methods_reduce.{qualifier(dapt)}")
    ppl = perplexity.set_index("method")
    # how far apart two methods must be on toxic prompts to be told apart: the median half-width of the paired
    # intervals of the "lowers ... on toxic prompts" claims
    widths = [(float(r["ci_high"]) - float(r["ci_low"])) / 2 for r in claim_rows
              if rule_of(r["id"]).startswith("all_methods_reduce.")
              and pd.notna(r.get("ci_low")) and pd.notna(r.get("ci_high"))]
    half_width = float(pd.Series(widths).median()) if widths else float("nan")
    return {f"detox-{key}": value for key, value in {
        "k": str(k), "small-k": str(small), "pplm-k": str(pplm_k),
        "classes": ", ".join(classes[:-1]) + " and " + classes[-1],
        "base-emt": trio(base, emt[k], ".3f"), "base-prob": trio(base, prob, ".2f"),
        "word-emt": trio("WORD FILTER", emt[k], ".3f"),
        "base-toxic-k": f"{emt[k][base, 'toxic']:.3f}", "base-toxic-small": f"{emt[small][base, 'toxic']:.3f}",
        "word-toxic-k": f"{emt[k]['WORD FILTER', 'toxic']:.3f}",
        "word-toxic-small": f"{emt[small]['WORD FILTER', 'toxic']:.3f}",
        "rises": str(int((emt[small] > emt[k] + 1e-12).sum())),
        "swapped": (f"{len(swapped)} of {len(methods) * (len(methods) - 1) // 2} pairs of methods change order on "
                    f"toxic prompts ({'; '.join(swapped)})" if swapped else
                    f"no pair of the {len(methods)} methods changes order on toxic prompts"),
        "n-toxic": f"{int(n[base, 'toxic']):,}", "step-toxic": f"{1 / n[base, 'toxic']:.3g}",
        "toxic-half-width": f"{half_width:.3f}",
        "dapt-vs-base": "; ".join(f"{name} {d:.3f} against {b:.3f}" for name, d, b in pairs),
        "dapt-above": f"{above} of {len(pairs)}",
        "dapt-verdict": found["verdict"], "dapt-change": f"{float(found['our_value']):+.3f}",
        "dapt-interval": (f"{found['ci_low']:.3f} to {found['ci_high']:.3f}" if found.get("ci_low") is not None
                          else "none"),
        "dapt-to-decide": (("about {:,} prompts would be needed to decide it".format(int(found["n_to_decide"]))
                            if found.get("n_to_decide") else "no sample-size estimate is available (no effect "
                            "measured)") if found["verdict"] == "undecided" else "no larger sample is needed"),
        "dapt-reading": (
            f"It is more toxic than the base model{where[above]}, the opposite of the paper's finding. A likely "
            "reason: the base model is SmolLM2-135M-Instruct, tuned towards polite assistant text, and a few LoRA "
            "steps on web text pull it back towards web text, which is more toxic than its assistant register even "
            "when Perspective scored the documents non-toxic; the paper adapted GPT-2, a web-text model, so there "
            "the same training only removed toxicity"
            if above > below else
            f"It is less toxic than the base model{where[below]}, as in the paper" if below > above else
            "It is above the base model in as many columns as below it: no direction to set beside the paper's"),
        "ppl-direction": ("below the base model's: continued pretraining on that kind of text makes it more "
                          "predictable to the adapted model" if ppl.loc[dapt, "ratio"] < 1 else
                          "at or above the base model's"),
        "dapt-ppl-ratio": f"{ppl.loc[dapt, 'ratio']:.2f}", "dapt-ppl": f"{ppl.loc[dapt, 'perplexity']:.1f}",
        "base-ppl": f"{ppl.loc[base, 'perplexity']:.1f}"}.items()}
