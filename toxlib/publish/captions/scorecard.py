"""Captions of the scorecard page (``book/scorecard.ipynb``). Computed in the page: ``n_claims``."""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("scorecard", {
    "summary_by_kind": "Claims by the evidence they rest on ({n_claims} in all): holds, fails, undecided (the "
                       "interval contains the threshold), not informative (a trivial baseline, such as a constant "
                       "answer, earns it too) or not judged",
    "summary": "Claims per chapter: holds, fails, undecided, not informative or not judged",
    "all_claims": "All claims, paper by paper (then the book's own checks of data, generation and scorers): our "
                  "value with its 95% interval, n and verdict; paper value and note beneath",
    "claim_rules": "Each rule: the paper's words (or how the value was read off the paper), the cut-off and the side "
                   "that holds, and why that number reads the words",
})
