"""How close the book's hot paths come to the machine's matmul rate: ``python -m toxlib bench perplexity`` and
``python -m toxlib bench self-debias``, and the robust matmul denominator ``bench generate`` shares.

The roofline: a path that only did its matmuls, at the best rate this machine's matmul reached, would make
``matmul GFLOP/s / flops per token`` tokens/s, with flops per token = 2 x (non-embedding parameters + LM head)
(``flops_per_token``; attention over these short texts adds about 1%). The rate is the best of
several repeats at the square 2048 shape and at the workload's own shape (rows x hidden by hidden x MLP width),
measured before and after the workload; all are reported. A percentage above 100 means the denominator was
measured low (another process, a frequency change): ``above_roofline`` names it and the command exits non-zero.
"""

from __future__ import annotations

import time

import pandas as pd
import torch

from toxlib.benchmarks.alternatives import hf_perplexity, perplexity_batch_tokens, reference_self_debias
from toxlib.benchmarks.equal_work import SHAPES, Work, compare, shape, stops_off
from toxlib.benchmarks.prompts import bench_prompts, toxigen_sentences
from toxlib.benchmarks.random_weights import random_weights_folder
from toxlib.build.machine import machine_description
from toxlib.data.rtp_prompts import load_debias_prompts
from toxlib.generate import RTP_SAMPLING, DecodingConfig, NucleusStats, generate
from toxlib.generate.api import default_batch_rows, encode_prompt
from toxlib.generate.config import ENGINE_TIMING_REVISION
from toxlib.generate.static_decode import graphs_wanted, release
from toxlib.models import load
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.device import tf32_enabled
from toxlib.models.perplexity import METHOD_VERSIONS, SENTENCE_BATCH_TOKENS, sentence_nll
from toxlib.report import plots
from toxlib.steer.self_debias import DEBIASING_PREFIXES, PREFIX_LAYOUT, SelfDebiasing
from toxlib.store.artefacts import artefact_json, artefact_name

SQUARE = 2048  # the square shape on a CPU; a GPU needs 8192 to reach its matrix units' rate (``square_size``)


def square_size(device: torch.device | str = "cpu") -> int:
    """Side of the square matmul that measures the machine's rate: 2048 on a CPU, 8192 on a GPU."""
    return 8192 if torch.device(device).type == "cuda" else SQUARE


def percent(part: float, whole: float) -> float:
    """100 * part / whole to 3 significant digits (not decimals: a tiny model on a fast machine is 0.0123%, not
    0.0%)."""
    return float(f"{100 * part / whole:.3g}")


def flops_per_token(arch: dict) -> float:
    """Matmul flops to produce one new token: 2 x (non-embedding params + vocab x hidden for the LM head).
    Attention over the short context (< 100 tokens here) adds under 1% and is left out."""
    return 2.0 * (arch["non_embedding_params"] + arch["vocab_size"] * arch["hidden_size"])


def best_matmul_gflops(dtype: torch.dtype, m: int, k: int, n: int, repeats: int = 7,
                       device: torch.device | str = "cpu") -> float:
    """Best GFLOP/s over ``repeats`` timed (m, k) @ (k, n) products in ``dtype`` on ``device`` (one untimed
    warm-up). On a GPU each repeat times 20 products between two synchronisations, since one small product takes
    microseconds and the launch and the host clock would otherwise dominate."""
    device = torch.device(device)
    cuda = device.type == "cuda"
    a, b = torch.randn(m, k, dtype=dtype, device=device), torch.randn(k, n, dtype=dtype, device=device)
    products = 20 if cuda else 1
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    a @ b
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(products):
            a @ b
        sync()
        best = min(best, (time.perf_counter() - start) / products)
    return 2 * m * k * n / best / 1e9


def matmul_rates(dtype: torch.dtype, arch: dict, rows: int, device: torch.device | str = "cpu") -> dict:
    """{"square": GFLOP/s at ``square_size(device)`` cubed, "workload": GFLOP/s at (rows, hidden) @ (hidden, MLP
    width)}, on ``device``."""
    width = arch.get("intermediate_size") or 4 * arch["hidden_size"]
    side = square_size(device)
    return {"square": best_matmul_gflops(dtype, side, side, side, device=device),
            "workload": best_matmul_gflops(dtype, rows, arch["hidden_size"], width, device=device)}


