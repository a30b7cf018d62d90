"""The papers' values as the book quotes them occur in the papers' texts (``../shared/papers/``), and every claim's
cut-off is declared beside the printed value it reads (each paper module's ``RULES``), none typed into a claims
function."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from toxlib.papers import claim_rules, papers, rtp, safety, sass
from toxlib.papers.printed import Printed, Rule
from toxlib.papers.rtp.detox import paper_claims as rtp_detox_claims

PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"
#: paper -> its text file in ../shared/papers (see its README.md)
TEXT_FILES = {"RealToxicityPrompts": "001_33a70ad1d7e9ec77.txt", "SASS": "002_3293f94c7d48a32a.txt",
              "Debiasing should be Good and Bad": "003_af3f8ca5a0a64616.txt",
              "The safety score": "004_78007bfc22aec778.txt"}


def _rules_module(package):
    """The module of a paper's package that defines its PAPER and RULES (``printed``, or ``findings``)."""
    return next(importlib.import_module(f"{package.__name__}.{part}") for part in ("printed", "findings")
                if importlib.util.find_spec(f"{package.__name__}.{part}") is not None)


#: paper -> its module holding PAPER and RULES, for every paper's folder the registry of papers finds
PAPER_MODULES = {package.NAME: _rules_module(package) for package in papers()}


def _normalised(text: str) -> str:
    """NFKC (ligatures such as "ﬁ" become "fi"), straight quotes, one space for every run of white space."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "−": "-"}))
    return re.sub(r"\s+", " ", text).strip()


def paper_text(paper: str) -> tuple[str, str]:
    """The paper's text normalised, as extracted and with words hyphenated across lines joined again."""
    path = PAPERS / TEXT_FILES[paper]
    if not path.exists():
        pytest.skip(f"{path} is not here (the papers live in ../shared/papers)")
    raw = path.read_text()
    return _normalised(raw), _normalised(re.sub(r"-\n", "", raw))


def occurs(quote: str, paper: str) -> bool:
    return any(_normalised(quote) in text for text in paper_text(paper))


def _number_forms(x: float) -> set[str]:
    forms = set()
    if float(x).is_integer():
        forms |= {str(int(x)), f"{int(x):,}"}
    for digits in range(1, 5):
        s = f"{x:.{digits}f}"
        forms |= {s, s.replace("0.", ".", 1), s.replace("-0.", "-.", 1)}
    return forms


def _numbers(value) -> list[float]:
    """Every number in a printed table (a DataFrame, or dicts of numbers); booleans are check marks, not numbers."""
    if isinstance(value, pd.DataFrame):
        cells = value.select_dtypes("number").to_numpy().ravel().tolist()
    elif isinstance(value, dict):
        cells = [c for v in value.values() for c in _numbers(v)]
    else:
        cells = [value]
    return [float(c) for c in cells if isinstance(c, (int, float)) and not isinstance(c, bool) and c == c]


def _printed_values():
    for paper, module in PAPER_MODULES.items():
        for name, printed in module.PAPER.items():
            yield pytest.param(paper, printed, id=f"{module.__name__.split('.')[2]}.{name}")


@pytest.mark.data
@pytest.mark.parametrize("paper,printed", list(_printed_values()))
def test_every_quoted_value_occurs_in_the_paper_or_says_how_it_was_read(paper, printed: Printed):
    text = " ".join(paper_text(paper))
    if isinstance(printed.value, (pd.DataFrame, dict)):
        numbers = _numbers(printed.value)
        missing = [x for x in numbers if not any(f in text for f in _number_forms(x))]
        if numbers:
            assert not missing, f"{printed.source}: {missing[:5]} do not occur in the paper's text"
        else:  # a table of check marks: its reading must be said
            assert printed.derived or printed.quote, f"{printed.source}: say how it was read (derived=...)"
        return
    assert printed.quote or printed.derived, f"{printed.value!r} ({printed.source}): give the paper's words " \
                                             "(quote=...) or how the value was read off it (derived=...)"
    if printed.quote:
        assert occurs(printed.quote, paper), f"quote not in the paper's text: {printed.quote!r}"
    if isinstance(printed.value, (int, float)) and not printed.derived:
        assert any(f in _normalised(printed.quote) for f in _number_forms(printed.value)), \
            f"the number {printed.value} is not in its quote {printed.quote!r}"


@pytest.mark.data
def test_a_quote_the_paper_does_not_hold_is_caught():
    assert occurs("all five language models can degenerate into toxicity of over 0.5 within 100 generations",
                  "RealToxicityPrompts")
    assert not occurs("327 of 1,225 prompts", "RealToxicityPrompts")  # the ratio the paper never printed
    assert not occurs("all five language models can degenerate into toxicity of over 0.6", "RealToxicityPrompts")


def test_every_rule_reads_a_printed_value_of_its_own_module():
    for paper, module in PAPER_MODULES.items():
        assert module.RULES, f"{module.__name__} declares no RULES"
        for name, rule in module.RULES.items():
            assert isinstance(rule, Rule) and rule.printed in module.PAPER, f"{module.__name__}.RULES[{name!r}]"
            assert rule.reading, f"{module.__name__}.RULES[{name!r}] says nothing of how it reads the paper"
    table = claim_rules()
    assert len(table) == sum(len(m.RULES) for m in PAPER_MODULES.values())
    assert table["reading"].str.len().min() > 0 and table["quote"].str.len().min() > 0


@pytest.mark.parametrize("module", [*PAPER_MODULES.values(), rtp.paper_claims, rtp_detox_claims, sass.paper_claims,
                                    sass.local_systems, safety.paper_claims], ids=lambda m: m.__name__)
def test_no_claims_function_types_its_own_cutoff(module):
    """A threshold passed to ``claim`` comes from RULES (``**RULES[...].test()``), never a number in the code."""
    typed = []
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.keyword) and node.arg == "threshold":
            literal = node.value
            if isinstance(literal, ast.UnaryOp):
                literal = literal.operand
            if isinstance(literal, (ast.Constant, ast.Tuple)):
                typed.append(f"line {node.lineno}: threshold={ast.unparse(node.value)}")
    assert typed == []


def test_a_rule_turns_into_the_claims_threshold():
    assert Rule("x", 0.4).test() == {"threshold": 0.4, "direction": "above"}
    assert Rule("x", 0.05, "within").test(0.53) == {"threshold": (0.48, 0.58), "direction": "within"}
    assert Rule("x", 1.5, "below").holds(1.2) and not Rule("x", 1.5, "below").holds(1.7)
    assert Rule("x", (0.1, 0.2), "within").holds(0.15)
    with pytest.raises(ValueError, match="direction"):
        Rule("x", 0.5, "sideways")
    with pytest.raises(ValueError, match="needs the value it is around"):
        Rule("x", 0.05, "within").threshold()
