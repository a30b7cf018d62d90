"""What the SASS paper printed (its Tables 3, 5, 6, 7 and two values of its text), and how each claim in its words
becomes a test on a number.

The printed tables are typed frames (values as fractions), each also a ``toxlib.papers.printed.Printed`` in
``PAPER`` with the table it comes from; ``RULES`` holds the cut-off that decides each claim
(``toxlib.papers.printed.Rule``).
"""

from __future__ import annotations

import pandas as pd

from toxlib.papers.printed import Printed, Rule

CATEGORY_ORDER = [
    "Blackmail", "Classism", "Exclusionary", "Gaslighting", "Misogyny", "Sarcasm",
    "Sexual Harassment", "Stereotyping", "Neutral", "False Positive",
]


# Printed in the paper (values as fractions).
PAPER_TABLE3 = pd.DataFrame(
    {
        "system": ["PERSPECTIVE", "GPT-3-ZERO", "GPT-3-ONE", "GPT-3-FEW"],
        "precision": [0.26, 0.83, 0.77, 0.73],
        "recall": [0.05, 0.19, 0.11, 0.52],
        "f1": [0.08, 0.31, 0.19, 0.61],
    }
)


PAPER_TABLE5 = pd.DataFrame(
    {
        "category": CATEGORY_ORDER,
        "human": [0.682, 0.787, 0.836, 0.565, 0.787, 0.665, 0.80, 0.814, 0.007, 0.054],
        "perspective": [0.157, 0.193, 0.234, 0.155, 0.222, 0.337, 0.219, 0.317, 0.104, 0.809],
        "gpt3_zero": [0.40, 0.208, 0.12, 0.16, 0.292, 0.08, 0.16, 0.12, 0.0, 0.25],
        "gpt3_one": [0.40, 0.0, 0.24, 0.0, 0.083, 0.0, 0.04, 0.0, 0.0, 0.25],
        "gpt3_few": [0.69, 0.542, 0.64, 0.44, 0.583, 0.32, 0.32, 0.40, 0.28, 0.792],
    }
)


PAPER_TABLE6 = pd.DataFrame(
    {
        "system": ["PERSPECTIVE", "GPT-3-ZERO", "GPT-3-ONE", "GPT-3-FEW"],
        "p_swear_given_toxic": [0.53, 0.14, 0.15, 0.12],
        "p_toxic_given_swear": [1.0, 0.33, 0.22, 0.83],
    }
)


PAPER_TABLE7 = pd.DataFrame(
    {"system": ["PERSPECTIVE", "GPT-3-FEW"], "precision": [0.40, 0.41], "recall": [0.62, 0.69], "f1": [0.48, 0.52]}
)


#: §3's design: 10 categories, each with 15 "filtered" and 10 "unfiltered" comments.
PAPER_CATEGORIES, PAPER_FILTERED, PAPER_UNFILTERED = 10, 15, 10


#: Every value of the paper the chapter (and the datasets chapter, ``toxlib.studies.datasets``) uses, with the table
#: or section it comes from (PAPER_TABLE3 ... are the same frames).
PAPER = {
    "table3": Printed(PAPER_TABLE3, "Table 3"),
    "table5": Printed(PAPER_TABLE5, "Table 5"),
    "table6": Printed(PAPER_TABLE6, "Table 6"),
    "table7": Printed(PAPER_TABLE7, "Table 7"),
    "sexual_harassment": Printed("0.219 vs 0.80", "Table 5",
                                 quote="21.9% for “Sexual Harassment” comments versus the 80% human baseline"),
    "swear_comments": Printed(18, "§5.2, Table 6",
                              quote="includes 18 “False Positive” examples that contain swear words. PERSPECTIVE "
                                    "rated all of them as toxic"),
    # the datasets chapter
    "design": Printed(f"{PAPER_CATEGORIES} x ({PAPER_FILTERED} + {PAPER_UNFILTERED})", "§3",
                      quote="For each category, the benchmark contains 15 “filtered” and 10 “unfiltered” examples",
                      derived="10 categories: §3's \"250 manually created natural language examples across 10 nuanced "
                              "'toxicity' categories\""),
    "share_toxic_labels": Printed(0.724, "§3",
                                  quote="The binarized ground truth human labels on SASS contain 72.4% toxic labels",
                                  derived="72.4% as a share: 0.724"),
}


#: How each claim of the SASS chapter and of the scorers chapter's SASS rows turns the paper's words into a test
#: on a number (``Rule.printed`` names the PAPER value it reads).
RULES = {
    "beats_in_f1": Rule("table3", 0.0, "above", "'beats' (F1): the F1 difference above 0, paired over comments"),
    "sexual_harassment": Rule("sexual_harassment", 0.005, "within",
                              "the recorded mean Perspective toxicity equals the paper's 21.9% to 0.005 (rounding)"),
    "flags_every_swear_comment": Rule("swear_comments", 0.8, "above",
                                      "'rated all of them as toxic': p(flagged | contains a swear word) above 0.8 "
                                      "(LDNOOBW finds other comments than the paper's unpublished method)"),
    "swear_given_flagged": Rule("table6", 0.05, "within",
                                "p(swear word | flagged) within 0.05 of the paper's Table 6 value"),
}
