"""Command line: ``python -m toxlib {data,chapters,run,book,score,train-scorer,serve,bench,record} ...`` (see each
``--help``).

Each subcommand imports what it runs inside its function: ``toxlib --help`` and ``toxlib data`` start without
torch, and ``toxlib score`` works without the optional extras that ``run`` and ``book`` ([book]) and ``serve``
([serve]) need.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys

from toxlib.common.argtypes import host_name, integer_in, positive_number
from toxlib.common.errors import InputFileError, ParameterError, ToxlibError
from toxlib.common.progress import tqdm
from toxlib.data.sources import fetch, registry


def _data(args) -> int:
    reg = registry()
    if args.action == "list":
        for name in reg.names():
            s = reg[name]
            print(f"{name:28s} {s.bytes:>9,d} B  {s.license:40.40s}  {s.path}")
        return 0
    names = args.names or reg.names()
    for name in names:
        reg[name]  # an unknown name fails before anything is fetched
    for name in tqdm(names, desc="fetching data", unit="file", disable=len(names) < 2):
        path = fetch(name, mirror=args.mirror, force=args.force)
        tqdm.write(f"{name}: {path}")
    return 0


def _run(args) -> int:
    from pathlib import Path

    from toxlib.build.runner import default_output, run_notebook  # optional: the [book] extra (papermill)

    params = dict(args.parameter or [])
    profile = _profile(args)
    record = run_notebook(args.notebook, params, output=args.output, profile=profile)
    written = Path(args.output) if args.output else default_output(Path(args.notebook).resolve(), profile == "smoke")
    print(f"executed {record['notebook']} ({profile} profile) in {record['wall_s']:.1f} s with "
          f"{record['parameters']}: {written}")
    return 0


def _profile(args) -> str:
    """The --profile asked for; --smoke is an alias of --profile smoke (ParameterError when both disagree)."""
    if args.smoke and args.profile not in (None, "smoke"):
        raise ParameterError(f"--smoke is --profile smoke; it cannot be combined with --profile {args.profile}")
    return "smoke" if args.smoke else args.profile or "default"


def _chapters(args) -> int:
    from pathlib import Path

    from toxlib.chapters import chapters
    from toxlib.store.paths import project_root

    if args.write_cells:
        from toxlib.build.chapter_cells import write_cells  # optional: the [book] extra (nbformat)

        written = write_cells(project_root())
        for path in written:
            print(f"wrote the parameters cell of {Path(path).relative_to(project_root())}")
        print(f"{len(written)} notebook(s) written; the others already hold their declaration's cell")
        return 0
    for declared in chapters():
        print(f"{declared.stem}: {declared.title} (profiles: {', '.join(['default', *declared.profiles])})")
        for p in declared.parameters:
            print(f"  {p.name} = {p.default!r}: {p.check.allows}; {p.help}")
    return 0


def _book(args) -> int:
    from toxlib.build.book import build_book  # optional: the [book] extra (papermill, jupyter-book)

    result = build_book(only=args.only, profile=_profile(args), execute=not args.no_execute)
    for run in result["runs"]:
        print(f"  {run['notebook']:28s} {run['wall_s']:8.1f} s")
    print(f"book built in {result['wall_s']:.1f} s: open {result['html'] / 'index.html'}")
    return 0


#: byte order marks of encodings that are not UTF-8, longest first (UTF-8's own mark is read and dropped)
BYTE_ORDER_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\x00\x00\xfe\xff", "UTF-32BE"), (b"\xff\xfe", "UTF-16LE"),
                    (b"\xfe\xff", "UTF-16BE"))


def read_text_lines(data: bytes, where: str) -> list[str]:
    """One text per line of ``data``: split on "\\n" (a "\\r" before it dropped) and nothing else, so a Unicode line
    or paragraph separator or a form feed stays inside its text; a final newline ends the last line.
    Raises InputFileError naming ``where`` when the bytes are not UTF-8."""
    for bom, encoding in BYTE_ORDER_MARKS:  # longest first: a UTF-32LE mark starts like UTF-16LE's
        if data.startswith(bom):
            raise InputFileError(f"{where} is {encoding} text (it starts with the {encoding} byte order mark), not "
                                 f"UTF-8; convert it, e.g. iconv -f {encoding} -t UTF-8 FILE > FILE.utf8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputFileError(f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); convert it "
                             "from its encoding, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8 for Latin-1 (file -i "
                             "FILE may tell which encoding it is)") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


#: the exit status of a Unix tool killed by SIGPIPE (128 + 13), as a shell reports it: ``score`` exits with it, quietly,
#: when the reader of its output has gone (``| head -1``)
CLOSED_PIPE_EXIT = 141


def truncation_notes(scorer, texts: list[str]) -> list[str]:
    """For each text, "" when ``scorer`` reads all of it, else e.g. "first 128 of 2500002 tokens" (what it read)."""
    return ["" if cut is None else f"{scorer.window_side} {cut[0]} of {cut[1]} {scorer.window_unit}"
            for cut in scorer.truncation(texts)]


def write_to_stdout(write) -> int | None:
    """Run ``write()`` (which writes to ``sys.stdout``) and flush. None when it all went out; ``CLOSED_PIPE_EXIT``
    when the reader has gone (EPIPE), with nothing printed, as Unix tools do; ToxlibError for any other failure
    (a full disk: ENOSPC). After a failure, standard output is pointed at /dev/null, so the interpreter's own flush
    at exit does not fail again with a traceback."""
    try:
        write()
        sys.stdout.flush()
        return None
    except OSError as exc:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        if isinstance(exc, BrokenPipeError):
            return CLOSED_PIPE_EXIT
        raise ToxlibError(f"cannot write the scores to standard output ({exc.strerror or exc}); free space there or "
                          "write them elsewhere: python -m toxlib score FILE > other/place/scores.csv") from None


def _score(args) -> int:
    from toxlib.scorers import get_scorer  # heavy: torch, only when scoring

    if sys.stdout is None:  # file descriptor 1 was closed when Python started (>&-)
        raise ToxlibError("standard output is closed, so the scores would be lost; send it to a file or a pipe: "
                          "python -m toxlib score FILE > scores.csv")
    if args.file and args.file != "-":
        try:
            with open(args.file, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise InputFileError(f"cannot read {args.file}: {exc.strerror}; give an existing UTF-8 text file, "
                                 "one text per line (or - for stdin)") from None
        texts = read_text_lines(data, args.file)
    else:
        texts = read_text_lines(sys.stdin.buffer.read(), "standard input")
    if not texts:
        where = args.file if args.file not in (None, "-") else "standard input"
        raise InputFileError(f"{where} holds no lines to score; give one text per line")
    scorer = get_scorer(args.scorer)
    table = scorer.score(texts, cache=not args.no_cache)
    table.insert(0, "text", texts)
    table.insert(0, "line", range(1, len(texts) + 1))
    table["truncated"] = truncation_notes(scorer, texts)
    # every text field quoted: a text holding "\r" (one line: lines split on "\n" only) or a comma reads back as
    # one field with pandas and the csv module alike
    stopped = write_to_stdout(lambda: table.to_csv(sys.stdout, index=False, quoting=csv.QUOTE_NONNUMERIC))
    if stopped is not None:
        return stopped
    cut = int((table["truncated"] != "").sum())
    if cut:
        print(f"note: {cut} of {len(table)} text(s) are longer than the {scorer.name} scorer reads and were scored on "
              f"their {scorer.window_side} {scorer.window} {scorer.window_unit} (column truncated)", file=sys.stderr)
    failed = int(table["error"].notna().sum())
    if failed == len(table):
        print(f"error: every one of the {failed} text(s) failed to score; first error: {table['error'].iloc[0]}",
              file=sys.stderr)
        return 1
    if failed:
        print(f"warning: {failed} of {len(table)} text(s) have no score (NaN, reason in the error column)",
              file=sys.stderr)
    return 0


def _train_scorer(args) -> int:
    import json

    from toxlib.scorers.training import TrainingConfig, train_and_save  # heavy: torch, only when training

    given = {k: getattr(args, k) for k in ("epochs", "seed", "limit") if getattr(args, k) is not None}
    config = TrainingConfig(**given)
    meta = train_and_save(args.out, config, threads=args.threads)
    print(json.dumps({"out": str(args.out), "train_seconds": meta["train_seconds"],
                      "held_out_toxicity": meta["held_out"]["toxicity"]}))
    return 0


def _serve(args) -> int:
    from toxlib.scorers.serve import serve  # optional: the [serve] extra (starlette, uvicorn)
    from toxlib.scorers.serve_access import load_keys

    serve(host=args.host, port=args.port, scorer=args.scorer, max_body=args.max_body, max_waiting=args.max_waiting,
          max_connections=args.max_connections, max_per_client=args.max_per_client,
          request_timeout=args.request_timeout, min_upload_rate=args.min_upload_rate, cache=not args.no_cache,
          allow_remote=args.allow_remote, api_keys=load_keys(args.api_keys), access_log=args.access_log == "stderr")
    return 0


def _bench(args) -> int:
    if args.what == "record-cost":  # reads the record and JSON lines only: no torch
        from toxlib.benchmarks.record_cost import main_record_cost

        return main_record_cost(args)
    # heavy: the benchmarks load models; the distributed one needs the [ray] extra
    from toxlib.benchmarks import ceilings, distributed, generation_speed, roofline, scorer_throughput, serve_capacity

    mains = {"distributed": distributed.main_distributed, "ceilings": ceilings.main_ceilings,
             "perplexity": roofline.main_perplexity, "self-debias": roofline.main_self_debias,
             "score": scorer_throughput.main_score, "serve": serve_capacity.main_serve}
    return mains.get(args.what, generation_speed.main_generate)(args)


def _record(args) -> int:
    if args.action == "status":
        from toxlib.record.status import status_text
        from toxlib.store.record import record_dir, verify

        check = verify(record_dir())
        print(status_text(check=check))
        return 1 if check["problems"] else 0
    if args.action == "write":
        from toxlib.record.write import write_record

        done = write_record(args.log, prune=args.prune)
        print(f"record written: {done['keys']} keys, {done['rows']:,} rows, {done['texts']:,} texts, "
              f"{done['bytes'] / 1e6:.1f} MB; {done['dropped_keys']} files of unused keys dropped")
        return 0
    return _audit(args)


def _audit(args) -> int:
    # heavy: these load models and scorers
    from toxlib.build.machine import kernel_facts
    from toxlib.common.progress import quiet_libraries
    from toxlib.record.audit import outcome
    from toxlib.record.audit_file import resumable_audit
    from toxlib.record.audit_report import report_text
    from toxlib.record.history import append_history, check_writable, history_line, scope_text
    from toxlib.store.record import record_dir

    quiet_libraries()
    if args.history:
        check_writable(record_dir())
    run = resumable_audit(args.out, args.resume, n=args.slice, seed=args.seed, chapters=args.chapter,
                          kinds=args.kind, max_keys=args.keys)
    facts = kernel_facts()
    print(report_text(run, args.slice, args.seed, facts, args.out))
    if args.history:
        append_history(record_dir(), history_line(run.rows, scope_text(args.chapter, args.kind, args.keys),
                                                  args.slice, args.seed, facts))
    return 0 if outcome(run.rows)["passed"] else 1


NO_RECORD_HELP = ("ignore the sample record (data/record/): recompute, or read from your own caches, every row "
                  "(the same as TOXLIB_RECORD=off)")

RANDOM_WEIGHTS_HELP = ("the model's architecture and tokenizer with random weights (toxlib.benchmarks.random_weights): "
                       "for speed where its weights cannot go; --model may then be a folder with only config.json "
                       "and the tokenizer files")


def _at_least(minimum: int):
    """An argparse type: a whole number of at least ``minimum``, or an error naming what was given."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below {minimum}: give a whole number of at least {minimum}")
        return value
    return parse


