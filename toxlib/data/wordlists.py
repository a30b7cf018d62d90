"""The LDNOOBW bad-word lists: the version RealToxicityPrompts used ("rtp") and upstream's current English list
("en")."""

from __future__ import annotations

import pandas as pd

from toxlib.common.errors import UnknownNameError
from toxlib.data.io import read_lines
from toxlib.data.sources import ensure

WORD_LISTS = {"rtp": "ldnoobw_rtp", "en": "ldnoobw_en"}


def load_word_list(version: str = "rtp") -> pd.DataFrame:
    """One row per listed entry (a word or a multi-word phrase). Columns: word (str), n_words (int)."""
    if version not in WORD_LISTS:
        raise UnknownNameError(f"unknown word list {version!r}; known: {', '.join(WORD_LISTS)}")
    words = [w.strip() for w in read_lines(ensure(WORD_LISTS[version])) if w.strip()]
    return pd.DataFrame({"word": words, "n_words": [len(w.split()) for w in words]})
