"""RealToxicityPrompts' detoxification experiment (§5, Table 3; Appendix, Table 10): the rtp_detox chapter.

  module           job
  ``split``        the data split: evaluation prompts, labelled corpus, perplexity texts (``detox_split``)
  ``weights``      VOCAB-SHIFT's weights and PPLM's discriminator, trained once and kept
  ``runs``         each method as (model, steering); its scored generations (``scored_run``); training rows
  ``table3``       Table 3 in the paper's layout (``table3_wide``), each method's most toxic continuation
  ``perplexity``   perplexity of held-out text under each method (Table 10)
  ``paper_claims`` the chapter's claims (``claims``)
  ``prose``        what its exercise solutions quote (``exercise_prose``)
  ``captions``     its captions (``CAPTIONS``)

The methods themselves live in ``toxlib.steer`` (decoding-based) and ``toxlib.steer.adapt`` (data-based); Table 3's
numbers are ``toxlib.papers.rtp.table2(..., by="method")``. The names the chapter calls are importable from here
(``from toxlib.papers.rtp import detox``; ``detox.detox_split``).
"""

from toxlib.papers.rtp.detox.paper_claims import claims
from toxlib.papers.rtp.detox.perplexity import perplexity_row, perplexity_table
from toxlib.papers.rtp.detox.prose import exercise_prose
from toxlib.papers.rtp.detox.runs import CLASSES, DETOXIFIERS, method_runs, scored_run, training_row
from toxlib.papers.rtp.detox.split import PERPLEXITY_RECORDS, DetoxSplit, detox_split
from toxlib.papers.rtp.detox.table3 import table3_wide, worst_continuations
from toxlib.papers.rtp.detox.weights import discriminator, vocab_shift_weights

__all__ = ["CLASSES", "DETOXIFIERS", "PERPLEXITY_RECORDS", "DetoxSplit", "claims", "detox_split", "discriminator",
           "exercise_prose", "method_runs", "perplexity_row", "perplexity_table", "scored_run", "table3_wide",
           "training_row", "vocab_shift_weights", "worst_continuations"]
