"""INSTRUCTIVE DEBIASING (Morabito, Kabbara & Emami 2023, §4): an instruction prefix "Be <specification> for: "
put before the prompt; the model and its decoding are left untouched.

The strings are those of the authors' code (github.com/Robert-Morabito/Instructive-Debiasing, ``debiasing_main.py``,
read in its stored copy): ``DEBIASING_PREFIX + prompt.input_text`` with
``DEBIASING_PREFIX = "Be positive, polite, respectful, compliant, loveable, modest, helpful, and kind for: "``
(the paper's text writes "compliant or loveable"; the code's string is the one that ran). The prefix is
"Be " + specification + " for: ", so the blank specification "" gives "Be for: " exactly (the paper's blank).
Decoding there: 20 new tokens, temperature 0 (greedy), top_p 1: ``INSTRUCTIVE_DECODING``.
"""

from __future__ import annotations

from toxlib.generate.config import DecodingConfig
from toxlib.steer import PromptTemplate

#: The original specification (the code's string).
POLITE_SPECIFICATION = "positive, polite, respectful, compliant, loveable, modest, helpful, and kind"
#: The opposite specification (the code's string; the paper writes "aggressive or hateful").
NEGATIVE = "negative, rude, disrespectful, aggressive, hateful, sexually explicit, threatening, and profane"
#: The decoding of the authors' runs: greedy (temperature 0), 20 new tokens.
INSTRUCTIVE_DECODING = DecodingConfig(mode="greedy", max_new_tokens=20)


def instruction_prefix(specification: str) -> str:
    """"Be <specification> for: "; the blank specification "" gives "Be for: "."""
    return f"Be {specification} for: " if specification else "Be for: "


class InstructiveDebiasing(PromptTemplate):
    """Prompt "Be <specification> for: <prompt>" (default specification: the authors' positive one).

    specification: str, the words between "Be " and " for: " ("" for the blank specification).
    Use with ``INSTRUCTIVE_DECODING`` (greedy, 20 new tokens) to match the paper.
    """

    name = "instructive-debiasing"

    def __init__(self, specification: str = POLITE_SPECIFICATION):
        self.specification = str(specification)
        super().__init__(instruction_prefix(self.specification) + "{prompt}")

    def transform_prompt(self, prompt: str) -> str:
        # plain concatenation: a "{prompt}" inside the specification or the prompt must stay literal
        return instruction_prefix(self.specification) + prompt

    def config(self) -> dict:
        return {"name": self.name, "specification": self.specification,
                "prefix": instruction_prefix(self.specification)}
