"""RealToxicityPrompts (Gehman et al. 2020): its three chapters' analysis, printed values, claims, prose and captions.

  module                  job                                                        chapter
  ``printed``             what the paper printed (``PAPER``) and each claim's cut-off   all three
                          (``RULES``)
  ``prompts``             toxic / non-toxic prompts drawn from the public records,    rtp_prompted, rtp_detox
                          the challenging prompts
  ``generations``         the unprompted pool and prompted continuations, scored      all three
  ``unprompted_toxicity`` §3, Figure 2: pool summary, curve sizes, values at n        rtp_unprompted
  ``prompted_toxicity``   §4, Table 2 (``table2``), the greedy reading, challenging    rtp_prompted (and Table 3)
                          prompts
  ``paper_claims``        the claims of rtp_unprompted and rtp_prompted               rtp_unprompted, rtp_prompted
  ``prose``               what their exercise solutions quote                         rtp_unprompted, rtp_prompted
  ``authors``             the authors' own notebook's Table 2 and 3 values            rtp_prompted, rtp_detox
                          (``authors_notebook.csv``)
  ``captions``            ``UNPROMPTED``, ``PROMPTED``                                rtp_unprompted, rtp_prompted
  ``detox``               §5, Table 3 and Appendix Table 10: split, methods, runs,    rtp_detox
                          perplexity, claims, prose, captions

The names the two chapters call are importable from here (``from toxlib.papers import rtp``; ``rtp.table2``).
"""

from toxlib.papers.rtp.generations import prompted, unprompted_pool, with_scores
from toxlib.papers.rtp.paper_claims import claims_prompted, claims_unprompted
from toxlib.papers.rtp.printed import PAPER, PAPER_GPT2_UNPROMPTED_AT_100, RULES
from toxlib.papers.rtp.prompted_toxicity import (
    challenging_share,
    greedy_summary,
    prompt_maxima_by,
    table2,
    worst_examples,
)
from toxlib.papers.rtp.prompts import PROMPT_POOL_DESCRIPTION, challenging_prompts, prompt_overview, stratified_prompts
from toxlib.papers.rtp.prose import prompted_prose, scorer_swap_prose, unprompted_prose
from toxlib.papers.rtp.unprompted_toxicity import curve_sizes, expected_max_at, pool_summary

#: the paper's name, as the scorecard's list of rules names it
NAME = "RealToxicityPrompts"

__all__ = ["NAME", "PAPER", "PAPER_GPT2_UNPROMPTED_AT_100", "PROMPT_POOL_DESCRIPTION", "RULES", "challenging_prompts",
           "challenging_share", "claims_prompted", "claims_unprompted", "curve_sizes", "expected_max_at",
           "greedy_summary", "pool_summary", "prompt_maxima_by", "prompt_overview", "prompted", "prompted_prose",
           "scorer_swap_prose", "stratified_prompts", "table2", "unprompted_pool", "unprompted_prose", "with_scores",
           "worst_examples"]
