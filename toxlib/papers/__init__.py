"""The four papers, one home each: the paper's printed values, its analysis functions and the claims its chapters
check (``claims*`` functions return the rows of a chapter's claims.csv).

  paper                                                   module                 sections -> chapter
  RealToxicityPrompts (Gehman et al. 2020)                ``rtp``                §3 Fig. 2 -> rtp_unprompted;
                                                                                 §4 Table 2 -> rtp_prompted
                                                          ``rtp_detox``          §5 Table 3, App. Table 10 -> rtp_detox
  SASS benchmark (seed paper 002)                         ``sass``               Tables 3, 5, 6, 7 -> sass
                                                          ``prompt_classifier``  §4 zero/one/few-shot prompts -> sass
  Debiasing should be Good and Bad (Morabito et al. 2023) ``debias`` (package)   §3-§6, Tables 3-5, 12
                                                                                 -> debias_consistency
  The safety score (seed paper 004)                       ``safety``             Tables 4, 8, 9, 10, 13 -> safety_score

Printed values have one format everywhere: each paper module's ``PAPER`` maps a name to a ``printed.Printed`` (the
value as printed, a number, the paper's words or a table, the table or section it comes from, and the paper's own
words or how the value was read off it); claims quote these, never a number typed into a notebook. Beside
``PAPER``, each module's ``RULES`` holds the cut-off that turns each claim in the paper's words into a test on a
number (``printed.Rule``); ``claim_rules()`` lists them all.

The captions a paper chapter gives its tables and figures are templates in ``toxlib.papers.captions.<chapter>``.
Chapter-only studies (datasets, generation, scorers) live in ``toxlib.studies``.

May import: common, store, data, metrics, executors, models, generate, steer, scorers, report.
"""


import pandas as pd  # noqa: E402  (below the docstring's table of modules)

from toxlib.papers import rtp, safety, sass  # noqa: E402
from toxlib.papers.debias import findings  # noqa: E402

#: paper -> its module holding PAPER and RULES
PAPER_MODULES = {"RealToxicityPrompts": rtp, "SASS": sass, "Debiasing should be Good and Bad": findings,
                 "The safety score": safety}


def claim_rules() -> pd.DataFrame:
    """Every claim rule of the four papers, one row each: paper, rule (its name in the module's RULES), printed
    (the value it reads, as printed; a table's name for a table), source (table or section), quote (the paper's
    words, or how the value was read off it), cutoff, direction, reading (why that number reads the paper's
    words). Rows in the modules' order."""
    rows = []
    for paper, module in PAPER_MODULES.items():
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
