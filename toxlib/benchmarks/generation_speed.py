"""``python -m toxlib bench generate``: toxlib's float32 generation at the sample record's shape (or a large GPU's),
against the real alternatives at equal work, in one run.

One run measures, for one model and RealToxicityPrompts' setting (25 samples x up to 20 new tokens, top-p 0.9),
float32 on every path (TF32 off unless ``--tf32``):
  * toxlib: ``toxlib.generate.generate`` on the shape's prompts (``--shape record``: 100 prompts, 2,500 rows, the
    record's batches of ``default_batch_rows``; ``--shape gpu``: 400 prompts, batches sized from the GPU's free
    memory), stop tokens on as the book runs it, after a warm-up (every prompt's first tokens on a CPU, the whole
    workload on a GPU): ``toxlib_tok_s``, its share of the roofline, where each nucleus was resolved, the sampler's
    share of the time;
  * the comparisons, each at equal work (``toxlib.benchmarks.equal_work``: the same prompts, samples and tokens on
    both sides, stop tokens off so every row decodes 20 tokens; ``comparisons`` in the JSON holds both sides):
    transformers' best batched path (``model.generate`` on ``default_batch_rows // 25`` prompts per call, the
    faster of its dynamic and static caches) against toxlib on the shape's comparison prompts (16 for the record's
    shape, all 400 for the GPU's): ``vs_transformers_batched``; the papers' loop (one ``model.generate`` per prompt
    with ``num_return_sequences=25`` and transformers' own top-p, ``toxlib.benchmarks.alternatives``) against
    toxlib on its fewer prompts (16), named in ``papers_loop_prompts``: ``vs_papers_loop``;
  * the machine's fp32 matmul GFLOP/s and the roofline it implies: tokens/s if every new token cost exactly
    2 x (non-embedding parameters + LM-head parameters) flops at that rate (``toxlib.benchmarks.matmul_rate``: the best
    of several repeats at the square and the workload shape, before and after the workload);
  * peak resident memory (after the toxlib phase, and overall);
  * bf16 (``--bf16``): toxlib's speed in bf16 (``bf16_tok_s``) against the bf16 matmul rate measured in the same
    run (``bf16_roofline_pct``), and the perplexity change bf16 causes on a fixed set of texts;
  * float64 (``--float64``, ``toxlib.models.float64``: the precision whose rows depend least on the CPU): toxlib's
    speed in float64 (``float64_tok_s``), against the float64 matmul rate (``float64_roofline_pct``), and what it
    costs against float32 (``float64_cost``: float32 tokens/s over float64's, both on all the prompts).
A roofline percentage above 100 is a measurement error: the command then exits non-zero. ``--profile`` prints
where toxlib's time goes (torch.profiler, operators by self time; CUDA time too on a GPU). The last line printed is
one JSON object with every figure.
"""

from __future__ import annotations

import resource
import time

import pandas as pd
import torch

from toxlib.benchmarks.alternatives import fastest_batched_generate, hf_generate
from toxlib.benchmarks.chapter_timings import RUN_COLUMNS, timing_table
from toxlib.benchmarks.equal_work import SHAPES, Work, compare, shape, stops_off
from toxlib.benchmarks.matmul_rate import Denominator, percent
from toxlib.benchmarks.prompts import bench_prompts
from toxlib.benchmarks.timing import (
    WARM_UP_TOKENS,
    cached_measurement,
    device_facts,
    timed_generation,
    toxlib_generate,
    warms_up_whole,
)
from toxlib.data.rtp_prompts import load_rtp
from toxlib.generate import RTP_SAMPLING, DecodingConfig, NucleusStats, generate
from toxlib.generate.api import default_batch_rows
from toxlib.generate.config import ENGINE_TIMING_REVISION
from toxlib.generate.static_decode import release
from toxlib.models import load
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.perplexity import corpus_perplexity, sentence_nll
from toxlib.store.keys import stable_hash

#: Prompts of ``bench generate`` at the record's shape (100 prompts x 25 samples), 4 with ``--quick``.
RECORD_PROMPTS = SHAPES["record"].prompts
#: Prompts the alternatives run on at the record's shape (one batch of 400 rows at 25 samples each).
COMPARE_PROMPTS = SHAPES["record"].compare


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def baseline_generate(lm, prompts: list[str], config: DecodingConfig) -> tuple[int, float]:
    """The papers' way: per prompt, ``model.generate(num_return_sequences=k)`` with transformers' top-p.
    Returns (new tokens, seconds)."""
    return hf_generate(lm, prompts, config, prompts_per_call=1)


