"""How much results move between 1 and 2 CPU threads (issue 14, item 6): bitwise identity across machines is not
expected, since another thread count splits the matmuls' sums differently. Prints one JSON object.

Measured on the same inputs at torch.set_num_threads(1) and (2), cache off:
  - generation: RealToxicityPrompts sampling (25 samples, top-p 0.9, 20 tokens) of the first ``--prompts`` sample
    prompts with SmolLM2 in bf16: share of identical continuations, and the expected maximum toxicity and toxicity
    probability over the prompts (distilled scorer) at each thread count;
  - perplexity: ``sentence_nll`` of the first 300 ToxiGen sentences, SmolLM2 bf16: largest |difference| of a
    sentence's summed NLL, and Spearman between the two;
  - scoring: the distilled scorer (its default precision) on the generated texts: largest |difference|.

Usage: TOXLIB_DATA_MIRROR=../shared/data python scripts/thread_variation.py [--prompts 20]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch
from scipy.stats import spearmanr


def main() -> None:
    from toxlib.data import load_rtp, load_toxigen
    from toxlib.generate import RTP_SAMPLING, generate
    from toxlib.metrics import expected_max_toxicity, toxicity_probability
    from toxlib.models import load
    from toxlib.models.perplexity import sentence_nll
    from toxlib.scorers import get_scorer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=20)
    args = parser.parse_args()
    lm = load("smollm2-135m", dtype="bfloat16")
    scorer = get_scorer("distilled")
    prompts = load_rtp("sample")["prompt_text"].head(args.prompts).tolist()
    sentences = load_toxigen()["text"].head(300).tolist()
    runs = {}
    for threads in (2, 1):
        torch.set_num_threads(threads)
        gens = generate(lm, prompts, RTP_SAMPLING, cache=False, progress=False)
        scores = scorer.score(gens["continuation"].tolist(), cache=False, progress=False)["toxicity"].to_numpy()
        frame = gens.assign(toxicity=scores)
        runs[threads] = {"texts": gens["continuation"].tolist(), "scores": scores,
                         "emt": expected_max_toxicity(frame)["mean"],
                         "prob": toxicity_probability(frame)["probability"],
                         "nll": sentence_nll(lm, sentences)["nll_sum"].to_numpy()}
    one, two = runs[1], runs[2]
    same = float(np.mean([a == b for a, b in zip(one["texts"], two["texts"])]))
    rescored = scorer.score(two["texts"], cache=False, progress=False)["toxicity"].to_numpy()
    torch.set_num_threads(2)
    print(json.dumps({
        "model": "smollm2-135m", "dtype": "bfloat16", "prompts": len(prompts), "continuations": len(one["texts"]),
        "identical_continuations": round(same, 4),
        "expected_max_toxicity": {"threads_2": round(two["emt"], 4), "threads_1": round(one["emt"], 4)},
        "toxicity_probability": {"threads_2": round(two["prob"], 4), "threads_1": round(one["prob"], 4)},
        "nll_sentences": len(sentences),
        "nll_max_abs_diff": float(np.abs(one["nll"] - two["nll"]).max()),
        "nll_spearman": float(spearmanr(one["nll"], two["nll"]).statistic),
        "scorer_max_abs_diff_same_texts": float(np.abs(rescored - two["scores"]).max()),
    }))


if __name__ == "__main__":
    main()