def warms_up_whole(lm) -> bool:
    """Whether a benchmark's warm-up runs its whole workload once: on a GPU, yes, since kernels are chosen and
    compiled for each new shape on first use (measured on an H100: greedy decoding of 100 prompts took 6.7 s the
    first time and 2.6 s the second, under the profiler); on a CPU the warm-up runs every prompt for its first two
    new tokens (``WARM_UP_TOKENS``), which the whole workload would double."""
    return lm.device.type == "cuda"


#: New tokens of a CPU benchmark's warm-up: every row's prefill and first decoding steps, at the workload's own
#: shapes. Why every row: a process's heap grows to the workload's largest tensors (the rows x vocabulary logits)
#: on its first batches, and each new page costs a fault (measured: SmolLM2, 16 prompts x 25 samples, 122,700 minor
#: faults in the first run and 4 in the second); a long chapter pays that once, so the timed run should not.
WARM_UP_TOKENS = 2


class Denominator:
    """The matmul rate, measured around a workload: call ``measure()`` before and after; ``gflops`` is the best
    rate seen at either shape, ``report()`` every figure (JSON-ready, rounded)."""

    def __init__(self, dtype: torch.dtype, arch: dict, rows: int, device: torch.device | str = "cpu"):
        self.dtype, self.arch, self.rows, self.device = dtype, arch, rows, torch.device(device)
        self.seen: list[dict] = []

    def measure(self) -> None:
        self.seen.append(matmul_rates(self.dtype, self.arch, self.rows, self.device))

    @property
    def gflops(self) -> float:
        return max(max(r.values()) for r in self.seen)

    def roofline_tok_s(self) -> float:
        return self.gflops * 1e9 / flops_per_token(self.arch)

    def report(self) -> dict:
        return {"matmul_gflops": round(self.gflops, 1),
                "matmul_square_gflops": round(max(r["square"] for r in self.seen), 1),
                "matmul_workload_gflops": round(max(r["workload"] for r in self.seen), 1),
                "matmul_square_side": square_size(self.device),
                "matmul_workload_shape": [self.rows, self.arch["hidden_size"],
                                          self.arch.get("intermediate_size") or 4 * self.arch["hidden_size"]],
                "roofline_tok_s": round(self.roofline_tok_s(), 1)}


def device_facts(device) -> dict:
    """What a benchmark's JSON says about where it ran: the device, and on a GPU its name, whether TF32 matmuls
    were allowed (``toxlib.models.device.tf32``) and whether decoding steps ran as CUDA graphs."""
    device = torch.device(device)
    if device.type != "cuda":
        return {"device": str(device)}
    return {"device": str(device), "gpu": torch.cuda.get_device_name(device), "tf32": tf32_enabled(),
            "cuda_graphs": graphs_wanted(device)}


def toxlib_generate(lm, prompts: list[str], config: DecodingConfig, stats: NucleusStats | None = None,
                    batch_rows: int | None = None) -> tuple[int, float]:
    """toxlib's way, without the cache. Returns (new tokens, seconds)."""
    start = time.perf_counter()
    df = generate(lm, prompts, config, cache=False, progress=False, stats=stats, batch_rows=batch_rows)
    return int(df["n_new_tokens"].sum()), time.perf_counter() - start


def timed_generation(lm, prompts: list[str], config, rows: int) -> dict:
    """toxlib's generation of ``prompts`` in ``lm``'s dtype, no cache, after a warm-up over every prompt
    (``WARM_UP_TOKENS`` new tokens; on a GPU the whole workload), between two measurements of the matmul rate at
    ``rows`` rows. Returns tok_s, roofline_pct and ``Denominator.report()``."""
    denominator = Denominator(lm.dtype, lm.architecture(), rows, lm.device)
    denominator.measure()
    toxlib_generate(lm, prompts, config if warms_up_whole(lm) else config.with_(max_new_tokens=WARM_UP_TOKENS))
    tokens, seconds = toxlib_generate(lm, prompts, config)
    denominator.measure()
    return {"tok_s": round(tokens / seconds, 1),
            "roofline_pct": percent(tokens / seconds, denominator.roofline_tok_s()), **denominator.report()}


#: Sentences the papers' loop (one sentence per call) scores in ``bench perplexity`` at the record's shape.
PAPERS_LOOP_SENTENCES = SHAPES["record"].sentences_loop


