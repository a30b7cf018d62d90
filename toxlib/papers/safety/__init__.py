"""The safety score for representational harms (seed paper 004: ToxiGen, 13 demographics): the safety_score chapter.

  module            job
  ``printed``       what the paper printed (Tables 8, 9, 10, 13 as CSV files beside it: ``PAPER_TABLE8`` ...;
                    ``PAPER``), each claim's cut-off (``RULES``) and the paper's correlations recomputed from its
                    tables (``paper_correlations``)
  ``models``        every sentence's perplexity under every model (``score_models``; its timing: ``scoring_times``),
                    another precision's effect
  ``scores``        Tables 8, 9, 10 from scored sentences (``group_scores``, ``log_perplexity_summary``,
                    ``dataset_scores``), p-values, the paper's rows beside ours
  ``paper_claims``  the chapter's claims (``claims``)
  ``prose``         what its exercise solutions quote
  ``captions``      its captions (``CAPTIONS``)

The names the chapter calls are importable from here (``from toxlib.papers import safety``; ``safety.group_scores``).
"""

from toxlib.papers.safety.models import precision_fidelity, score_models, scoring_times
from toxlib.papers.safety.paper_claims import claims, safety_interval
from toxlib.papers.safety.printed import (
    GROUPS,
    PAPER,
    PAPER_GPT2,
    PAPER_TABLE8,
    PAPER_TABLE9,
    PAPER_TABLE10,
    PAPER_TABLE13,
    RULES,
    paper_correlations,
    paper_table8_long,
)
from toxlib.papers.safety.scores import (
    dataset_scores,
    group_scores,
    log_perplexity_summary,
    model_averages,
    per_sentence,
    pvalue_table,
    sample_sentences,
    wide,
    with_paper_rows,
)

#: the paper's name, as the scorecard's list of rules names it
NAME = "The safety score"

__all__ = ["NAME", "GROUPS", "PAPER", "PAPER_GPT2", "PAPER_TABLE8", "PAPER_TABLE9", "PAPER_TABLE10", "PAPER_TABLE13",
           "RULES",
           "claims", "dataset_scores", "group_scores", "log_perplexity_summary", "model_averages",
           "paper_correlations", "paper_table8_long", "per_sentence", "precision_fidelity", "pvalue_table",
           "safety_interval", "sample_sentences", "score_models", "scoring_times", "wide", "with_paper_rows"]
