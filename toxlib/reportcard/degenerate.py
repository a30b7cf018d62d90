"""Whether a report's verdict rests on a model that answered the SASS questions as a constant would: the sass
chapter's claims say so in their note (``toxlib.papers.sass.paper_claims.DEGENERATE_MARK``, from
``classifier_table``'s ``degenerate`` column: one answer for more than 95% of the comments, or a P(True) share that
does not vary), naming the systems. A report marks those verdicts (†), as it marks those resting on text outside the
scorer's domain (*)."""

from __future__ import annotations

from toxlib.papers.sass.paper_claims import DEGENERATE_MARK


def mark_degenerate(rows: list[dict]) -> list[dict]:
    """``rows`` (report rows) with ``degenerate`` True where the claim's note says it rests on degenerate readings,
    False elsewhere."""
    return [{**row, "degenerate": DEGENERATE_MARK in str(row.get("note", ""))} for row in rows]
