"""The claims as a reader sees them: a narrow table (claim, our value with its interval, n, verdict; the paper's
value and the note on a second line under the claim) that fits a 1,366-pixel window without sideways scrolling; the
findings box at the top of a chapter (at most about ``FINDINGS_WORDS`` words: the counts, then the failing,
not-informative and undecided claims, each with its number, what the number is, and a link to its row); and the
scorecard's figures.

Numbers read the same everywhere (``value_with_interval``): a value and its interval share one number of decimals,
and a difference (a claim whose threshold is 0) carries its sign. Every text from a claim is escaped
(``toxlib.publish.escape``). The figure of each claim's interval is ``toxlib.publish.plots.claims_forest``.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from toxlib.chapters import chapter as declaration
from toxlib.chapters import chapters, model_chapters
from toxlib.metrics.uncertainty import VERDICTS
from toxlib.publish import escape, pages
from toxlib.publish.claims import MACHINE_KINDS, claims_summary, write_claims
from toxlib.publish.glue import glue_markdown
from toxlib.publish.plots import VERDICT_COLOURS, claims_forest
from toxlib.publish.results import csv_href
from toxlib.publish.tables import Table, csv_link, fixed_text, table_label

#: how the scorecard's headline opens the sentence of each kind of evidence (``claims.EVIDENCE_KINDS``)
KIND_OPENINGS = {"our models": "On our models", "recorded predictions": "On the authors' recorded predictions and data",
                 "paper arithmetic": "From the papers' own printed numbers",
                 "machine speed": "Measuring the machine that built this page (speed; not a claim about a model or a "
                                 "paper, and not counted above)"}
#: how the claims table names a kind of evidence where its name alone would not read well
KIND_LABELS = {"machine speed": "a speed of the machine that built the page"}
#: the findings box's length: claims are listed while the box stays within about this many words (the page adds a
#: line of links under it)
FINDINGS_WORDS = 110
#: the group of the claims of the chapters that run no paper's protocol on models (data, generation, scorers)
OWN_CHECKS = "Data, generation and scorers"
#: words kept for the last line ("and 3 more failing or undecided: see the claims table."; two more when it names
#: not-informative claims too)
TAIL_WORDS = 10
#: the verdicts the findings box lists claim by claim, in the order it lists them: a not-informative claim reads as
#: one that holds unless the reader is told, so it comes before the undecided ones
LISTED_VERDICTS = ("fails", "not informative", "undecided")
#: how the count sentences name claims of a verdict that is counted only where there is one (one claim, several)
RARE_VERDICTS = {"not informative": ("is not informative (a constant answer would earn it)",
                                     "are not informative (a constant answer would earn them)"),
                 "not judged": ("is not judged", "are not judged")}
#: a listed claim's text and what its number is are cut to these many words (the claims table has them whole)
CLAIM_WORDS, MEASURE_WORDS = 16, 10


def _number(value) -> float | None:
    """``value`` as a float (a number, or text that is one); None otherwise."""
    try:
        number = float(str(value).replace("−", "-")) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def decimals(*values: float) -> int:
    """Decimals for numbers of the size of the largest of ``values``: 4 below 0.01, 3 below 10, 1 below 1,000,
    else 0 (so a value and its interval share them)."""
    largest = max((abs(v) for v in values if v is not None), default=0.0)
    return 4 if 0 < largest < 0.01 else 3 if largest < 10 else 1 if largest < 1000 else 0


def thousands_separated(text) -> str:
    """A whole number written as text with thousands separators and a true minus sign ("6514" -> "6,514");
    any other text as it is ("max 0.497 (24 PTLMs)")."""
    text = str(text)
    if not re.fullmatch(r"[−-]?\d+", text):
        return text
    return fixed_text(int(text.replace("−", "-")), 0)


def value_with_interval(our_value, low, high, signed: bool = False) -> str:
    """Our value and its 95% interval as one string with one number of decimals for all three ("0.780 [0.741,
    0.823]"; with ``signed``, a difference: "+0.048 [+0.017, +0.080]"); the value alone when there is no interval;
    a value that is not a number as it is; thousands separated ("6,514")."""
    value, lo, hi = _number(our_value), _number(low), _number(high)
    if value is None:
        shown = str(our_value)
        return shown if lo is None or hi is None else f"{shown} [{fixed_text(lo, decimals(lo, hi), signed)}, " \
                                                      f"{fixed_text(hi, decimals(lo, hi), signed)}]"
    if lo is None or hi is None:
        if isinstance(our_value, float):
            return fixed_text(value, decimals(value), signed)
        return thousands_separated(our_value)
    places = decimals(value, lo, hi)
    return f"{fixed_text(value, places, signed)} [{fixed_text(lo, places, signed)}, {fixed_text(hi, places, signed)}]"


def is_difference(threshold) -> bool:
    """Whether a claim's number is a difference (its threshold, as claims.csv writes it, is 0)."""
    return _number(threshold) == 0.0


