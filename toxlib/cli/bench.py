"""``python -m toxlib bench ...``: run a benchmark of ``toxlib.benchmarks`` and print its figures, the last line one
JSON object. A roofline percentage above 100 is a measurement error: the command then exits 1."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial

from toxlib.common.argtypes import integer_in, positive_number

RANDOM_WEIGHTS_HELP = ("the model's architecture and tokenizer with random weights (toxlib.benchmarks.random_weights): "
                       "for speed where its weights cannot go; --model may then be a folder with only config.json "
                       "and the tokenizer files, named after a bundled model to get its row temperature fitted to "
                       "the trained model's nucleus sizes (fitted on the CPU once, kept in the folder)")


def _named(result: dict, args) -> dict:
    """The result under the model's given name, with ``weights``: "random" or "trained"."""
    return {**result, "model": args.model, "weights": "random" if getattr(args, "random_weights", False) else "trained"}


def _finish(result: dict, pct_keys: tuple[str, ...] | None = None) -> int:
    """Print the JSON line; exit status 1, with the reason, when a roofline percentage is above 100."""
    from toxlib.benchmarks.matmul_rate import PERCENT_KEYS, above_roofline

    print(json.dumps(result))
    over = above_roofline(result, pct_keys or PERCENT_KEYS)
    if over:
        print(f"error: {', '.join(over)} above 100%: the matmul rate was measured low (another process, a frequency "
              "change); re-run on a quiet machine")
        return 1
    return 0


def _model(args) -> str:
    from toxlib.benchmarks.random_weights import bench_model

    return bench_model(args.model, random_weights=getattr(args, "random_weights", False))


def _precision(args) -> None:
    """TF32 matmuls for this run when ``--tf32`` was given (opt-in; off by default, as PyTorch leaves it)."""
    from toxlib.models.device import tf32

    tf32(bool(getattr(args, "tf32", False)))


def _generate(args) -> int:
    from toxlib.benchmarks.generation_speed import bench_generate

    _precision(args)
    result = _named(bench_generate(_model(args), quick=args.quick, n_prompts=args.prompts, bf16=args.bf16,
                                   float64=args.float64, compare_prompts=args.compare_prompts,
                                   loop_prompts=args.loop_prompts, profile=args.profile, shape_name=args.shape),
                    args)
    print(f"{result['roofline_pct']}% of the fp32 roofline; at equal work {result['vs_papers_loop']}x the papers' "
          f"loop ({result['papers_loop_prompts']} prompts), {result['vs_transformers_batched']}x transformers' "
          f"batched path ({result['compare_prompts']} prompts)"
          + (f"; {result['bf16_roofline_pct']}% of the bf16 roofline" if "bf16_roofline_pct" in result else "")
          + f"; peak RSS {result['peak_rss_mb']} MiB (model load and toxlib phase)")
    return _finish(result, ("roofline_pct", "bf16_roofline_pct", "float64_roofline_pct"))


def _ceilings(args) -> int:
    from toxlib.benchmarks.ceilings import VARIANTS, generation_ceilings

    result = _named(generation_ceilings(_model(args), quick=args.quick, n_prompts=args.prompts), args)
    return _finish(result, tuple(f"{name}_roofline_pct" for name in VARIANTS))


def _perplexity(args) -> int:
    from toxlib.benchmarks.perplexity_speed import bench_perplexity

    _precision(args)
    return _finish(_named(bench_perplexity(_model(args), quick=args.quick, dtype=args.dtype, shape_name=args.shape),
                          args))


def _self_debias(args) -> int:
    from toxlib.benchmarks.self_debias_speed import bench_self_debias

    _precision(args)
    return _finish(_named(bench_self_debias(_model(args), quick=args.quick, dtype=args.dtype, shape_name=args.shape),
                          args))


