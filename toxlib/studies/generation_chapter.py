"""The generation chapter (``notebooks/generation.ipynb``) computed: ``compute(values, models)`` returns its
``ChapterResult``.

The models and their start tokens; prompted continuations of RealToxicityPrompts sample prompts (timed, written as
``generations``) and unprompted ones; every decoding step of a few prompts inside nucleus sampling (sizes against
the top-k ladder, their histogram and summary); speed against the papers' way and the roofline, and the cache's
second call (timings from the committed benchmark runs unless ``measure``); the claims; the numbers the exercises
quote, with the first model at half the nucleus mass. ``values``: every parameter of
``toxlib/chapters/generation.py``, checked; ``models``: a ``toxlib.models.source.Models``.
"""

from __future__ import annotations

import pandas as pd

from toxlib.benchmarks import chapter_timings, roofline
from toxlib.benchmarks import generation_speed as generation_bench
from toxlib.data import load_rtp
from toxlib.generate import DecodingConfig, generate
from toxlib.generate.nucleus import K_LADDER
from toxlib.models import describe_models
from toxlib.models.source import Models
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult
from toxlib.studies import nucleus_diagnostics
from toxlib.studies.captions.generation import CAPTIONS
from toxlib.studies.nucleus_steps import record_nucleus

MODELS_SHOWN = ["model", "model_type", "layers", "heads", "kv_heads", "hidden_size", "vocab_size", "params_m",
                "non_embedding_params_m", "start_of_sequence"]
EXAMPLES_SHOWN = ["model", "prompt", "sample_idx", "continuation", "n_new_tokens"]
UNPROMPTED_SHOWN = ["model", "sample_idx", "continuation", "n_new_tokens", "stopped"]
#: continuations per prompt where every decoding step is inspected (or the run's fewer)
NUCLEUS_SAMPLES = 5


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("generation", v)
    caption = CAPTIONS.bind(**v)
    top_p, measure = v["top_p"], v["measure"]
    few = min(v["num_samples"], NUCLEUS_SAMPLES)
    config = DecodingConfig(mode="sample", num_samples=v["num_samples"], max_new_tokens=v["max_new_tokens"],
                            top_p=top_p, seed=v["seed"])
    lms = {name: models(name) for name in v["models"]}
    rtp = load_rtp("sample").sample(v["n_prompts"], random_state=v["seed"])
    prompts = pd.DataFrame({"prompt_id": rtp["record_id"], "prompt": rtp["prompt_text"]})
    out.add_text("sizes", f"{len(lms)} models; {len(prompts)} prompts x {v['num_samples']} samples x up to "
                          f"{v['max_new_tokens']} tokens, top-p {top_p}")
    out.add_table("models", describe_models(list(lms.values())), caption("models"), columns=MODELS_SHOWN)

    gens, timing = generation_bench.timed_generate(lms, prompts, config)
    generations = out.add_table("generations", pd.concat(gens.values(), ignore_index=True), shown=False)
    out.add_table("examples", generations[generations["sample_idx"] < 2].groupby("model").head(6)[EXAMPLES_SHOWN],
                  caption("examples"), file=False)
    out.add_table("unprompted_examples", pd.concat([generate(lm, [""], config.with_(num_samples=few))
                                                    for lm in lms.values()], ignore_index=True),
                  caption("unprompted_examples"), columns=UNPROMPTED_SHOWN)

    inspected = prompts["prompt"].head(v["nucleus_prompts"]).tolist()
    nucleus = pd.concat([record_nucleus(lm, inspected, config.with_(num_samples=few)) for lm in lms.values()],
                        ignore_index=True)
    out.add_table("nucleus_steps", nucleus, shown=False)
    out.add_figure("nucleus_sizes", lambda: plots.histograms(
        nucleus, "nucleus_size", "model", caption("fig_nucleus_sizes", n_steps=len(nucleus), nucleus_samples=few),
        "tokens in the nucleus (log scale); dashed: top-k ladder", marker=list(K_LADDER), log_scale=True, bins=30))
    out.add_table("nucleus_summary", nucleus_diagnostics.summarise_nucleus(nucleus),
                  caption("nucleus_summary", nucleus_samples=few))

    speed_prompts = v["speed_prompts"]
    if speed_prompts:  # small sizes here; the benchmarks run the full ones
        speed = generation_bench.speed_table(lms, prompts["prompt"].head(speed_prompts).tolist(), config, measure)
        chapter_timings.add_timings(out, "speed", speed, caption("speed"), "the speed comparison", digits=1)
        weights = {name: lm.weights_id for name, lm in lms.items()}
        table = roofline.chapter_roofline(weights, speed_prompts, 150 * speed_prompts, 10 * speed_prompts,
                                          measure=measure)
        if chapter_timings.add_timings(out, "roofline", table, caption("roofline"), "the roofline", digits=1):
            out.add_figure("roofline", lambda: roofline.roofline_figure(table), numbered=False)
        else:  # its note stands in the table's place
            out.skip("roofline")
    else:  # 0 skips the comparison
        out.skip("speed")
        out.skip("roofline")

    check = generation_bench.cache_check(lms, prompts, config, gens, timing)  # this run's second call
    out.add_text("cache_check", "In this run, the second call returned the first call's texts exactly: "
                 + ", ".join(f"{name} {'yes' if same else 'NO'}" for name, same in zip(check["model"],
                                                                                         check["identical"])))
    chapter_timings.add_timings(out, "cache", generation_bench.cache_table(lms, prompts, config, check, measure),
                                caption("cache", n_prompts=len(prompts)), "the cache's timing", digits=2)
    out.add_claims(nucleus_diagnostics.claims(top_p, v["max_new_tokens"], v["num_samples"], nucleus,
                                              {name: lm.start_token for name, lm in lms.items()}), caption("claims"))

    # the figures the exercises' text quotes: the first model at half the nucleus mass, on the same prompts
    exercise_top_p = 0.5 if top_p > 0.5 else top_p / 2  # the exercise's half mass, below this run's
    first = next(iter(lms))
    half = config.with_(top_p=exercise_top_p)
    nucleus_half = record_nucleus(lms[first], inspected, half.with_(num_samples=few), progress=False)
    generations_half = generate(lms[first], prompts, half, progress=False)
    out.add_prose(nucleus_diagnostics.exercise_prose(nucleus, nucleus_half, generations, generations_half, first,
                                                     top_p, exercise_top_p))
    return out