def reading(row) -> str:
    """A claim row's value as the reader sees it: ``shown`` (or ``our_value``) with its interval, signed for a
    difference."""
    value = row.get("shown", row.get("our_value"))
    return value_with_interval(value, row.get("ci_low"), row.get("ci_high"), is_difference(row.get("threshold")))


def compact_claims(claims: pd.DataFrame) -> pd.DataFrame:
    """The four columns a reader needs, from claims with the contract's columns (``claims.collect_claims`` or
    one chapter's ``write_claims``): claim, "our value [95% CI]" (``reading``), n, verdict, plus paper_value and
    note (led by the claim's kind of evidence) for the second line, and chapter and row where given. Rows in the
    given order."""
    out = pd.DataFrame({
        "claim": claims["claim"].astype(str).to_numpy(),
        "our value [95% CI]": [reading(row) for _, row in claims.iterrows()],
        "n": [("" if pd.isna(n) else f"{int(n):,}") for n in claims["n"]],
        "verdict": claims["verdict"].astype(str).to_numpy(),
        "paper_value": claims["paper_value"].astype(str).to_numpy(),
        "note": [f"{kind}; {note}" if kind and note else kind or note
                 for kind, note in zip(claims["kind"].fillna("").astype(str).map(lambda k: KIND_LABELS.get(k, k)),
                                       claims["note"].fillna("").astype(str))],
    })
    for column in ("row", "chapter"):
        if column in claims.columns:
            out.insert(0, column, claims[column].to_numpy())
    return out.reset_index(drop=True)


def show_claims(claims: pd.DataFrame, caption: str, csv: str | None = None, stem: str | None = None) -> Table:
    """A ``Table`` of ``compact_claims(claims)`` for a notebook: claim (wrapped) with "paper: ... · note" in small
    grey type beneath it, our value with its interval, n, and the verdict in colour; fixed column widths summing to
    the page's width, so nothing sits off-screen; ``csv`` (the claims' CSV relative to the page) linked at the
    caption's end. A chapter's own table (``stem``) gives each row the id its findings box and the scorecard link to
    (``pages.claim_anchor``); the scorecard's (claims with chapter and row) shows each chapter's title, linked to
    its claims table, and links each claim to its row there. A verdict's cell carries the classes ``tx-verdict
    tx-verdict-<verdict, hyphenated>``, by which the book's dark theme gives it a lighter colour
    (_static/tables.css). Raises ValueError on an empty table."""
    if claims.empty:
        raise ValueError(f"refusing to show an empty claims table ({caption!r}): no chapter wrote claims")
    table = compact_claims(claims)
    linked = {"chapter", "row"} <= set(table.columns)

    def claim_cell(row) -> str:
        under = f"paper: {thousands_separated(row['paper_value'])}" + (f" · {row['note']}" if row["note"] else "")
        text = escape.html(row["claim"])
        if linked:
            text = (f'<a href="{pages.chapter_href(row["chapter"])}#'
                    f'{pages.claim_anchor(row["chapter"], row["row"])}">{text}</a>')
        elif stem is not None:
            text = f'<span class="tx-anchor" id="{pages.claim_anchor(stem, row.name)}"></span>{text}'
        return f"{text}<br><span class='tx-under'>{escape.html(under)}</span>"

    shown = table[[c for c in ("chapter", "claim", "our value [95% CI]", "n", "verdict") if c in table.columns]]
    shown = shown.map(escape.html).assign(claim=table.apply(claim_cell, axis=1))
    if "chapter" in shown.columns:  # the chapter's title on its first row only: its claims follow it
        first = table["chapter"].ne(table["chapter"].shift())
        shown["chapter"] = [f'<a href="{pages.chapter_href(c)}#claims">{escape.html(pages.chapter_title(c))}</a>'
                            if new else "" for c, new in zip(table["chapter"], first)]
        if "paper" in claims.columns:  # grouped by paper (``by_paper``): the paper's name above its first chapter
            papers = claims["paper"].astype(str).to_numpy()
            starts = [i == 0 or papers[i] != papers[i - 1] for i in range(len(papers))]
            shown["chapter"] = [f'<strong class="tx-paper">{escape.html(p)}</strong><br>{cell}' if start else cell
                                for p, start, cell in zip(papers, starts, shown["chapter"])]
    widths = {"chapter": "15%", "claim": "45%", "our value [95% CI]": "19%", "n": "8%", "verdict": "13%"}
    if "chapter" not in shown.columns:
        widths["claim"] = "60%"
    styles = [
        {"selector": "", "props": "table-layout: fixed; width: 100%; border-collapse: collapse;"},
        {"selector": "td, th", "props": "padding: 3px 8px; vertical-align: top; overflow-wrap: break-word; "
                                        "white-space: normal;"},
    ]
    styles += [{"selector": f"th.col_heading.col{i}", "props": f"width: {widths[c]};"}
               for i, c in enumerate(shown.columns)]
    styler = (
        shown.style.hide(axis="index")
        .format(escape=None)
        .set_properties(subset=[c for c in shown.columns if c not in ("n", "our value [95% CI]")],
                        **{"text-align": "left"})
        .set_properties(subset=["n", "our value [95% CI]"], **{"text-align": "right"})
        .map(lambda v: f"color: {VERDICT_COLOURS.get(v, 'inherit')}; font-weight: bold;", subset=["verdict"])
        .set_td_classes(_verdict_classes(table["verdict"], shown.columns))
        .set_table_styles(styles)
        .set_uuid(f"claims{'-' + stem if stem else ''}")
    )
    return Table(styler, escape.caption(caption) + csv_link(csv), table_label(caption), kind="claims")