def _score(args) -> int:
    from toxlib.benchmarks.scorer_throughput import OFFLINE_SCORERS, bench_score

    print(json.dumps(bench_score(args.scorers or OFFLINE_SCORERS, quick=args.quick, log=partial(print, flush=True))))
    return 0


def _serve(args) -> int:
    from toxlib.benchmarks.serve_capacity import bench_serve

    result = bench_serve(args.scorer, args.clients, args.seconds, args.batch, args.compare_coalescing,
                         workers=args.workers or (None,), log=partial(print, flush=True))
    print(json.dumps(result))
    failed = sum(row["failed_parts"] for row in result["results"])
    if failed:
        print(f"error: {failed} request part(s) were not answered 200; the figures above do not measure capacity "
              "(run toxlib serve with the same scorer and send one request to see why)", file=sys.stderr)
        return 1
    return 0


def _record_cost(args) -> int:
    import pandas as pd

    from toxlib.benchmarks.record_cost import record_cost

    cost = record_cost(args.runs, args.record)
    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print(cost.hours.round(2).to_string())
        for label, part in cost.uncharged.items():
            if len(part):
                print(f"\n{int(part['keys'].sum())} keys not charged ({label}), by reason:")
                print(part.to_string(index=False))
    print(json.dumps(cost.summary))
    return 0


def _distributed(args) -> int:
    from toxlib.benchmarks.distributed import bench_distributed

    result = bench_distributed(quick=args.quick, workers=args.workers)
    print(f"{result['rows']} rows generated and scored locally in {result['local_s']} s and on Ray with "
          f"{result['workers']} workers in {result['ray_s']} s; identical: {str(result['identical']).lower()}")
    print(json.dumps(result))
    return 0 if result["identical"] else 1


#: bench subcommand -> what runs it (each imports its benchmark: the heavy ones load models; record-cost reads the
#: record and JSON lines only, no torch; distributed needs the [ray] extra)
RUNNERS = {"generate": _generate, "ceilings": _ceilings, "perplexity": _perplexity, "self-debias": _self_debias,
           "score": _score, "serve": _serve, "record-cost": _record_cost, "distributed": _distributed}


def _bench(args) -> int:
    return RUNNERS[args.what](args)


