"""The SASS benchmark paper (Perspective against GPT-3 zero/one/few-shot): the sass chapter, and the SASS rows of the
scorers chapter.

  module                 job
  ``printed``            what the paper printed (Tables 3, 5, 6, 7: ``PAPER_TABLE3`` ...; ``PAPER``) and each
                         claim's cut-off (``RULES``)
  ``tables``             Tables 3, 5, 6, 7 from the recorded predictions, the paper's columns beside ours
  ``prompt_classifier``  a causal LM asked the paper's zero-, one- and few-shot questions, read two ways
  ``local_systems``      the tables with local LMs and toxlib's scorers beside the recorded systems
  ``paper_claims``       the chapter's claims (``claims``)
  ``prose``              what its exercise solutions quote
  ``captions``           its captions (``CAPTIONS``)

The names the chapters call are importable from here (``from toxlib.papers import sass``; ``sass.table3``).
"""

from toxlib.papers.sass.local_systems import (
    best_lm_system,
    best_per_model,
    classifier_table,
    lm_classifier_labels,
    tweet_table7,
    with_local_systems,
)
from toxlib.papers.sass.paper_claims import claims, f1_difference, prf_claim, share_interval
from toxlib.papers.sass.printed import (
    CATEGORY_ORDER,
    PAPER,
    PAPER_TABLE3,
    PAPER_TABLE5,
    PAPER_TABLE6,
    PAPER_TABLE7,
    RULES,
)
from toxlib.papers.sass.tables import (
    RECORDED_SYSTEMS,
    relabel,
    table3,
    table5,
    table6,
    table6_by_word_list,
    table7,
    with_paper,
    with_scorer_columns,
)

#: the paper's name, as the scorecard's list of rules names it
NAME = "SASS"

__all__ = ["NAME", "CATEGORY_ORDER", "PAPER", "PAPER_TABLE3", "PAPER_TABLE5", "PAPER_TABLE6", "PAPER_TABLE7",
           "RECORDED_SYSTEMS", "RULES", "best_lm_system", "best_per_model", "claims", "classifier_table",
           "f1_difference", "lm_classifier_labels", "prf_claim", "relabel", "share_interval", "table3", "table5",
           "table6", "table6_by_word_list", "table7", "tweet_table7", "with_local_systems", "with_paper",
           "with_scorer_columns"]
