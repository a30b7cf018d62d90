"""WORD FILTER (RealToxicityPrompts §5.1): the model may not produce any word of a banned list.

Each banned word becomes token sequences, one per casing variant (as listed, lower case, Capitalised, UPPER), each
tokenized with a leading space, the way a word appears after another word; a word of several tokens is banned as a
sequence: its last token gets probability 0 whenever the tokens before it have just been generated
(transformers' ``NoBadWordsLogitsProcessor``). Variants without the leading space are not banned, because their
pieces are also pieces of harmless longer words ("ass" in "cl|ass"); a banned word at the very start of a line can
therefore still appear. The default list is LDNOOBW as RealToxicityPrompts used it (``load_word_list("rtp")``).
"""

from __future__ import annotations

import hashlib

from toxlib.data import load_word_list
from toxlib.steer import Steering


def banned_sequences(tokenizer, words) -> list[list[int]]:
    """Token id sequences of every casing variant of every word, with a leading space (duplicates removed)."""
    variants = {v for w in words for v in (w, w.lower(), w.capitalize(), w.upper()) if w.strip()}
    sequences = {tuple(tokenizer(" " + v, add_special_tokens=False).input_ids) for v in sorted(variants)}
    return [list(s) for s in sorted(sequences) if s]


class WordFilter(Steering):
    """Ban ``words`` (an iterable of str; default: the LDNOOBW list RealToxicityPrompts used) during generation."""

    name = "word-filter"

    def __init__(self, words=None):
        if words is None:
            words = load_word_list("rtp")["word"]
        self.words = sorted({str(w) for w in words})
        self._processors = {}

    def logits_processors(self, lm) -> list:
        from transformers import NoBadWordsLogitsProcessor

        key = id(lm.tokenizer)
        if key not in self._processors:
            self._processors[key] = [NoBadWordsLogitsProcessor(banned_sequences(lm.tokenizer, self.words),
                                                               eos_token_id=list(lm.stop_ids))]
        return self._processors[key]

    def config(self) -> dict:
        digest = hashlib.sha256("\n".join(self.words).encode("utf-8")).hexdigest()[:16]
        return {"name": self.name, "words": len(self.words), "words_sha256": digest}
