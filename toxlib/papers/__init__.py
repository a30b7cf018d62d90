"""The four papers, one folder each: the paper's printed values, its analysis (split by job), the claims its chapters
check, the prose its exercise solutions quote and its chapters' captions.

  paper                                                   folder             chapters
  RealToxicityPrompts (Gehman et al. 2020)                ``rtp/``           rtp_unprompted (§3, Figure 2),
                                                                             rtp_prompted (§4, Table 2),
                                                          ``rtp/detox/``     rtp_detox (§5, Table 3; Table 10)
  SASS benchmark (seed paper 002)                         ``sass/``          sass (Tables 3, 5, 6, 7), scorers
  Debiasing should be Good and Bad (Morabito et al. 2023) ``debias/``        debias_consistency (§3-§6, Tables 3-5, 12)
  The safety score (seed paper 004)                       ``safety/``        safety_score (Tables 4, 8, 9, 10, 13)

Every folder has the same parts: ``printed`` (or ``debias.findings``) holds ``PAPER``, each value the chapters use as
a ``printed.Printed`` (the value as printed, the table or section it comes from, and the paper's words or how the
value was read off it), and ``RULES``, the cut-off that turns each claim in the paper's words into a test on a
number (``printed.Rule``); ``paper_claims`` (``debias.findings``) computes the claims rows of the chapter's
claims.csv; ``prose`` what the exercise solutions quote; ``captions`` the chapter's ``CAPTIONS``. Printed tables
are data files in the folder, read by pandas. Claims quote printed values, never a number typed into a notebook;
``claim_rules()`` lists every rule. Chapter-only studies (datasets, generation, scorers) live in ``toxlib.studies``.

May import: common, store, data, metrics, models, generate, steer, scorers, publish, benchmarks (the committed
timings a chapter shows).
"""


import pandas as pd  # noqa: E402  (below the docstring's table of modules)

from toxlib.papers.debias import findings  # noqa: E402
from toxlib.papers.rtp import printed as rtp_printed  # noqa: E402
from toxlib.papers.safety import printed as safety_printed  # noqa: E402
from toxlib.papers.sass import printed as sass_printed  # noqa: E402

#: paper -> its module holding PAPER and RULES
PAPER_MODULES = {"RealToxicityPrompts": rtp_printed, "SASS": sass_printed, "Debiasing should be Good and Bad": findings,
                 "The safety score": safety_printed}


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
