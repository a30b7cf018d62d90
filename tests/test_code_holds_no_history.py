"""The code states what it guarantees, not its history: no docstring or comment in toxlib/ holds a date
(2026-11-27) or an issue number ("issue 33", "#33"). Dates, measurements and the history of a change go to
CHANGELOG.md or the benchmarks page (benchmarks/README.md)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "toxlib"
HISTORY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\bissues? \d+|(?<![\w&])#\d+\b", re.IGNORECASE)


def prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a module's source."""
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                found.append((node.body[0].lineno, doc))
    return found


def history_in(source: str) -> list[str]:
    return [f"line {line}: {match.group(0)!r}" for line, text in prose(source) for match in HISTORY.finditer(text)]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_docstring_or_comment_holds_a_date_or_an_issue_number(path):
    assert history_in(path.read_text(encoding="utf-8")) == []


def test_the_check_can_fail():
    source = ('"""Faster since 2026-11-27."""\n\n'
              "x = 1  # see issue 33\n"
              "y = '#33 in a string is not prose'\n\n"
              "def f():\n    \"\"\"Fixed in #12.\"\"\"\n")
    assert history_in(source) == ["line 3: 'issue 33'", "line 1: '2026-11-27'", "line 7: '#12'"]
