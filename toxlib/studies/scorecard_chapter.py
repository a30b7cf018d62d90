"""The scorecard page (``book/scorecard.ipynb``) computed: ``compute(values, models)`` returns its
``ChapterResult``.

Every chapter's claims as they stand under ``results_dir()`` (``toxlib.publish.claims.collect_claims``): the
headline sentence and the paper-by-paper list the landing page pastes, the summaries by evidence and by chapter,
every claim (or only those that do not hold) paper by paper, one forest figure per chapter, and the rules that turn
the papers' words into numbers. ``values``: every parameter of ``toxlib/chapters/scorecard.py``, checked;
``models``: unused.
"""

from __future__ import annotations

from toxlib.models.source import Models
from toxlib.papers import claim_rules
from toxlib.publish import scorecard
from toxlib.publish.captions.scorecard import CAPTIONS
from toxlib.publish.chapter_result import ChapterResult
from toxlib.publish.claims import claims_summary, collect_claims
from toxlib.publish.results import csv_href

_STEM = "scorecard"


def markdown(text: str):
    """``text`` as a Markdown block a notebook renders."""
    from IPython.display import Markdown  # optional: IPython comes with the [book] extra

    return Markdown(text)


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult(_STEM, v)
    caption = CAPTIONS.bind()
    claims = collect_claims()
    headline = scorecard.headline_sentence(claims)
    out.add_display("headline", lambda: markdown(headline))
    out.add_prose({"scorecard-papers": scorecard.paper_list(claims)}, markdown=True)  # the box under the title
    out.add_prose({"scorecard-headline": headline, **scorecard.paper_sentences(claims)})  # the landing page's
    out.add_table("summary_by_kind", scorecard.for_readers(claims_summary(claims, by="kind")),
                  caption("summary_by_kind", n_claims=len(claims)))
    out.add_table("summary", scorecard.for_readers(claims_summary(claims)), caption("summary"))
    out.add_table("all_claims", claims, shown=False)
    shown = claims[claims["verdict"].ne("holds")] if v["only_failures"] else claims
    out.add_display("claims_by_paper", lambda: scorecard.show_claims(scorecard.by_paper(shown), caption("all_claims"),
                                                                     csv=csv_href(_STEM, "all_claims")))
    forests = scorecard.forest_figures(scorecard.by_paper(claims))
    for chapter, fig, forest_caption in forests:
        out.add_figure(f"forest_{chapter}", lambda fig=fig: fig, numbered=False, caption=forest_caption)
    out.add_figure_group("forests", [f"forest_{chapter}" for chapter, _, _ in forests])
    out.add_table("claim_rules", claim_rules(), caption("claim_rules"),
                  columns=["paper", "quote", "cutoff", "direction", "reading"])
    return out