def by_paper(claims: pd.DataFrame) -> pd.DataFrame:
    """``claims`` (with a chapter column) grouped by paper: a ``paper`` column (``paper_of``; ``OWN_CHECKS`` for the
    chapters of data, generation and scorers), the papers in the book's order of their chapters, then the book's own
    checks; chapters in reading order (``toxlib.chapters.chapters``) within a paper, rows in their order within a
    chapter."""
    order = [c.stem for c in chapters()]
    papers = list(dict.fromkeys(paper_of(stem) for stem in model_chapters())) + [OWN_CHECKS]
    out = claims.assign(paper=[paper_of(stem) or OWN_CHECKS for stem in claims["chapter"]])
    rank = out["paper"].map(papers.index) * len(order) + out["chapter"].map(
        lambda stem: order.index(stem) if stem in order else len(order))
    return out.iloc[rank.argsort(kind="stable")].reset_index(drop=True)


def _verdict_classes(verdicts: pd.Series, columns) -> pd.DataFrame:
    """The cells' classes for ``Styler.set_td_classes``: "tx-verdict tx-verdict-<verdict>" (spaces as hyphens) in
    the verdict column, a known verdict only; nothing elsewhere."""
    classes = pd.DataFrame("", index=verdicts.index, columns=list(columns))
    classes["verdict"] = ["tx-verdict" + (f" tx-verdict-{v.replace(' ', '-')}" if v in VERDICTS else "")
                          for v in verdicts.astype(str)]
    return classes