def speed_comparison(lm, prompts: list[str], config: DecodingConfig = RTP_SAMPLING,
                     stats: NucleusStats | None = None) -> dict:
    """toxlib and the papers' way on the same prompts, each warmed up first on one prompt.

    Returns toxlib_tokens, toxlib_s, toxlib_tok_s, baseline_tokens, baseline_s, baseline_tok_s, speedup."""
    warm = config.with_(num_samples=2, max_new_tokens=2)
    toxlib_generate(lm, prompts if warms_up_whole(lm) else prompts[:1], config if warms_up_whole(lm) else warm)
    baseline_generate(lm, prompts[:1], warm)
    tox_tokens, tox_s = toxlib_generate(lm, prompts, config, stats)
    base_tokens, base_s = baseline_generate(lm, prompts, config)
    return {"toxlib_tokens": tox_tokens, "toxlib_s": round(tox_s, 2), "toxlib_tok_s": round(tox_tokens / tox_s, 1),
            "baseline_tokens": base_tokens, "baseline_s": round(base_s, 2),
            "baseline_tok_s": round(base_tokens / base_s, 1),
            "speedup": round((tox_tokens / tox_s) / (base_tokens / base_s), 2)}


def bf16_perplexity_change(name: str, n_texts: int = 64) -> dict:
    """Corpus perplexity of fixed RTP texts (prompt + continuation of n_texts sample records) in fp32 and bf16."""

    rtp = load_rtp("sample").sample(n_texts, random_state=7)
    texts = (rtp["prompt_text"] + rtp["continuation_text"]).tolist()
    ppl = {dt: corpus_perplexity(sentence_nll(load(name, dtype=dt), texts)) for dt in ("float32", "bfloat16")}
    return {"ppl_fp32": ppl["float32"], "ppl_bf16": ppl["bfloat16"],
            "bf16_ppl_change_pct": 100 * (ppl["bfloat16"] / ppl["float32"] - 1), "ppl_texts": n_texts}


def profile_table(lm, prompts: list[str], config: DecodingConfig, rows: int = 25) -> str:
    """Operators by self time (torch.profiler) over one toxlib generation of ``prompts``: where a decoding step's
    time goes (host time on a CPU; on a GPU the device's time, with the host's and its kernel launches)."""
    from torch.profiler import ProfilerActivity, profile

    cuda = lm.device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        toxlib_generate(lm, prompts, config)
    key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=key, row_limit=rows)


def toxlib_work(lm, prompts: list[str], config: DecodingConfig, batch_rows: int | None = None) -> Work:
    """toxlib's generation of ``prompts`` timed (no cache) after a warm-up (the whole workload on a GPU, every
    prompt's first ``WARM_UP_TOKENS`` tokens on a CPU), as a ``Work``."""
    toxlib_generate(lm, prompts, config if warms_up_whole(lm) else config.with_(max_new_tokens=WARM_UP_TOKENS),
                    batch_rows=batch_rows)
    tokens, seconds = toxlib_generate(lm, prompts, config, batch_rows=batch_rows)
    return Work("toxlib", len(prompts), len(prompts) * config.num_samples, tokens, seconds)


def generation_comparisons(lm, compared: list[str], looped: list[str], config: DecodingConfig,
                           batch_rows: int) -> dict:
    """{"transformers_batched": ..., "papers_loop": ...} (``toxlib.benchmarks.equal_work.compare``), stop tokens
    off on both sides: toxlib against transformers' best batched path on ``compared``, and against the papers'
    loop on ``looped``. toxlib's GPU buffers are released before transformers runs."""
    warm = config.with_(max_new_tokens=WARM_UP_TOKENS)
    n = config.num_samples
    with stops_off(lm):
        ours = toxlib_work(lm, compared, config, batch_rows)
        ours_looped = ours if looped == compared else toxlib_work(lm, looped, config, batch_rows)
        release(lm.model)
        batched = fastest_batched_generate(lm, compared, config, batch_rows, warm)
        theirs = Work(f"transformers generate(), {batched['prompts_per_call']} prompts per call, "
                      f"{batched['cache']} cache", len(compared), len(compared) * n, batched["tokens"],
                      batched["seconds"])
        hf_generate(lm, looped[:1], warm)
        loop = Work("the papers' loop: one generate() per prompt", len(looped), len(looped) * n,
                    *hf_generate(lm, looped, config, prompts_per_call=1))
    return {"transformers_batched": {**compare(ours, theirs), "cache": batched["cache"],
                                     "prompts_per_call": batched["prompts_per_call"],
                                     "probe_prompts": batched["probe_prompts"],
                                     "probe_tok_s": batched["probe_tok_s"]},
            "papers_loop": compare(ours_looped, loop)}


