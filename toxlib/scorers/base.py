"""The scorer protocol: every scorer turns texts into one column per attribute in [0, 1], named as Perspective
names them, with its name and version on every row, cached by (scorer, version, text).

A scorer subclass sets ``name``, ``version`` and ``attributes`` and implements ``score_batch``; ``Scorer.score``
adds what every scorer needs: input checks, de-duplication, the score cache, chunking (one cache transaction per
chunk, so an interrupted run resumes where it stopped), a progress bar, and the output table.

Input: a list (or Series, tuple, ...) of str. Anything else in it (None, a number, NaN) raises TypeError naming its
position, and a bare string raises TypeError rather than being scored character by character. An empty or
whitespace-only text is not sent to the scorer: it gets NaN in every column with the error ``EMPTY_TEXT`` (there is
nothing to judge; Perspective itself refuses an empty comment). It is not cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from toxlib.common.progress import tqdm
from toxlib.executors.blocks import chunked_rows, set_threads
from toxlib.store.cache import ScoreStore

#: The error of an empty or whitespace-only text (scored NaN, never sent to a scorer).
EMPTY_TEXT = "empty or whitespace-only text: nothing to score"

#: Perspective's attribute names, the column names of every score table (a scorer has a subset of them).
ATTRIBUTES = ("toxicity", "severe_toxicity", "sexually_explicit", "threat", "profanity", "identity_attack",
              "insult", "flirtation")


#: the columns of a ``Scorer.score`` table that are not attributes
META_COLUMNS = ("scorer", "version", "error")


def attribute_columns(scores: pd.DataFrame) -> list[str]:
    """The attribute columns of a ``Scorer.score`` table."""
    return [c for c in scores.columns if c not in META_COLUMNS]


def headline_column(scores: pd.DataFrame) -> str:
    """The column that stands for "toxicity" in a score table: toxicity if the scorer has it, else its first
    attribute (profanity-svm's one offensive-language probability)."""
    columns = attribute_columns(scores)
    return "toxicity" if "toxicity" in columns else columns[0]


def score_all(scorers: dict, texts, progress: bool = True) -> dict[str, pd.DataFrame]:
    """{label: ``Scorer.score`` table} for each {label: Scorer} on the same texts (cached as usual)."""
    return {label: scorer.score(texts, progress=progress) for label, scorer in scorers.items()}


@dataclass
class BatchScores:
    """What ``Scorer.score_batch`` returns for n texts.

    values: (n, len(attributes)) float, NaN where a text has no score; errors: n entries, None or the reason a
    text has no score; keep: n booleans, False for failures that a later run should retry (time-outs, rate limits),
    which are therefore not cached.
    """

    values: np.ndarray
    errors: list[str | None] = field(default_factory=list)
    keep: list[bool] = field(default_factory=list)

    def __post_init__(self):
        n = len(self.values)
        self.errors = self.errors or [None] * n
        self.keep = self.keep or [True] * n


def check_texts(texts) -> list[str]:
    """``texts`` as a list of str; TypeError for a bare string or bytes, a non-iterable, or an element that is not
    a str (its position, type and value in the message)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"texts must be a list of strings, got a single {type(texts).__name__} "
                        f"({str(texts)[:40]!r}); wrap it in a list: score([text])")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"texts must be a list of strings, got {type(texts).__name__}") from None
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__} {text!r}, not str; every text must be a string "
                            "(drop or fill missing values first, e.g. series.dropna() or series.fillna(''))")
    return texts


class Scorer:
    """Base class. Subclasses set ``name``, ``version``, ``attributes`` and implement ``score_batch``.

    ``chunk_size``: texts per ``score_batch`` call (one cache write and one progress step each). Texts are sorted by
    length before chunking so that padded batches inside a chunk waste little.
    """

    name: str = ""
    version: str = ""
    attributes: tuple[str, ...] = ()
    chunk_size: int = 512
    description: str = ""
    #: how much of a text the scorer reads: None (all of it), or this many of its units (``window_unit``) from the
    #: ``window_side`` ("first" or "last") end; ``truncation`` says which texts are longer
    window: int | None = None
    window_unit: str = "tokens"
    window_side: str = "first"

    @property
    def key(self) -> str:
        """The cache key of this scorer's scores: "<name>@<version>"."""
        return f"{self.name}@{self.version}"

    def score_batch(self, texts: list[str]) -> BatchScores:
        raise NotImplementedError

    def text_lengths(self, texts: list[str]) -> list[int]:
        """Each text's length in ``window_unit``, as the scorer counts it; only scorers with a ``window`` need it."""
        raise NotImplementedError(f"{type(self).__name__} sets a window but does not count its units")

    def truncation(self, texts: list[str]) -> list[tuple[int, int] | None]:
        """For each text, None when the scorer reads all of it, else (units read, units in the text): a text longer
        than ``window`` is scored on ``window`` of its units, the rest unseen."""
        if self.window is None:
            return [None] * len(texts)
        return [(self.window, n) if n > self.window else None for n in self.text_lengths(list(texts))]

    def batch_keys(self, texts: list[str]) -> list:
        """A key per text: texts with equal keys can share one ``score_batch`` forward pass (``toxlib serve`` pools
        them across requests). The base class: one key for all."""
        return [0] * len(texts)

    def batch_rows(self, key) -> int:
        """The most texts of batch key ``key`` one ``score_batch`` call should take (the base class: ``chunk_size``)."""
        return self.chunk_size

    def agreement(self) -> dict | None:
        """The scorer's measured agreement with Perspective, as shipped with its weights, or None when none was
        measured: {"reference", "texts", "attributes": {attribute: {pearson, spearman, auc, calibration_error, n,
        n_positive}}}. The base class measured nothing."""
        return None

    def _store_chunk(self, chunk: list[str], result: BatchScores, found: dict, store: ScoreStore | None) -> None:
        """Put a chunk's scores into ``found`` and its cacheable rows into ``store`` (one transaction)."""
        rows = []
        for i, text in enumerate(chunk):
            failed = result.errors[i] is not None  # a failure never becomes a number, whatever values says
            values = {a: (None if failed or np.isnan(v) else float(v))
                      for a, v in zip(self.attributes, result.values[i])}
            found[text] = (values, result.errors[i])
            if result.keep[i]:
                rows.append((text, values, result.errors[i]))
        if store and rows:
            store.add(self.key, rows)

    def score(self, texts, cache: bool | ScoreStore = True, progress: bool = True, executor=None) -> pd.DataFrame:
        """Score ``texts`` (a list or Series of str; TypeError for anything else, see ``check_texts``).

        Returns one row per input text, in order (index 0..n-1), with columns: one per attribute in
        ``self.attributes`` (float in [0, 1], NaN where the text could not be scored), ``scorer``, ``version`` and
        ``error`` (None, or why the text has no score; ``EMPTY_TEXT`` for an empty or whitespace-only text).
        ``cache``: True for the default store under ``toxlib.store.paths.cache_dir()``, a ``ScoreStore``, or False to
        score everything afresh without storing. ``executor``: where missing texts are scored (None:
        ``TOXLIB_EXECUTOR``, default "local"; "ray" or a ``toxlib.executors.RayExecutor``: blocks scored by Ray
        actors, rows stored here in the same cache).
        """
        texts = check_texts(texts)
        unique = list(dict.fromkeys(texts))
        empty = {t: ({a: None for a in self.attributes}, EMPTY_TEXT) for t in unique if not t.strip()}
        unique = [t for t in unique if t not in empty]
        store = ScoreStore() if cache is True else (cache or None)
        found: dict[str, tuple[dict, str | None]] = store.lookup(self.key, unique) if (store and unique) else {}
        # a stored row must hold every attribute of this scorer (an old or foreign row under the same key does not)
        found = {t: row for t, row in found.items() if set(self.attributes) <= set(row[0])}
        todo = sorted((t for t in unique if t not in found), key=len)
        bar = tqdm(total=len(unique), initial=len(unique) - len(todo), disable=not progress, unit="text",
                   desc=f"scoring ({self.name})")
        try:
            for chunk, result in chunked_rows(todo, self.chunk_size, self.score_batch, ScoreJob(self), executor,
                                              what=f"score {self.name}"):
                self._store_chunk(chunk, result, found, store)
                bar.update(len(chunk))
        finally:
            bar.close()
            if store and cache is True:
                store.close()
        found.update(empty)
        table = pd.DataFrame([{a: found[t][0].get(a) for a in self.attributes} for t in texts],
                             columns=list(self.attributes), dtype=float)
        table["scorer"] = self.name
        table["version"] = self.version
        table["error"] = [found[t][1] for t in texts]
        return table


@dataclass
class ScoreJob:
    """Scoring of a block of texts on a Ray actor (see ``toxlib.executors.blocks``): the scorer's ``BatchScores``.
    The scorer object travels once; a lazily loading scorer loads its weights once per actor."""

    scorer: object

    def loaded_from(self):
        return self.scorer

    def load(self, device: str, threads: int | None):
        set_threads(threads)
        return self.scorer

    def run(self, scorer, texts: list[str]):
        return scorer.score_batch(texts)