def parser() -> argparse.ArgumentParser:

    top = argparse.ArgumentParser(prog="python -m toxlib", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="list or fetch the registry's data files")
    data_sub = data.add_subparsers(dest="action", required=True)
    data_sub.add_parser("list", help="list every registered data file")
    fetch = data_sub.add_parser("fetch", help="download (or copy from a mirror) and verify data files")
    fetch.add_argument("names", nargs="*", help="source names (default: all)")
    fetch.add_argument("--mirror", help="copy from this directory (owner/repo/path layout) instead of downloading; "
                       "default $TOXLIB_DATA_MIRROR")
    fetch.add_argument("--force", action="store_true", help="fetch again even if the file is present")
    data.set_defaults(func=_data)

    chapters = sub.add_parser("chapters", help="each chapter's parameters: default, what it may be, what it does "
                              "(declared in toxlib/chapters/)")
    chapters.add_argument("--write-cells", action="store_true", help="write each chapter notebook's parameters cell "
                          "from its declaration")
    chapters.set_defaults(func=_chapters)

    run = sub.add_parser("run", help="execute one notebook with papermill")
    run.add_argument("notebook", help="path of the .ipynb file")
    run.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="set a parameter (value parsed to the parameter's type); repeatable")
    run.add_argument("-o", "--output", help="write the executed notebook here (default: in place)")
    run.add_argument("--profile", choices=["default", "smoke", "paper"],
                     help="parameter set from the notebook's metadata toxlib.profiles: default (the parameters cell), "
                     "smoke (tiny; writes under _build/smoke) or paper (the paper's sizes; in place, like default); "
                     "-p overrides single values")
    run.add_argument("--smoke", action="store_true", help="the same as --profile smoke")
    run.add_argument("--no-record", action="store_true", help=NO_RECORD_HELP)
    run.set_defaults(func=_run)

    book = sub.add_parser("book", help="execute the notebooks in _toc.yml and build the HTML book")
    book.add_argument("--only", nargs="+", metavar="STEM", help="execute only these notebooks (and the scorecard)")
    book.add_argument("--profile", choices=["default", "smoke", "paper"],
                      help="each chapter's parameter set: default, smoke (a staging copy under _build/smoke) or paper "
                      "(in place, writes data/results/ like default)")
    book.add_argument("--smoke", action="store_true", help="the same as --profile smoke")
    book.add_argument("--no-execute", action="store_true", help="build the HTML from the notebooks as they are")
    book.add_argument("--no-record", action="store_true", help=NO_RECORD_HELP)
    book.set_defaults(func=_book)

    score = sub.add_parser("score", help="score texts (one per line, from a file or stdin); CSV to stdout")
    score.add_argument("file", nargs="?", help="UTF-8 text file, one text per line, split on newlines only "
                       "(default or -: stdin); the CSV starts with each text's line number and the text, and ends "
                       "with truncated: empty, or how much of a text longer than the scorer reads was scored (e.g. "
                       "first 128 of 2500002 tokens)")
    score.add_argument("--scorer", default="distilled", help="scorer name (default distilled; see toxlib.scorers)")
    score.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    score.add_argument("--no-record", action="store_true", help=NO_RECORD_HELP)
    score.set_defaults(func=_score)

    train = sub.add_parser("train-scorer", help="train the distilled Perspective scorer on RTP texts")
    train.add_argument("--out", required=True, help="folder for the adapter, head and training.json "
                       "(toxlib/scorers/weights/distilled-minilm replaces the shipped weights)")
    train.add_argument("--epochs", type=int, help="passes over the training texts (default: TrainingConfig's)")
    train.add_argument("--seed", type=int, help="split and training seed (default: TrainingConfig's)")
    train.add_argument("--limit", type=int, help="train on only this many texts (a quick check)")
    train.add_argument("--threads", type=int, help="CPU threads (default: one per core; the shipped weights record "
                       "theirs in training.json, and the same count reproduces them exactly)")
    train.set_defaults(func=_train_scorer)

    serve = sub.add_parser("serve", help="a local Perspective-compatible endpoint (an emulation, not Perspective)")
    serve.add_argument("--host", default="127.0.0.1", type=host_name,
                       help="address to listen on (default 127.0.0.1: this machine only); any other needs "
                            "--allow-remote and API keys")
    serve.add_argument("--port", type=integer_in(1, 65535, "a port number"), default=8080, help="port (default 8080)")
    serve.add_argument("--allow-remote", action="store_true",
                       help="allow a --host that other machines can reach (then API keys are required)")
    serve.add_argument("--api-keys", metavar="FILE",
                       help="file of API keys, one per line (# comments): a request must carry one as ?key= or "
                            "X-Goog-Api-Key, else 403; default: the comma-separated keys in $TOXLIB_SERVE_API_KEYS, "
                            "else no key needed")
    serve.add_argument("--scorer", default="distilled", help="toxlib scorer behind it (default distilled)")
    serve.add_argument("--max-body", type=integer_in(1024, 64 * 2**20, "a number of bytes"), default=65536,
                       help="largest analyze body in bytes, before and after gzip decoding (default 65536; a /batch "
                            "may be 100 times larger)")
    serve.add_argument("--max-waiting", type=integer_in(1, 100_000, "a number of requests"), default=64,
                       help="requests that may wait to be scored before new ones get 429 (default 64)")
    serve.add_argument("--max-connections", type=integer_in(1, 100_000, "a number of connections"), default=512,
                       help="connections still sending their request, from all clients; beyond it the oldest is "
                            "closed with 503 (default 512)")
    serve.add_argument("--max-per-client", type=integer_in(1, 100_000, "a number of connections"), default=32,
                       help="the same per client address (default 32)")
    serve.add_argument("--request-timeout", type=positive_number("seconds", "5 or 0.5"), default=5.0,
                       help="seconds a request may go without sending a byte before it gets 408 (default 5); a long "
                            "upload is not cut while its bytes keep coming (--min-upload-rate)")
    serve.add_argument("--min-upload-rate", type=positive_number("bytes per second", "1000"), default=1000.0,
                       help="bytes per second a request must average once its first --request-timeout seconds are "
                            "spent, else 408 (default 1000); a request that keeps sending this fast is never cut")
    serve.add_argument("--access-log", choices=["stderr", "off"], default="stderr",
                       help="one JSON line per request to standard error (time, client address, method, path, "
                            "status, ms, bytes, texts scored; never a text, a key or a query string), or off")
    serve.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    serve.set_defaults(func=_serve)

    bench = sub.add_parser("bench", help="benchmarks that print figures (last line: JSON)")
    bench_sub = bench.add_subparsers(dest="what", required=True)
    gen = bench_sub.add_parser("generate", help="toxlib's float32 generation at the record's shape (100 prompts x 25 "
                               "samples) vs the papers' loop and transformers' batched generate()")
    gen.add_argument("--bf16", action="store_true", help="also measure bf16 speed and the perplexity change it causes")
    gen.add_argument("--float64", action="store_true", help="also measure float64 speed (toxlib.models.float64)")
    gen.add_argument("--no-bf16", action="store_true", help=argparse.SUPPRESS)  # the default since 2026-11-26
    gen.add_argument("--compare-prompts", type=int, default=16,
                     help="prompts the papers' loop and transformers' batched path run on (default 16)")
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
    for sub_parser, sizes in ((ppl, "300 sentences instead of 2,000"), (sd, "20 prompts instead of 100")):
        sub_parser.add_argument("--model", default="smollm2-135m", help="model name or path (default smollm2-135m)")
        sub_parser.add_argument("--quick", action="store_true", help=sizes)
        sub_parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"],
                                help="model precision (default float32, the chapters')")
        sub_parser.add_argument("--random-weights", action="store_true", help=RANDOM_WEIGHTS_HELP)
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
    cost = bench_sub.add_parser("record-cost", help="CPU-hours the sample record's keys take per chapter group at "
                                "the rates in files of benchmark JSON lines (toxlib.benchmarks.record_cost)")
    cost.add_argument("runs", nargs="+", help="files of benchmark JSON lines (e.g. toxlib/benchmarks/runs/*.jsonl); "
                      "one column of hours per file")
    cost.add_argument("--record", default=None, help="record folder (default: data/record)")
    dist = bench_sub.add_parser("distributed", help="one generate -> score job locally and on a local Ray cluster")
    dist.add_argument("--quick", action="store_true", help="a tiny random model and the profanity SVM (seconds)")
    dist.add_argument("--workers", type=int, default=2, help="Ray workers (actors), at least 2 (default 2)")
    bench.set_defaults(func=_bench)

    record = sub.add_parser("record", help="the sample record in data/record/: what it holds, write it, audit it")
    record_sub = record.add_subparsers(dest="action", required=True)
    record_sub.add_parser("status", help="per key: rows, the commit and machine that made them; the record's size")
    write = record_sub.add_parser("write", help="keep the rows a build used (its TOXLIB_RECORD_USAGE log) in the "
                                  "record, with their provenance")
    write.add_argument("log", help="the usage log a build wrote (TOXLIB_RECORD_USAGE=LOG bash scripts/build_book.sh)")
    write.add_argument("--prune", action="store_true", help="drop keys and rows the log does not name (after a full "
                       "build: the rows no chapter uses); default: keep them")
    audit = record_sub.add_parser("audit", help="recompute a seeded slice of the record from scratch (record and "
                                  "caches off) and compare; exits 1 when fewer than 95%% of the rows match")
    audit.add_argument("--slice", type=_at_least(1), default=20, help="prompts (or texts) per key (default 20)")
    audit.add_argument("--chapter", nargs="+", help="audit only the keys these chapters use (default: every key)")
    audit.add_argument("--kind", nargs="+", choices=["generations", "lm_scores", "scores"],
                       help="audit only these kinds of rows (default: all)")
    audit.add_argument("--seed", type=_at_least(0), default=0, help="which slice (default 0)")
    audit.add_argument("--keys", type=_at_least(1), help="at most this many keys per kind (a quick check)")
    audit.add_argument("--out", help="also write the per-row comparison here (CSV, appended key by key; a file "
                       "that exists is refused unless --resume)")
    audit.add_argument("--resume", action="store_true", help="take the rows of the keys --out already holds (an "
                       "interrupted audit with the same slice and seed) instead of recomputing them, and count "
                       "those of this --chapter/--kind scope; keys it lists as not audited are tried again")
    audit.add_argument("--history", action="store_true", help="add this audit's line to data/record/audits.csv "
                       "(the methods page's reproducibility table)")
    record.set_defaults(func=_record)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "no_record", False):
        os.environ["TOXLIB_RECORD"] = "off"  # before any kernel starts, so the notebooks' kernels inherit it
    try:
        return args.func(args)
    except ToxlibError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
