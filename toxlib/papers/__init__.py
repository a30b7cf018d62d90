"""The papers, one folder each (a subpackage), found by discovery: a paper's folder holds what it printed, its
analysis (split by job), the claims its chapters check, the prose its exercise solutions quote, its chapters'
captions and the compute function of each of its chapters (``chapter.py``, or ``<name>_chapter.py`` where a paper
has several chapters), which its chapters' declarations name (``toxlib.chapters``). Which folder serves which
chapter is read from those declarations; nothing here lists them.

Every folder's package exports ``NAME`` (the paper's name as the scorecard's rules table gives it), ``PAPER``,
each value the chapters use as a ``printed.Printed`` (the value as printed, the table or section it comes from, and
the paper's words or how the value was read off it), and ``RULES``, the cut-off that turns each claim in the paper's
words into a test on a number (``printed.Rule``). Its modules: ``printed`` (or ``findings``, which holds the
claims too) for ``PAPER`` and ``RULES``; ``paper_claims`` the rows of the chapter's claims.csv; ``prose`` what the
exercise solutions quote; ``captions`` the chapter's ``CAPTIONS``. Printed tables are data files in the folder,
read by pandas. Claims quote printed values, never a number typed into a notebook; ``claim_rules()`` lists every
rule. Chapter-only studies (data, generation, scorers) live in ``toxlib.studies``.

May import: common, store, data, metrics, models, generate, steer, scorers, publish, benchmarks, chapters (the
committed timings a chapter shows; the chapters' declarations, which order the papers).
"""

import importlib
import math
import pkgutil

import pandas as pd

from toxlib.chapters import chapters


def papers() -> list:
    """Every paper's package (``toxlib.papers.<folder>``), in the reading order of the first chapter whose compute
    function lives in it (``toxlib.chapters``); a folder no chapter computes in comes last."""
    found = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
             if info.ispkg]
    first: dict[str, float] = {}
    for declared in chapters():
        module = declared.compute.partition(":")[0]
        for package in found:
            if module.startswith(package.__name__ + "."):
                first.setdefault(package.__name__, declared.order)
    return sorted(found, key=lambda package: (first.get(package.__name__, math.inf), package.__name__))


def claim_rules() -> pd.DataFrame:
    """Every claim rule of the four papers, one row each: paper, rule (its name in the module's RULES), printed
    (the value it reads, as printed; a table's name for a table), source (table or section), quote (the paper's
    words, or how the value was read off it), cutoff, direction, reading (why that number reads the paper's
    words). Rows in the order of ``papers()``, each paper's rules in its ``RULES`` order."""
    rows = []
    for module in papers():
        paper = module.NAME
        for name, rule in module.RULES.items():
            printed = module.PAPER[rule.printed]
            table = isinstance(printed.value, (pd.DataFrame, dict))
            shown = f"{printed.source} (a table)" if table else printed.value
            cutoff = "..".join(f"{c:g}" for c in rule.cutoff) if isinstance(rule.cutoff, tuple) else (
                f"± {rule.cutoff:g} around the printed value" if rule.direction == "within" else f"{rule.cutoff:g}")
            rows.append({"paper": paper, "rule": name, "printed": str(shown), "source": printed.source,
                         "quote": printed.quote or printed.derived or f"{printed.source} as printed (its numbers "
                                                                      "checked against the paper's text)",
                         "cutoff": cutoff, "direction": rule.direction,
                         "reading": rule.reading})
    return pd.DataFrame(rows)