def timed_nll(lm, texts: list[str]) -> Work:
    """toxlib's ``sentence_nll`` of ``texts`` timed (no cache; already warmed up), as a ``Work``."""
    start = time.perf_counter()
    scores = sentence_nll(lm, texts)
    return Work("toxlib sentence_nll", len(texts), len(texts), int(scores["n_tokens"].sum()),
                time.perf_counter() - start)


def perplexity_comparisons(lm, texts: list[str], ours: Work, looped: list[str]) -> dict:
    """{"transformers_batched": ..., "papers_loop": ...} at equal work: ``ours`` (toxlib on ``texts``) against
    transformers' batched path on the same texts (sorted by length, right-padded calls of about
    ``perplexity_batch_tokens`` tokens), and toxlib on ``looped`` against the papers' loop (one sentence per call)
    on them."""
    longest = max(len(lm.tokenizer(t).input_ids) for t in texts) + 1
    per_call = max(1, perplexity_batch_tokens(lm) // longest)
    hf_perplexity(lm, texts[:8])  # warm-up
    hf_perplexity(lm, sorted(texts, key=len)[-per_call:], per_call)  # and at the largest call's shape
    theirs = Work(f"transformers model(labels=...), {per_call} sentences per call", len(texts), len(texts),
                  *hf_perplexity(lm, sorted(texts, key=len), per_call))
    ours_looped = ours if looped == texts else timed_nll(lm, looped)
    loop = Work("the papers' loop: one sentence per call", len(looped), len(looped), *hf_perplexity(lm, looped))
    return {"transformers_batched": {**compare(ours, theirs), "sentences_per_call": per_call},
            "papers_loop": compare(ours_looped, loop)}


def bench_perplexity(model: str = "smollm2-135m", quick: bool = False, dtype: str = "float32", log=print,
                     sentences: int | None = None, alternatives: bool = True, shape_name: str = "record",
                     loop_sentences: int | None = None) -> dict:
    """``toxlib.models.perplexity.sentence_nll`` on a fixed set of ToxiGen sentences (the shape's: 2,000 for the
    record's, 20,000 for a GPU's; 300 quick; or ``sentences``), no cache; with ``alternatives``, the comparisons at
    equal work (``perplexity_comparisons``): transformers' batched path on every sentence, the papers' loop on the
    first ``loop_sentences`` (the shape's 200) against toxlib on the same. Returns model, dtype, sentences, tokens,
    seconds, tok_s, the denominator's figures, roofline_pct and, with the alternatives, ``comparisons`` and their
    headline ratios vs_transformers_batched and vs_papers_loop (with both sides' tok/s)."""

    size = shape(shape_name)
    texts = toxigen_sentences(sentences or (300 if quick else size.sentences))
    lm = load(model, dtype=dtype)
    arch = lm.architecture()
    denominator = Denominator(lm.dtype, arch, SENTENCE_BATCH_TOKENS, lm.device)
    denominator.measure()
    sentence_nll(lm, texts if warms_up_whole(lm) else texts[:32])  # warm-up
    ours = timed_nll(lm, texts)
    denominator.measure()
    result = {"model": model, "shape": shape_name, "dtype": dtype, "sentences": len(texts), "tokens": ours.tokens,
              "seconds": round(ours.seconds, 2), "tok_s": round(ours.tok_s, 1), **denominator.report(),
              **device_facts(lm.device), "threads": torch.get_num_threads(), "cpu": describe_cpu()}
    result["roofline_pct"] = percent(result["tok_s"], denominator.roofline_tok_s())
    log(f"perplexity {model} {dtype}: {ours.tokens} tokens in {ours.seconds:.1f} s = {result['tok_s']} tok/s; matmul "
        f"{result['matmul_gflops']} GFLOP/s -> roofline {result['roofline_tok_s']} tok/s ({result['roofline_pct']}%)")
    if alternatives:
        looped = texts[:min(loop_sentences or size.sentences_loop, len(texts))]
        comparisons = perplexity_comparisons(lm, texts, ours, looped)
        batched, loop = comparisons["transformers_batched"], comparisons["papers_loop"]
        result.update({"papers_loop_sentences": len(looped), "papers_loop_tok_s": loop["other"]["tok_s"],
                       "transformers_batched_tok_s": batched["other"]["tok_s"],
                       "transformers_sentences_per_call": batched["sentences_per_call"],
                       "vs_papers_loop": loop["speedup"], "vs_transformers_batched": batched["speedup"],
                       "comparisons": comparisons})
        log(f"at equal work: transformers batched ({batched['sentences_per_call']} sentences per call) "
            f"{batched['other']['tok_s']} tok/s on all {len(texts)}: toxlib {batched['speedup']}x; on "
            f"{len(looped)} sentences toxlib {loop['toxlib']['tok_s']}, the papers' loop {loop['other']['tok_s']}: "
            f"{loop['speedup']}x")
    return result


#: Adversarial prompts of ``bench self-debias`` at the record's shape (300 per set), 20 with ``--quick``.
SELF_DEBIAS_PROMPTS = SHAPES["record"].debias_prompts


def self_debias_comparisons(lm, compared: list[str], looped: list[str], steering, max_new_tokens: int) -> dict:
    """{"transformers_batched": ..., "papers_loop": ...} at equal work, stop tokens off (every plain row decodes
    ``max_new_tokens``): toxlib's Self-Debiasing against the reference implementation's way (the plain input and
    its prefixed copies as rows of one ``generate`` call, ``reference_self_debias``) with ``default_batch_rows //
    copies`` prompts per call on ``compared``, and against one prompt per call (the papers' loop) on ``looped``.
    Tokens are the plain rows' new tokens on both sides."""
    greedy = DecodingConfig(mode="greedy", max_new_tokens=max_new_tokens)
    prefixes = tuple(steering.prefixes)
    per_call = max(1, default_batch_rows(lm) // (1 + len(prefixes)))

    def ours(prompts):
        start = time.perf_counter()
        out = generate(lm, prompts, greedy, steering=steering, cache=False, progress=False)
        return Work("toxlib Self-Debiasing", len(prompts), len(prompts), int(out["n_new_tokens"].sum()),
                    time.perf_counter() - start)

    with stops_off(lm):
        warm = greedy if warms_up_whole(lm) else greedy.with_(max_new_tokens=WARM_UP_TOKENS)
        generate(lm, compared, warm, steering=steering, cache=False, progress=False)
        mine = ours(compared)
        mine_looped = mine if looped == compared else ours(looped)
        release(lm.model)
        reference_self_debias(lm, compared[:2], prefixes, steering.decay_constant, WARM_UP_TOKENS, 2)  # warm-up
        batched = Work(f"the reference's generate(), {per_call} prompts x {1 + len(prefixes)} rows per call",
                       len(compared), len(compared),
                       *reference_self_debias(lm, compared, prefixes, steering.decay_constant, max_new_tokens,
                                              per_call))
        loop = Work("the reference's generate(), one prompt per call", len(looped), len(looped),
                    *reference_self_debias(lm, looped, prefixes, steering.decay_constant, max_new_tokens))
    return {"transformers_batched": {**compare(mine, batched), "prompts_per_call": per_call},
            "papers_loop": compare(mine_looped, loop)}


def bench_self_debias(model: str = "smollm2-135m", quick: bool = False, dtype: str = "float32",
                      max_new_tokens: int = 20, log=print, prompts: int | None = None,
                      alternatives: bool = True, shape_name: str = "record", compare_prompts: int | None = None,
                      loop_prompts: int | None = None) -> dict:
    """Self-Debiasing (the paper's six prefixes, λ 100) and plain greedy decoding on the debiasing paper's first
    300 adversarial prompts (20 quick; or ``prompts``), 20 new tokens, no cache. row_tok_s counts every prefixed
    copy's tokens (new tokens x 7); overhead_vs_greedy is Self-Debiasing's time over plain greedy's.

    row_tok_s counts the decoding steps only, but each of the 7 copies also runs its prompt through the model
    first (a prefill as long as the decoding, for 20-token prompts and 20 new tokens). ``work_roofline_pct`` counts
    both: the matmul flops of the prompts' tokens in every copy (2 x non-embedding parameters each: a prefill
    computes the LM head at its last position only; the prefixes' own tokens, run once per batch, are left out)
    and of the row-tokens (``flops_per_token``), over the time and the matmul rate; ``prefill_tokens`` is that
    count of prompt tokens. With ``alternatives``, the comparisons at equal work (``self_debias_comparisons``): the
    reference implementation's batched way on the shape's comparison prompts (57 for the record's shape: 400 rows;
    all for a GPU's) and its one-prompt-per-call loop on the shape's loop prompts, each against toxlib on the same
    prompts; tokens/s count the plain rows' new tokens, as ``self_debias_tok_s`` does."""

    size = shape(shape_name)
    n_prompts = prompts or (20 if quick else size.debias_prompts)
    prompts = load_debias_prompts("adversarial")["prompt_text"].head(n_prompts).tolist()
    lm = load(model, dtype=dtype)
    arch = lm.architecture()
    greedy = DecodingConfig(mode="greedy", max_new_tokens=max_new_tokens)
    steering = SelfDebiasing(DEBIASING_PREFIXES, decay_constant=100.0)
    copies = 1 + len(DEBIASING_PREFIXES)
    denominator = Denominator(lm.dtype, arch, default_batch_rows(lm), lm.device)
    denominator.measure()
    warm = greedy if warms_up_whole(lm) else greedy.with_(max_new_tokens=WARM_UP_TOKENS)
    for kw in ({"steering": steering}, {}):
        generate(lm, prompts, warm, cache=False, progress=False, **kw)

    def timed(**kw):
        start = time.perf_counter()
        out = generate(lm, prompts, greedy, cache=False, progress=False, **kw)
        return int(out["n_new_tokens"].sum()), time.perf_counter() - start

    sd_tokens, sd_s = timed(steering=steering)
    plain_tokens, plain_s = timed()
    denominator.measure()
    result = {"model": model, "shape": shape_name, "dtype": dtype, "prompts": len(prompts),
              "max_new_tokens": max_new_tokens, "prefixes": len(DEBIASING_PREFIXES), "self_debias_s": round(sd_s, 2),
              "row_tok_s": round(sd_tokens * copies / sd_s, 1), "self_debias_tok_s": round(sd_tokens / sd_s, 1),
              "greedy_tok_s": round(plain_tokens / plain_s, 1), "overhead_vs_greedy": round(sd_s / plain_s, 2),
              **denominator.report(), **device_facts(lm.device), "threads": torch.get_num_threads(),
              "cpu": describe_cpu()}
    result["roofline_pct"] = percent(result["row_tok_s"], denominator.roofline_tok_s())
    prefill_tokens = copies * sum(len(encode_prompt(lm, p)) for p in prompts)
    work = prefill_tokens * 2.0 * arch["non_embedding_params"] + sd_tokens * copies * flops_per_token(arch)
    result.update({"prefill_tokens": prefill_tokens,
                   "work_roofline_pct": percent(work / sd_s, denominator.gflops * 1e9)})
    log(f"self-debiasing {model} {dtype}: {result['row_tok_s']} row-tok/s ({result['roofline_pct']}% of "
        f"{result['roofline_tok_s']}; prefills counted too: {result['work_roofline_pct']}%); greedy "
        f"{result['greedy_tok_s']} tok/s; overhead {result['overhead_vs_greedy']}x")
    if alternatives:
        compared = prompts[:min(compare_prompts or size.debias_compare or len(prompts), len(prompts))]
        looped = compared[:min(loop_prompts or size.debias_loop, len(compared))]
        comparisons = self_debias_comparisons(lm, compared, looped, steering, max_new_tokens)
        batched, loop = comparisons["transformers_batched"], comparisons["papers_loop"]
        result.update({"compare_prompts": len(compared), "papers_loop_prompts": len(looped),
                       "papers_loop_tok_s": loop["other"]["tok_s"],
                       "transformers_batched_tok_s": batched["other"]["tok_s"],
                       "vs_papers_loop": loop["speedup"], "vs_transformers_batched": batched["speedup"],
                       "comparisons": comparisons})
        log(f"at equal work (stop tokens off): on {len(compared)} prompts toxlib {batched['toxlib']['tok_s']} tok/s, "
            f"the reference batched ({batched['prompts_per_call']} prompts per call) {batched['other']['tok_s']}: "
            f"{batched['speedup']}x; on {len(looped)} prompts one per call {loop['other']['tok_s']}: "
            f"{loop['speedup']}x")
    return result


def cached_measurement(kind: str, key: dict, measure) -> dict:
    """A timing is a fact about one run: ``measure()`` (returning a JSON-ready dict) runs once per ``key`` (with the
    machine and the torch version added) and is kept in the artefact cache (``toxlib.store.artefacts``, kind
    "timings"), with the UTC time it was taken in ``measured``; later calls return it, so a warm re-run of a chapter
    re-times nothing. Delete ``cache_dir()/timings`` (or change a parameter) to measure again."""
    import datetime

    full = {"kind": kind, **key, "machine": machine_description(), "cpu": describe_cpu(),
            "torch": torch.__version__, "threads": torch.get_num_threads()}
    return artefact_json(artefact_name("timings", kind, full, ".json"), lambda: measure() | {
        "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")})


def chapter_roofline(models: list[str], speed_prompts: int = 2, sentences: int = 300, debias_prompts: int = 20,
                     self_debias_model: str = "smollm2-135m", dtype: str = "float32") -> pd.DataFrame:
    """The generation chapter's roofline table, each measurement cached (``cached_measurement``, keyed by the
    version of the code path it times: the engine's timing revision, and the NLL method for perplexity): per model,
    in ``dtype`` (the chapters' float32 by default), generation (RealToxicityPrompts' sampling on ``speed_prompts``
    prompts), sentence perplexity
    (``sentences`` ToxiGen sentences) and, for ``self_debias_model``, Self-Debiasing's row-tokens
    (``debias_prompts`` adversarial prompts, greedy). Columns: model, path, tok_s, roofline_tok_s, roofline_pct,
    matmul_gflops, measured."""

    rows, label = [], {"float32": "fp32", "bfloat16": "bf16"}.get(dtype, dtype)
    for name in models:
        def generation(name=name):
            lm = load(name, dtype=dtype)
            return timed_generation(lm, bench_prompts(speed_prompts), RTP_SAMPLING, default_batch_rows(lm))

        measured = {
            f"generation ({label}, 25 samples)": cached_measurement(
                "generation", {"model": name, "prompts": speed_prompts, "engine": ENGINE_TIMING_REVISION,
                               "dtype": dtype}, generation),
            f"perplexity ({label})": cached_measurement(
                "perplexity", {"model": name, "quick": sentences, "nll": METHOD_VERSIONS["causal"],
                               "engine": ENGINE_TIMING_REVISION, "dtype": dtype},
                lambda name=name: _bench_quietly(bench_perplexity, name, sentences=sentences, dtype=dtype,
                                               alternatives=False)),
        }
        if name == self_debias_model:
            measured[f"Self-Debiasing ({label}, row-tokens)"] = cached_measurement(
                "self-debias", {"model": name, "prompts": debias_prompts, "engine": ENGINE_TIMING_REVISION,
                                "layout": PREFIX_LAYOUT, "dtype": dtype},
                lambda name=name: _bench_quietly(bench_self_debias, name, prompts=debias_prompts, dtype=dtype,
                                               alternatives=False))
        for path, m in measured.items():
            tok_s = m["row_tok_s"] if "row_tok_s" in m else m["tok_s"]
            rows.append({"model": name, "path": path, "tok_s": tok_s, "roofline_tok_s": m["roofline_tok_s"],
                         "roofline_pct": percent(tok_s, m["roofline_tok_s"]),
                         "matmul_gflops": m["matmul_gflops"], "measured": m["measured"]})
    return pd.DataFrame(rows)


def roofline_figure(table: pd.DataFrame):
    """Bars of ``chapter_roofline``'s roofline_pct, one per (model, path), with the 100% line."""

    fig = plots.grouped_bars(table.assign(group=table["model"] + " / " + table["path"]), "group",
                             {"roofline_pct": "tokens/s as % of the matmul roofline"},
                             "Share of the matmul roofline", "tokens/s as % of the roofline (dashed: 100%)")
    fig.axes[0].axvline(100, color="black", linestyle="--", linewidth=1)
    if fig.axes[0].get_legend() is not None:
        fig.axes[0].get_legend().remove()
    return fig


def _bench_quietly(bench, name: str, **sizes) -> dict:
    return bench(name, log=lambda *_: None, **sizes)


#: the roofline percentages a benchmark's result may hold
PERCENT_KEYS = ("roofline_pct", "work_roofline_pct")


def above_roofline(result: dict, pct_keys: tuple[str, ...] = PERCENT_KEYS) -> list[str]:
    """The keys of ``pct_keys`` whose percentage in ``result`` is above 100: a measurement error (the matmul rate
    was measured low: another process, a frequency change), never a speed."""
    return [k for k in pct_keys if result.get(k) is not None and result[k] > 100]


def bench_model(model: str, random_weights: bool = False) -> str:
    """The model a benchmark loads: ``model``, or with ``random_weights`` a folder with its architecture and random
    weights (``toxlib.benchmarks.random_weights``)."""
    return str(random_weights_folder(model)) if random_weights else model
