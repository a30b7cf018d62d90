"""The four papers, one home each: the paper's printed values, its analysis functions and the claims its chapters
May import: common, store, data, metrics, executors, models, generate, steer, scorers, report.
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
value as printed, a number, the paper's words or a table, and the table or section it comes from); claims quote
these, never a number typed into a notebook.

Chapter-only studies (datasets, generation, scorers) live in ``toxlib.studies``.
"""
