"""Command line: ``python -m toxlib {data,chapters,run,book,report,score,train-scorer,serve,bench,record,settings}``
(see each ``--help``). The library's functions take arguments and return values; the modules here parse the command
line, call them and print.

  module       commands
  ``data``     data list, data fetch
  ``book``     chapters, run, book
  ``report``   report (a model's report card)
  ``scorers``  score, train-scorer, serve
  ``bench``    bench generate|ceilings|perplexity|self-debias|score|serve|record-cost|distributed
  ``record``   record status|write|audit
  ``settings`` settings (every environment variable toxlib reads)

Each command imports what it runs inside its function: ``toxlib --help`` and ``toxlib data`` start without torch,
and ``toxlib score`` works without the optional extras that ``run`` and ``book`` ([book]) and ``serve`` ([serve])
need.

May import: common, data, store, chapters, book_build, models, scorers, benchmarks, record_tools, reportcard.
"""

from __future__ import annotations

import argparse
import os
import sys

from toxlib.cli import bench, book, data, record, report, scorers, settings
from toxlib.cli.scorers import CLOSED_PIPE_EXIT
from toxlib.common.errors import ToxlibError

#: the exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)
INTERRUPTED_EXIT = 130


def parser() -> argparse.ArgumentParser:
    """The command line's parser: one subcommand per command of the modules above, each with its ``func``."""
    top = argparse.ArgumentParser(prog="python -m toxlib", description=__doc__.split("\n\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    for module in (data, book, report, scorers, bench, record, settings):
        module.add_commands(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "device", None) and args.command in ("run", "book"):
        os.environ["TOXLIB_DEVICE"] = args.device  # every stage of every chapter's kernel
    if getattr(args, "no_record", False):
        os.environ["TOXLIB_RECORD"] = "off"  # before any kernel starts, so the notebooks' kernels inherit it
    try:
        return args.func(args)
    except ToxlibError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback through whatever was running
        print("\ninterrupted: what was stored as it was computed (rows in the caches, a report's finished chapters) "
              "is kept, and the same command goes on from there", file=sys.stderr)
        return INTERRUPTED_EXIT
    except BrokenPipeError:  # the reader of the output has gone (| head): quiet, as Unix tools are
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE_EXIT


if __name__ == "__main__":
    sys.exit(main())