def _verb(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _rare(count: dict, verdict: str) -> list[str]:
    """The words for ``count[verdict]`` claims of a ``RARE_VERDICTS`` verdict; none when there is none."""
    return [_verb(count[verdict], *RARE_VERDICTS[verdict])] if count.get(verdict) else []


def _cut(text: str, words: int) -> str:
    parts = str(text).split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _measure(note: str) -> str:
    """What a claim's number is: the first clause of its note ("relative change against base model on the same
    200 prompts"), cut to ``MEASURE_WORDS`` words."""
    first = str(note or "").split(";")[0].strip()
    return _cut(first, MEASURE_WORDS) if first else ""


def _against_paper(row) -> str:
    """For a failing claim, the paper's value it fails against (" against the paper's 6,541"), cut to
    ``CLAIM_WORDS`` words; nothing for other verdicts or a claim without a paper value."""
    paper = str(row.get("paper_value", "") or "").strip()
    if row.get("verdict") != "fails" or paper in ("", "nan"):
        return ""
    return f" against the paper's {_cut(thousands_separated(paper), CLAIM_WORDS)}"


def findings_html(claims: pd.DataFrame, stem: str | None = None, words: int = FINDINGS_WORDS) -> str:
    """A chapter's findings for the box at the top of its page, in at most about ``words`` words: how many claims
    fail, are undecided, are not informative (where any is: a constant answer would earn them), hold or are not
    judged (where any is); then the failing claims, the not-informative ones and the undecided ones
    (``LISTED_VERDICTS``; and a failed measurement of the machine, not counted), each with our number (a failing
    one with the paper's value it fails against), what the
    number is (the first clause of its note) and, given the chapter's ``stem``, a link to its row in the claims
    table; claims that do not fit are counted in a last line that links the table. ``claims``: the contract's
    columns (``write_claims`` output).

    An HTML block (a paragraph and a list, no blank line), which MyST passes through as it is: every text from a
    claim is escaped (``escape.html``), and, unlike markdown text, nothing in it is retyped (a generated "don't"
    keeps its straight apostrophe)."""
    machine = claims["kind"].isin(MACHINE_KINDS) if "kind" in claims.columns else pd.Series(False, claims.index)
    counted = claims[~machine]
    count = {v: int((counted["verdict"] == v).sum()) for v in VERDICTS}
    parts = [_verb(count["fails"], "fails", "fail"), _verb(count["undecided"], "is undecided", "are undecided"),
             *_rare(count, "not informative"), _verb(count["holds"], "holds", "hold"), *_rare(count, "not judged")]
    head = f"Of this chapter's {_verb(len(counted), 'claim', 'claims')}, {', '.join(parts[:-1])} and {parts[-1]}."
    if machine.any():
        head += f" Not counted: {_verb(int(machine.sum()), 'measurement', 'measurements')} of the machine that ran it."
    order = {verdict: i for i, verdict in enumerate(LISTED_VERDICTS)}
    listed = claims[claims["verdict"].isin(order)].assign(
        _o=lambda t: t["verdict"].map(order) + len(order) * t.get("kind", pd.Series("", t.index)).isin(MACHINE_KINDS))
    listed = listed.sort_values("_o", kind="stable")
    uninformative = bool((listed["verdict"] == "not informative").any())
    tail_words = TAIL_WORDS + 2 * uninformative
    items, used = [], len(head.split())
    for position, row in listed.iterrows():
        claim, measure = _cut(row["claim"], CLAIM_WORDS), _measure(row.get("note", ""))
        number = reading(row) + _against_paper(row)
        plain = f"{row['verdict']}: {claim}: ours {number}, {measure}"
        if items and used + len(plain.split()) > words - tail_words:
            break
        used += len(plain.split())
        text = escape.html(claim)
        if stem is not None:
            text = f'<a href="#{pages.claim_anchor(stem, position)}">{text}</a>'
        tail = f", {escape.html(measure)}" if measure else ""
        machine_note = " (a measurement of the machine that ran it, not counted)" if row.get(
            "kind") in MACHINE_KINDS else ""
        items.append(f"<li><strong>{escape.html(row['verdict'])}</strong>{machine_note}: {text}: ours "
                     f"{escape.html(number)}{tail}</li>")
    rest = len(listed) - len(items)
    table_link = '<a href="#claims">claims table</a>' if stem is not None else "claims table"
    if rest:
        which = "failing, not informative or undecided" if uninformative else "failing or undecided"
        items.append(f"<li>and {rest} more {which}: see the {table_link}.</li>")
    elif not items:
        items.append("<li>No claim fails or is undecided.</li>")
    return f'<p>{escape.html(head)}</p>\n<ul class="tx-findings">\n' + "\n".join(items) + "\n</ul>"


def publish_claims(stem: str, rows: list[dict], caption: str) -> None:
    """Write the chapter's claims (every column, ``claims.write_claims``), display the reader's narrow form under
    ``caption`` (``show_claims``: claim with paper value, kind and note beneath, our value with its interval, n,
    verdict; each row with its anchor), and glue ``findings_html`` as "<stem>-findings" for the findings box at the
    top of the page (a ``glue:md`` directive pastes it)."""
    from IPython.display import display  # optional: IPython comes with the [book] extra (a notebook's kernel)

    claims = write_claims(stem, rows)
    glue_markdown(f"{stem}-findings", findings_html(claims, stem))
    display(show_claims(claims, caption, csv=csv_href(stem, "claims"), stem=stem))


def forest_caption(chapter: str, skipped: int) -> str:
    """The caption of a chapter's forest figure on the scorecard."""
    text = (f"{pages.chapter_title(chapter)}: each claim's value (dot) and 95% interval (bar) on one scale, the "
            "threshold that separates holding from failing (grey mark; a shaded band for a claim that holds within "
            "a band) and, where the paper prints a number, the paper's value (open diamond); colour: the verdict")
    return text + (f". {skipped} claim(s) without a numeric value and threshold are in the table only." if skipped
                   else ".")


def forest_figures(claims: pd.DataFrame) -> list[tuple[str, object, str]]:
    """Per chapter of ``claims`` (``claims.collect_claims``) with a drawable claim (a numeric value with a
    threshold): (chapter, its ``plots.claims_forest`` figure, ``forest_caption``), in the order the chapters first
    appear in ``claims`` (``by_paper``: paper by paper). The scorecard saves each as forest_<chapter>.png and shows
    it in place."""
    drawn = []
    for chapter, rows in claims.groupby("chapter", sort=False):
        fig = claims_forest(rows, pages.chapter_title(str(chapter)))
        if fig is None:
            continue
        skipped = len(rows) - len(fig.axes[0].get_yticks())
        drawn.append((str(chapter), fig, forest_caption(str(chapter), skipped)))
    return drawn


def for_readers(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (a summary of claims) as a reader sees it: each chapter named by its title
    (``pages.chapter_title``) instead of its file's stem, each kind of evidence by ``KIND_LABELS``."""
    named = {"chapter": lambda c: c.map(pages.chapter_title), "kind": lambda k: k.map(lambda v: KIND_LABELS.get(v, v))}
    return table.assign(**{column: name(table[column]) for column, name in named.items() if column in table.columns})


def headline_sentence(claims: pd.DataFrame) -> str:
    """One sentence per kind of evidence, our models first: "On our models, 20 of 45 claims hold, 5 fail, 15 are
    undecided and 5 are not judged." (``claims.EVIDENCE_KINDS`` order; claims without a kind last). A kind with
    not-informative claims names them before the not-judged ones: "..., 13 are undecided, 2 are not informative (a
    constant answer would earn them) and 5 are not judged."
    """
    lines = []
    for counts in claims_summary(claims, by="kind").to_dict("records"):
        where = KIND_OPENINGS.get(counts["kind"], f"Of kind '{counts['kind']}'")
        if counts["kind"] in MACHINE_KINDS:
            lines.append(f"{where}: {counts['holds']} of {counts['total']} targets met.")
            continue
        lines.append(f"{where}, {_counts_sentence(counts)}")
    return " ".join(lines)


def _counts_sentence(counts: dict) -> str:
    """"20 of 45 claims hold, 5 fail, 15 are undecided and 5 are not judged." from one row of ``claims_summary``
    (a not-informative count named before the not-judged one, where there is one)."""
    parts = [_verb(counts["fails"], "fails", "fail"), _verb(counts["undecided"], "is undecided", "are undecided"),
             *_rare(counts, "not informative"), _verb(counts["not judged"], *RARE_VERDICTS["not judged"])]
    return f"{counts['holds']} of {counts['total']} claims hold, {', '.join(parts[:-1])} and {parts[-1]}."


def paper_of(stem: str) -> str | None:
    """The paper whose protocol chapter ``stem`` runs on models (its declaration's ``report.paper``); None for a
    chapter of data, generation or scorers, whose claims span the papers or concern the book's own tools."""
    declared = declaration(stem)
    return declared.report.paper if declared is not None and declared.report is not None else None


def paper_key(paper: str) -> str:
    """The glue key of ``paper``'s sentence: "scorecard-paper-" and its name in lower-case words joined by "-"
    ("Safety score (ToxiGen)" -> "scorecard-paper-safety-score-toxigen")."""
    return "scorecard-paper-" + "-".join(re.findall(r"[a-z0-9]+", paper.lower()))


def _by_paper(claims: pd.DataFrame) -> dict[str, str]:
    """{paper: its counts sentence} (``paper_sentences``), papers in the book's order of their chapters."""
    papers = claims.assign(paper=claims["chapter"].map(paper_of)).dropna(subset=["paper"])
    summary = claims_summary(papers, by="paper").set_index("paper")
    order = dict.fromkeys(paper_of(stem) for stem in model_chapters())  # paper_of is None for the other chapters
    return {paper: _counts_sentence(summary.loc[paper].to_dict()) for paper in order if paper in summary.index}


def paper_sentences(claims: pd.DataFrame) -> dict[str, str]:
    """Per paper, the counts of the claims of the chapters that run its protocol (``paper_of``; measurements of the
    machine left out), as one sentence under ``paper_key(paper)``, for the landing page: {key: "12 of 20 claims
    hold, ..."}, papers in the book's order of their chapters."""
    return {paper_key(paper): sentence for paper, sentence in _by_paper(claims).items()}


def paper_list(claims: pd.DataFrame) -> str:
    """The same counts as Markdown for the scorecard's first screen: a line saying what they count, then a list,
    "- **RealToxicityPrompts**: 18 of 27 claims hold, ..." (the papers' names are the chapters' declarations', not
    data)."""
    lines = [f"- **{paper}**: {sentence}" for paper, sentence in _by_paper(claims).items()]
    return "\n".join(["Paper by paper, from the chapters that run each paper's protocol:", "", *lines])
