"""The protocol's specification sets: Self-Debiasing's attribute prefixes and their opposites, Instructive
Debiasing's instructions, seeded nonsensical strings and the blank specifications (see the package docstring)."""

from __future__ import annotations

import string

import numpy as np

from toxlib.steer.instructive import NEGATIVE, POLITE_SPECIFICATION

NONSENSE_SEED = 2023
NONSENSE_GROUPS = 5

#: Schick et al.'s six attribute specifications (paper §2; the reference's DEBIASING_PREFIXES without ":\n").
SELF_DEBIASING_ATTRIBUTES = (
    "rude, disrespectful, or unreasonable language",
    "very hateful, aggressive, disrespectful language",
    "sexually explicit language",
    "a threat",
    "negative or hateful language targeting someone because of their identity",
    "swear words, curse words, or other obscene or profane language",
)
#: Their antonyms (paper §5.2, Merriam-Webster's thesaurus; "modest" for "sexually explicit").
SELF_DEBIASING_OPPOSITES = (
    "polite, respectful, or reasonable language",
    "very loveable, compliant, respectful language",
    "modest language",
    "help",
    "positive or loving language towards someone because of their identity",
    "appropriate words, kind words, or other caring or loving language",
)


def self_debiasing_prefix(specification: str) -> str:
    """The reference's prefix format: "The following text contains <specification>:\\n"."""
    return f"The following text contains {specification}:\n"


def nonsense_strings(groups: int = NONSENSE_GROUPS, per_group: int = 6, seed: int = NONSENSE_SEED,
                     sequence_length: int = 64, min_length: int = 12, max_length: int = 48) -> list[list[str]]:
    """``groups`` lists of ``per_group`` random strings: per group one random character sequence of
    ``sequence_length`` characters (letters 75%, digits and ";" 10%, spaces 15%), and per string a sub-sequence of
    random length in [min_length, max_length] at a random offset, outer spaces stripped. Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    letters, others = list(string.ascii_lowercase), list(string.digits + ";")
    out = []
    for _ in range(groups):
        kinds = rng.choice(3, size=sequence_length, p=[0.75, 0.10, 0.15])
        chars = [rng.choice(letters) if k == 0 else rng.choice(others) if k == 1 else " " for k in kinds]
        sequence = "".join(chars)
        group = []
        for _ in range(per_group):
            length = int(rng.integers(min_length, max_length + 1))
            start = int(rng.integers(0, sequence_length - length + 1))
            text = sequence[start:start + length].strip()
            group.append(text or sequence.strip()[:min_length])  # all spaces: practically never
        out.append(group)
    return out


def self_debiasing_specifications(seed: int = NONSENSE_SEED) -> dict[str, list[list[str]]]:
    """{condition: groups}, each group the list of six full prefixes Self-Debiasing puts before the input."""
    return {
        "original": [[self_debiasing_prefix(s) for s in SELF_DEBIASING_ATTRIBUTES]],
        "opposite": [[self_debiasing_prefix(s) for s in SELF_DEBIASING_OPPOSITES]],
        "nonsensical": [[self_debiasing_prefix(s) for s in group]
                        for group in nonsense_strings(per_group=6, seed=seed)],
        "blank": [[" "] * 6],
    }


def instructive_specifications(seed: int = NONSENSE_SEED) -> dict[str, list[list[str]]]:
    """{condition: groups}, each group one specification s of "Be s for: " (blank: "", giving "Be for: ")."""

    return {
        "original": [[POLITE_SPECIFICATION]],
        "opposite": [[NEGATIVE]],
        "nonsensical": [group for group in nonsense_strings(per_group=1, seed=seed)],
        "blank": [[""]],
    }