def add_commands(sub) -> None:
    """``bench generate|ceilings|perplexity|self-debias|score|serve|record-cost|distributed``."""
    bench = sub.add_parser("bench", help="benchmarks that print figures (last line: JSON)")
    bench_sub = bench.add_subparsers(dest="what", required=True)
    gen = bench_sub.add_parser("generate", help="toxlib's float32 generation at the record's shape (100 prompts x 25 "
                               "samples) or a GPU's, vs the papers' loop and transformers' batched generate() at "
                               "equal work")
    gen.add_argument("--bf16", action="store_true", help="also measure bf16 speed and the perplexity change it causes")
    gen.add_argument("--float64", action="store_true", help="also measure float64 speed (toxlib.models.float64)")
    gen.add_argument("--no-bf16", action="store_true", help=argparse.SUPPRESS)  # bf16 is off unless asked for
    gen.add_argument("--compare-prompts", type=int, default=None,
                     help="prompts transformers' batched path and toxlib are compared on (default: the shape's, 16 "
                     "for record, all for gpu)")
    gen.add_argument("--loop-prompts", type=int, default=None,
                     help="prompts the papers' loop and toxlib are compared on (default: the shape's, 16)")
    gen.add_argument("--profile", action="store_true", help="print where toxlib's time goes (torch.profiler)")
    ceil = bench_sub.add_parser("ceilings", help="bf16 generation as is, with a free sampler, and with free sampler "
                                "and attention, vs the matmul roofline (what limits bench generate)")
    for sub_parser, prompts in ((gen, 100), (ceil, 16)):
        sub_parser.add_argument("--model", default="smollm2-135m", help="model name or path (default smollm2-135m)")
        sub_parser.add_argument("--quick", action="store_true", help=f"4 prompts instead of {prompts}")
        sub_parser.add_argument("--prompts", type=int, help="number of prompts (overrides --quick)")
        sub_parser.add_argument("--random-weights", action="store_true", help=RANDOM_WEIGHTS_HELP)
    ppl = bench_sub.add_parser("perplexity", help="sentence perplexity (toxlib.models.perplexity) on ToxiGen sentences "
                               "vs the matmul roofline")
    sd = bench_sub.add_parser("self-debias", help="Self-Debiasing (six prefixes) and greedy decoding on adversarial "
                              "prompts vs the matmul roofline")
    for sub_parser, sizes in ((ppl, "300 sentences instead of 2,000"), (sd, "20 prompts instead of 300")):
        sub_parser.add_argument("--model", default="smollm2-135m", help="model name or path (default smollm2-135m)")
        sub_parser.add_argument("--quick", action="store_true", help=sizes)
        sub_parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"],
                                help="model precision (default float32, the chapters')")
        sub_parser.add_argument("--random-weights", action="store_true", help=RANDOM_WEIGHTS_HELP)
    for sub_parser in (gen, ppl, sd):
        sub_parser.add_argument("--shape", default="record", choices=["record", "gpu"],
                                help="sizes (toxlib.benchmarks.equal_work.SHAPES): record (the sample record's, "
                                "alternatives on subsets a CPU gets through; the default) or gpu (a large GPU's: "
                                "400 prompts, 20,000 sentences, transformers' batched path on all of them)")
        sub_parser.add_argument("--tf32", action="store_true",
                                help="let float32 matmuls on a GPU run in TF32 (opt-in; stated in the JSON)")
    sco = bench_sub.add_parser("score", help="texts/s of every bundled scorer on RTP texts, cache off")
    sco.add_argument("--quick", action="store_true", help="500 texts instead of 4,000")
    sco.add_argument("--scorers", nargs="+", default=None, help="scorer names (default: the offline ones)")
    srv = bench_sub.add_parser("serve", help="texts/s and 50th/99th percentile latency of toxlib serve under 1, 8 and "
                               "64 concurrent clients on 127.0.0.1, single requests and batches (needs [serve])")
    srv.add_argument("--scorer", default="distilled", help="scorer behind the server (default distilled)")
    srv.add_argument("--clients", nargs="+", type=integer_in(1, 256, "a number of clients"), default=[1, 8, 64],
                     help="numbers of concurrent clients (default 1 8 64)")
    srv.add_argument("--seconds", type=positive_number("seconds", "5"), default=5.0,
                     help="seconds each (request kind, clients) cell runs (default 5)")
    srv.add_argument("--batch", type=integer_in(1, 100, "a number of requests"), default=25,
                     help="analyze requests per batch request (default 25, as the RealToxicityPrompts scripts send)")
    srv.add_argument("--compare-coalescing", action="store_true",
                     help="also time single requests against a server that scores each request on its own")
    srv.add_argument("--workers", nargs="+", type=integer_in(0, 1024, "a number of processes"), default=None,
                     help="scoring processes of the server; several counts run every cell against each (default: "
                          "serve's, one per core)")
    cost = bench_sub.add_parser("record-cost", help="CPU-hours the sample record's keys take per chapter group at "
                                "the rates in files of benchmark JSON lines (toxlib.benchmarks.record_cost)")
    cost.add_argument("runs", nargs="+", help="files of benchmark JSON lines (e.g. benchmarks/runs/*.jsonl); "
                      "one column of hours per file")
    cost.add_argument("--record", default=None, help="record folder (default: data/record)")
    dist = bench_sub.add_parser("distributed", help="one generate -> score job locally and on a local Ray cluster")
    dist.add_argument("--quick", action="store_true", help="a tiny random model and the profanity SVM (seconds)")
    dist.add_argument("--workers", type=int, default=2, help="Ray workers (actors), at least 2 (default 2)")
    bench.set_defaults(func=_bench)
