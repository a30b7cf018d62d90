"""``python -m toxlib record status|write|audit``: the sample record in ``data/record/``."""

from __future__ import annotations

import argparse


def _record(args) -> int:
    if args.action == "status":
        from toxlib.record_tools.status import status_text
        from toxlib.store.record_reader import record_dir, verify

        check = verify(record_dir())
        print(status_text(check=check))
        return 1 if check["problems"] else 0
    if args.action == "write":
        from toxlib.record_tools.write import write_record

        done = write_record(args.log, prune=args.prune)
        print(f"record written: {done['keys']} keys, {done['rows']:,} rows, {done['texts']:,} texts, "
              f"{done['bytes'] / 1e6:.1f} MB; {done['dropped_keys']} files of unused keys dropped")
        return 0
    return _audit(args)


def _audit(args) -> int:
    # heavy: these load models and scorers
    from toxlib.book_build.machine import kernel_facts
    from toxlib.common.progress import quiet_libraries
    from toxlib.record_tools.audit_file import resumable_audit
    from toxlib.record_tools.audit_outcome import outcome
    from toxlib.record_tools.audit_report import report_text
    from toxlib.record_tools.history import append_history, check_writable, history_line, scope_text
    from toxlib.store.record_reader import record_dir

    quiet_libraries()
    if args.history:
        check_writable(record_dir())
    run = resumable_audit(args.out, args.resume, n=args.slice, seed=args.seed, chapters=args.chapter,
                          kinds=args.kind, max_keys=args.keys, device=args.device)
    facts = kernel_facts()
    print(report_text(run, args.slice, args.seed, facts, args.out))
    if args.history:
        append_history(record_dir(), history_line(run.rows, scope_text(args.chapter, args.kind, args.keys),
                                                  args.slice, args.seed, facts))
    return 0 if outcome(run.rows)["passed"] else 1


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


def add_commands(sub) -> None:
    """``record status``, ``record write`` and ``record audit``."""
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
    audit.add_argument("--device", default=None,
                       help="recompute on this device (default: CUDA when available, else the CPU); on a GPU the "
                       "figures say how many of the record's CPU rows a GPU reproduces (its scorers' versions name "
                       "the GPU, so their keys are not audited there)")
    audit.add_argument("--out", help="also write the per-row comparison here (CSV, appended key by key; a file "
                       "that exists is refused unless --resume)")
    audit.add_argument("--resume", action="store_true", help="take the rows of the keys --out already holds (an "
                       "interrupted audit with the same slice and seed) instead of recomputing them, and count "
                       "those of this --chapter/--kind scope; keys it lists as not audited are tried again")
    audit.add_argument("--history", action="store_true", help="add this audit's line to data/record/audits.csv "
                       "(the methods page's reproducibility table)")
    record.set_defaults(func=_record)