def bench_generate(model: str = "smollm2-135m", quick: bool = False, n_prompts: int | None = None,
                   bf16: bool = False, float64: bool = False, compare_prompts: int | None = None,
                   loop_prompts: int | None = None, profile: bool = False, shape_name: str = "record",
                   log=print) -> dict:
    """Run the benchmark for one model at the shape ``shape_name`` (``toxlib.benchmarks.equal_work.SHAPES``) and
    return the figures (see the module docstring). ``n_prompts``, ``compare_prompts`` and ``loop_prompts`` override
    the shape's sizes (``quick``: 4 prompts, every comparison on them)."""

    size = shape(shape_name)
    n_prompts = n_prompts or (4 if quick else size.prompts)
    config = RTP_SAMPLING
    prompts = bench_prompts(n_prompts)
    compared = prompts[:min(compare_prompts or size.compare or n_prompts, n_prompts)]
    looped = compared[:min(loop_prompts or size.loop, len(compared))]
    lm = load(model, dtype="float32")
    arch = lm.architecture()
    rows = default_batch_rows(lm)
    log(f"model {model}: {arch['layers']} layers, vocab {arch['vocab_size']:,}, {arch['params'] / 1e6:.0f}M params, "
        f"{lm.device}, {torch.get_num_threads()} threads; {n_prompts} prompts x {config.num_samples} samples, "
        f"batches of {rows} rows; transformers' batched path on {len(compared)} prompts, the papers' loop on "
        f"{len(looped)}")
    fp32 = Denominator(torch.float32, arch, rows, lm.device)
    fp32.measure()
    stats = NucleusStats()
    warm = config.with_(max_new_tokens=WARM_UP_TOKENS)
    toxlib_generate(lm, prompts, config if warms_up_whole(lm) else warm)
    tox_tokens, tox_s = toxlib_generate(lm, prompts, config, stats)
    rss_toxlib = peak_rss_mb()
    fp32.measure()
    comparisons = generation_comparisons(lm, compared, looped, config, rows)
    fp32.measure()
    tok_s = tox_tokens / tox_s
    batched, loop = comparisons["transformers_batched"], comparisons["papers_loop"]
    result = {
        "model": model, "shape": shape_name, "n_prompts": n_prompts, "samples_per_prompt": config.num_samples,
        "max_new_tokens": config.max_new_tokens, "top_p": config.top_p, "dtype": "float32", "batch_rows": rows,
        **device_facts(lm.device), "threads": torch.get_num_threads(), "cpu": describe_cpu(),
        "toxlib_tokens": tox_tokens, "toxlib_s": round(tox_s, 2), "toxlib_tok_s": round(tok_s, 1),
        "compare_prompts": len(compared), "papers_loop_prompts": len(looped),
        "vs_transformers_batched": batched["speedup"], "vs_papers_loop": loop["speedup"],
        "transformers_batched_tok_s": batched["other"]["tok_s"], "papers_loop_tok_s": loop["other"]["tok_s"],
        "transformers_batched_cache": batched["cache"], "transformers_prompts_per_call": batched["prompts_per_call"],
        "comparisons": comparisons,
        **fp32.report(),
        "roofline_pct": percent(tok_s, fp32.roofline_tok_s()),
        "sampling_share_pct": round(100 * stats.seconds / tox_s, 1),
        "nucleus_resolved_at": stats.shares(),
        "peak_rss_mb": round(rss_toxlib), "peak_rss_mb_with_alternatives": round(peak_rss_mb()),
    }
    log(f"fp32 matmul {fp32.gflops:.0f} GFLOP/s -> roofline {fp32.roofline_tok_s():.0f} tokens/s")
    log(f"toxlib:   {tox_tokens} tokens in {tox_s:.1f} s = {tok_s:.1f} tokens/s ({result['roofline_pct']}% of the "
        f"roofline; nucleus resolved at top-k: {stats.shares()}; sampling {stats.seconds:.1f} s of it)")
    log(f"at equal work (stop tokens off): on {len(compared)} prompts toxlib {batched['toxlib']['tok_s']} tokens/s, "
        f"transformers batched ({batched['prompts_per_call']} prompts per call, {batched['cache']} cache) "
        f"{batched['other']['tok_s']}: {batched['speedup']}x; on {len(looped)} prompts toxlib "
        f"{loop['toxlib']['tok_s']}, the papers' loop {loop['other']['tok_s']}: {loop['speedup']}x")
    if profile:
        log(profile_table(lm, compared, config))
    del lm
    if bf16:
        lm16 = load(model, dtype="bfloat16")
        timed = timed_generation(lm16, prompts, config, default_batch_rows(lm16))
        del lm16
        result.update({f"bf16_{k}": v for k, v in timed.items()} | {
            k: (round(v, 3) if isinstance(v, float) else v) for k, v in bf16_perplexity_change(model).items()})
        log(f"bf16: {result['bf16_tok_s']} tokens/s, {result['bf16_roofline_pct']}% of the bf16 roofline "
            f"({result['bf16_roofline_tok_s']} tokens/s at {result['bf16_matmul_gflops']} GFLOP/s); perplexity "
            f"{result['ppl_fp32']:.2f} (fp32) -> {result['ppl_bf16']:.2f} (bf16), "
            f"{result['bf16_ppl_change_pct']:+.2f}%")
        result["peak_rss_mb_with_bf16"] = round(peak_rss_mb())
    if float64:
        lm64 = load(model, dtype="float64")
        timed = timed_generation(lm64, prompts, config, rows)
        del lm64
        result.update({f"float64_{k}": v for k, v in timed.items()})
        result["float64_cost"] = round(result["toxlib_tok_s"] / result["float64_tok_s"], 2)
        log(f"float64: {result['float64_tok_s']} tokens/s, {result['float64_roofline_pct']}% of the float64 roofline "
            f"({result['float64_roofline_tok_s']} tokens/s at {result['float64_matmul_gflops']} GFLOP/s); "
            f"float32 is {result['float64_cost']}x as fast")
    return result


