"""argparse ``type`` functions that check a command-line value and, when it is out of range, make argparse stop
with ``argument --FLAG: <the value and what is allowed>`` (its usage line, exit 2) instead of letting the value
reach code that would fail later with a traceback or misbehave in silence.

    parser.add_argument("--port", type=integer_in(1, 65535, "a port number"))
    parser.add_argument("--timeout", type=positive_number("seconds", "5 or 0.5"))
"""

from __future__ import annotations

import argparse
import math
import re


def integer_in(low: int, high: int | None = None, what: str = "a whole number"):
    """A ``type`` accepting whole numbers in [low, high] (high None: no upper bound); returns int."""
    allowed = f"{what} from {low:,} to {high:,}" if high is not None else f"{what} of at least {low:,}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give {allowed}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range; give {allowed}")
        return value

    return parse


def positive_number(unit: str, example: str):
    """A ``type`` accepting finite numbers above 0 (of ``unit``, e.g. "seconds"); returns float."""
    allowed = f"a number of {unit} above 0 (e.g. {example})"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; give {allowed}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{text} is out of range; give {allowed}")
        return value

    return parse


def host_name(text: str) -> str:
    """A ``type`` accepting a non-empty host name or address without spaces."""
    if not text.strip() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a host; give an address such as 127.0.0.1 or a host name")
    return text


#: a short name of a model in a report: it names a folder under --out and a column of tables, so no path
SHORT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def short_model_name(text: str) -> str:
    """A ``type`` accepting a model's short name: letters, digits, ".", "_" and "-", starting with a letter or digit,
    at most 64 characters (no path: it becomes a folder's name)."""
    if not SHORT_NAME.fullmatch(text) or ".." in text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a short name; give letters, digits, '.', '_' or '-' (starting with a letter or digit, "
            "at most 64, no '..'), e.g. mine or smollm2-ft")
    return text
