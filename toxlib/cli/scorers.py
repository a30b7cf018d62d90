"""``python -m toxlib score|train-scorer|serve``: score texts from a file or stdin (CSV to stdout), retrain the
distilled scorer, run the local Perspective-compatible endpoint (the [serve] extra)."""

from __future__ import annotations

import csv
import os
import sys

from toxlib.cli.book import NO_RECORD_HELP
from toxlib.common.argtypes import host_name, integer_in, positive_number
from toxlib.common.errors import InputFileError, ToxlibError

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
          allow_remote=args.allow_remote, api_keys=load_keys(args.api_keys), access_log=args.access_log == "stderr",
          workers=args.workers, threads=args.threads)
    return 0


def add_commands(sub) -> None:
    """``score``, ``train-scorer`` and ``serve``."""
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
    serve.add_argument("--workers", type=integer_in(0, 1024, "a number of processes"), default=None,
                       help="scoring processes, each with its own copy of the scorer (default: one per usable core; "
                            "0: score in a thread of the serving process); concurrent requests' texts are pooled by "
                            "token count across them")
    serve.add_argument("--threads", type=integer_in(1, 1024, "a number of threads"), default=None,
                       help="torch threads per scoring process (default: the usable cores shared out, at least 1)")
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
