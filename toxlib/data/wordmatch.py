"""Finding listed words (for example LDNOOBW entries) in texts: whole words or phrases, case-insensitive.

An entry matches when it is not glued to a letter or digit on either side, so "ass" matches "you ass!" but not
"class"; inflections count only when the list spells them ("fucking" needs its own entry).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np


def _text(value) -> str:
    """A text, or "" for a missing one (None or NaN): a missing text contains no word."""
    return value if isinstance(value, str) else ""


def listed_word_pattern(words: Iterable[str]) -> re.Pattern:
    """A compiled regex matching any of ``words`` as a whole word or phrase (longest entries tried first)."""
    entries = sorted({w.strip().lower() for w in words if w.strip()}, key=len, reverse=True)
    if not entries:
        raise ValueError("the word list is empty")
    alternatives = "|".join(r"\s+".join(map(re.escape, e.split())) for e in entries)
    return re.compile(rf"(?<![a-z0-9])(?:{alternatives})(?![a-z0-9])", re.IGNORECASE)


def find_listed_words(texts: Iterable[str], words: Iterable[str]) -> list[list[str]]:
    """For each text, the listed entries it contains (lower-cased, in order of appearance)."""
    pattern = listed_word_pattern(words)
    return [[m.group(0).lower() for m in pattern.finditer(_text(t))] for t in texts]


def contains_listed_word(texts: Iterable[str], words: Iterable[str]) -> np.ndarray:
    """Boolean array, shape (n_texts,): whether each text contains at least one listed entry."""
    pattern = listed_word_pattern(words)
    return np.array([bool(pattern.search(_text(t))) for t in texts], dtype=bool)