SPEED_COLUMNS = ["model", "toxlib_tok_s", "baseline_tok_s", "speedup", "toxlib_tokens", "baseline_tokens",
                 "measured"]
CACHE_COLUMNS = ["model", "first_call_s", "second_call_s", "identical"]


def _timed_values(lms: dict, prompts, config: DecodingConfig) -> dict:
    """What decides a generation timing: each model's weights and dtype, the prompts, the decoding settings and the
    engine's timing revision."""
    return {"models": {name: [lm.weights_id, str(lm.dtype)] for name, lm in lms.items()},
            "prompts": stable_hash(list(prompts)), "decoding": config.key(), "samples": config.num_samples,
            "engine": ENGINE_TIMING_REVISION}


def speed_table(lms: dict, prompts: list[str], config: DecodingConfig = RTP_SAMPLING, measure: bool = False
                ) -> pd.DataFrame:
    """:func:`speed_comparison` per model of ``lms`` ({name: LanguageModel}) on ``prompts``, as the committed
    benchmark runs timed it (``chapter_timings.timing_table``); with ``measure``, this machine's too, each measured
    once per machine and setting and then read from the timing cache (``cached_measurement``).
    Columns: ``SPEED_COLUMNS`` (measured: UTC), machine, date."""
    if not prompts:
        return pd.DataFrame(columns=[*SPEED_COLUMNS, *RUN_COLUMNS])

    def here():
        return [{"model": name, **cached_measurement(
                    "speed", {"weights": lm.weights_id, "dtype": str(lm.dtype), "prompts": prompts,
                              "decoding": config.key(), "engine": ENGINE_TIMING_REVISION},
                    lambda lm=lm: speed_comparison(lm, prompts, config))}
                for name, lm in lms.items()]
    return timing_table("generation/speed", _timed_values(lms, prompts, config), measure, here, SPEED_COLUMNS)


def timed_generate(lms: dict, prompts, config: DecodingConfig) -> tuple[dict, list[dict]]:
    """``generate`` per model of ``lms`` ({name: LanguageModel}) on ``prompts``, timed. Returns ({name: generations},
    [{"model": name, "first_call_s": seconds}]); a first call may read an earlier run's cache."""
    gens, timing = {}, []
    for name, lm in lms.items():
        start = time.perf_counter()
        gens[name] = generate(lm, prompts, config)
        timing.append({"model": name, "first_call_s": time.perf_counter() - start})
    return gens, timing


def cache_check(lms: dict, prompts, config: DecodingConfig, gens: dict, timing: list[dict]) -> pd.DataFrame:
    """Generate again what :func:`timed_generate` generated (now from the cache): one row per model with model,
    first_call_s, second_call_s, identical (the same frame as the first call's)."""
    rows = []
    for row in timing:
        start = time.perf_counter()
        again = generate(lms[row["model"]], prompts, config, progress=False)
        rows.append({**row, "second_call_s": time.perf_counter() - start,
                     "identical": again.equals(gens[row["model"]])})
    return pd.DataFrame(rows, columns=CACHE_COLUMNS)


def cache_table(lms: dict, prompts, config: DecodingConfig, check: pd.DataFrame, measure: bool = False
                ) -> pd.DataFrame:
    """The cache's timings to show: the committed benchmark runs' :func:`cache_check` rows at the same models,
    prompts and settings, and with ``measure`` this run's ``check``. Columns: ``CACHE_COLUMNS``, machine, date."""
    return timing_table("generation/cache", _timed_values(lms, prompts, config), measure,
                        lambda: check.to_dict("records"), CACHE_COLUMNS)
