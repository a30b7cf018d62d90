"""What a paper printed, where it printed it, and how a claim in its words becomes a test on a number.

``Printed`` is the one format for the papers' values that claims compare with: the value, its table or section,
and either ``quote`` (the paper's own words, checked against the paper's text in ``../shared/papers/`` by
``tests/papers/test_paper_quotes.py``) or ``derived`` (how the value is read off the paper where no words of it
carry the value: a table whose numbers the text extraction lost, a figure). ``Rule`` is the cut-off that decides a
claim, declared beside the printed value it reads (each paper module's ``RULES``, next to its ``PAPER``), so one
file per paper shows every claim's rule; ``toxlib.papers.claim_rules`` collects them for the book.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toxlib.metrics.uncertainty import DIRECTIONS


@dataclass(frozen=True)
class Printed:
    """A value as the paper prints it (a number, a table, or the paper's own wording when it gives no number) and
    ``source``, the table, figure or section it comes from (e.g. "Table 3", "§4.2"). ``quote``: the words of the
    paper that state it, as they occur in its text; ``derived``: how it was read off the paper otherwise."""

    value: Any
    source: str
    quote: str = ""
    derived: str = ""

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Rule:
    """How a claim in the paper's words becomes a test on one number.

    printed: the key of the ``PAPER`` value (same module) the claim reads. cutoff: the value separating holding
    from failing; with direction "within", either a (low, high) band or a half-width around a value given to
    ``test`` (the printed value, say). direction: which side holds ("above", "below", "within"). reading: why that
    number reads the paper's words (shown in the scorecard chapter's table of rules)."""

    printed: str
    cutoff: float | tuple[float, float]
    direction: str = "above"
    reading: str = ""

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(f"Rule direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}")
        if isinstance(self.cutoff, tuple) and (self.direction != "within" or len(self.cutoff) != 2):
            raise ValueError(f"a (low, high) cutoff goes with direction 'within', got {self.cutoff!r}, "
                             f"{self.direction!r}")

    def threshold(self, around: float | None = None) -> float | tuple[float, float]:
        """The claim's threshold: the cutoff, or for a half-width "within" rule the band around ``around``."""
        if self.direction == "within" and not isinstance(self.cutoff, tuple):
            if around is None:
                raise ValueError("a 'within' rule with a half-width needs the value it is around")
            return (round(around - self.cutoff, 12), round(around + self.cutoff, 12))
        return self.cutoff

    def test(self, around: float | None = None) -> dict:
        """The keyword arguments of ``toxlib.publish.claims.claim`` that apply this rule: threshold, direction."""
        return {"threshold": self.threshold(around), "direction": self.direction}

    def holds(self, value: float, around: float | None = None) -> bool:
        """Whether ``value`` itself (an exact fact, no interval) lies on the holding side."""
        threshold = self.threshold(around)
        if self.direction == "within":
            return threshold[0] <= value <= threshold[1]
        return value > threshold if self.direction == "above" else value < threshold
