"""The claims as a reader sees them: a narrow table (claim, our value with its interval, n, verdict; the paper's
value and the note on a second line under the claim) that fits a 1300-pixel window without sideways scrolling.

The figure of each claim's interval against its threshold is ``toxlib.report.plots.claims_forest``.
"""

from __future__ import annotations

import html
import math

import matplotlib.pyplot as plt
import pandas as pd

from toxlib.metrics.uncertainty import VERDICTS
from toxlib.report.claims import MACHINE_KINDS, claims_summary, write_claims
from toxlib.report.glue import glue_markdown
from toxlib.report.plots import VERDICT_COLOURS, claims_forest
from toxlib.report.results import csv_href, save_figure
from toxlib.report.tables import csv_link

#: how the scorecard's headline opens the sentence of each kind of evidence (``claims.KINDS``)
KIND_OPENINGS = {"our models": "On our models", "recorded predictions": "On the authors' recorded predictions and data",
                 "paper arithmetic": "From the papers' own printed numbers",
                 "machine speed": "Measuring the machine that built this page (speed; not a claim about a model or a "
                                 "paper, and not counted above)"}


def value_with_interval(our_value, low, high, digits: int = 3) -> str:
    """Our value and its 95% interval as one string, "0.78 [0.74, 0.82]"; the value alone when there is no
    interval. The bounds are rounded to ``digits`` significant digits (the value is shown as stored)."""
    if low is None or high is None or any(isinstance(b, float) and math.isnan(b) for b in (low, high)):
        return str(our_value)
    return f"{our_value} [{float(low):.{digits}g}, {float(high):.{digits}g}]"


def compact_claims(claims: pd.DataFrame) -> pd.DataFrame:
    """The four columns a reader needs, from claims with the contract's columns (``claims.collect_claims`` or
    one chapter's ``write_claims``): claim, "our value [95% CI]" (the shown value), n, verdict, plus paper_value
    and note (led by the claim's kind of evidence) for the second line. Rows in the given order."""
    out = pd.DataFrame({
        "claim": claims["claim"].astype(str),
        "our value [95% CI]": [value_with_interval(v, lo, hi) for v, lo, hi in
                               zip(claims["shown"], claims["ci_low"], claims["ci_high"])],
        "n": [("" if pd.isna(n) else f"{int(n):,}") for n in claims["n"]],
        "verdict": claims["verdict"].astype(str),
        "paper_value": claims["paper_value"].astype(str),
        "note": [f"{kind}; {note}" if kind and note else kind or note
                 for kind, note in zip(claims["kind"].fillna("").astype(str), claims["note"].fillna("").astype(str))],
    })
    if "chapter" in claims.columns:
        out.insert(0, "chapter", claims["chapter"].astype(str))
    return out.reset_index(drop=True)


def show_claims(claims: pd.DataFrame, caption: str, csv: str | None = None):
    """A Styler of ``compact_claims(claims)`` for a notebook: claim (wrapped) with "paper: ... · note" in small grey
    type beneath it, our value with its interval, n, and the verdict in colour; fixed column widths summing to
    the page's width, so nothing sits off-screen; ``csv`` (the claims' CSV relative to the page) linked at the
    caption's end. Raises ValueError on an empty table."""
    if claims.empty:
        raise ValueError(f"refusing to show an empty claims table ({caption!r}): no chapter wrote claims")
    table = compact_claims(claims)

    def two_lines(row) -> str:
        under = f"paper: {row['paper_value']}" + (f" · {row['note']}" if row["note"] else "")
        return (f"{html.escape(row['claim'])}<br><span style='font-size: 0.85em; color: #57606a;'>"
                f"{html.escape(under)}</span>")

    shown = table.drop(columns=["paper_value", "note"]).map(html.escape).assign(claim=table.apply(two_lines, axis=1))
    widths = {"chapter": "13%", "claim": "45%", "our value [95% CI]": "20%", "n": "9%", "verdict": "13%"}
    if "chapter" not in shown.columns:
        widths["claim"] = "58%"
    styles = [
        {"selector": "", "props": "table-layout: fixed; width: 100%; border-collapse: collapse;"},
        {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold;"},
        {"selector": "td, th", "props": "padding: 3px 8px; vertical-align: top; overflow-wrap: break-word; "
                                        "white-space: normal;"},
    ]
    styles += [{"selector": f"th.col_heading.col{i}", "props": f"width: {widths[c]};"}
               for i, c in enumerate(shown.columns)]
    return (
        shown.style.hide(axis="index")
        .format(escape=None)
        .set_properties(subset=[c for c in shown.columns if c not in ("n", "our value [95% CI]")],
                        **{"text-align": "left"})
        .set_properties(subset=["n", "our value [95% CI]"], **{"text-align": "right"})
        .map(lambda v: f"color: {VERDICT_COLOURS.get(v, 'inherit')}; font-weight: bold;", subset=["verdict"])
        .set_caption(html.escape(caption) + csv_link(csv))
        .set_table_styles(styles)
    )


PLURAL = {"holds": "hold", "fails": "fail"}  # "3 hold, 1 fails, 2 undecided"


def findings_markdown(claims: pd.DataFrame) -> str:
    """A chapter's findings as MyST markdown, for the box at the top of its page: how many claims hold, fail, are
    undecided or not judged, then one line per claim, decided ones first: verdict, claim, the paper's value and ours
    with its interval. ``claims``: the contract's columns (``write_claims`` output)."""
    machine = claims["kind"].isin(MACHINE_KINDS) if "kind" in claims.columns else claims["verdict"].isna()
    counts = claims.loc[~machine, "verdict"].value_counts()
    head = (f"Of this chapter's {int((~machine).sum())} claims, "
            + ", ".join(f"{counts.get(v, 0)} {v if counts.get(v, 0) == 1 else PLURAL.get(v, v)}" for v in VERDICTS)
            + "." + (f" Not counted: {int(machine.sum())} measurement(s) of the machine that ran it." if machine.any()
                     else ""))
    order = {v: i for i, v in enumerate(VERDICTS)}
    lines = []
    for _, row in claims.assign(_o=claims["verdict"].map(order)).sort_values("_o", kind="stable").iterrows():
        ours = value_with_interval(row["shown"], row["ci_low"], row["ci_high"])
        measured = (" (a speed of the machine that built the page, not counted)" if row.get("kind") in MACHINE_KINDS
                    else "")
        lines.append(f"- **{row['verdict']}**: {_md(row['claim'])}{measured} (paper: {_md(row['paper_value'])}; "
                     f"ours: {_md(ours)})")
    return head + "\n\n" + "\n".join(lines)


def _md(text) -> str:
    """``text`` with the characters markdown would read as markup escaped."""
    return "".join("\\" + c if c in "\\`*_[]<>|#" else c for c in str(text))


def publish_claims(stem: str, rows: list[dict], caption: str) -> None:
    """Write the chapter's claims (every column, ``claims.write_claims``), display the reader's narrow form under
    ``caption`` (``show_claims``: claim with paper value, kind and note beneath, our value with its interval, n,
    verdict), and glue ``findings_markdown`` as "<stem>-findings" for the findings box at the top of the page."""
    from IPython.display import display  # optional: IPython comes with the [book] extra (a notebook's kernel)

    claims = write_claims(stem, rows)
    glue_markdown(f"{stem}-findings", findings_markdown(claims))
    display(show_claims(claims, caption, csv=csv_href(stem, "claims")))


def publish_forests(claims: pd.DataFrame, stem: str = "scorecard") -> list[str]:
    """Per chapter of ``claims`` (``claims.collect_claims``): ``plots.claims_forest``, saved as
    <results>/<stem>/forest_<chapter>.png and shown in the notebook. Chapters with no drawable claim (no numeric
    value with a threshold) are skipped. Returns the chapters drawn, in order."""
    from IPython.display import display  # optional: IPython comes with the [book] extra (a notebook's kernel)

    drawn = []
    for chapter, rows in claims.groupby("chapter", sort=True):
        fig = claims_forest(rows, f"{chapter}: each claim's 95% interval against its threshold")
        if fig is None:
            continue
        save_figure(stem, f"forest_{chapter}", fig)
        display(fig)
        plt.close(fig)
        drawn.append(str(chapter))
    return drawn


def headline(claims: pd.DataFrame) -> str:
    """One sentence per kind of evidence, our models first: "On our models, 20 of 45 claims hold, 5 fail, 15 are
    undecided and 5 are not judged." (``claims.KINDS`` order; claims without a kind last)."""
    lines = []
    for counts in claims_summary(claims, by="kind").to_dict("records"):
        where = KIND_OPENINGS.get(counts["kind"], f"Of kind '{counts['kind']}'")
        if counts["kind"] in MACHINE_KINDS:
            lines.append(f"{where}: {counts['holds']} of {counts['total']} targets met.")
            continue
        fails, undecided, unjudged = counts["fails"], counts["undecided"], counts["not judged"]
        lines.append(f"{where}, {counts['holds']} of {counts['total']} claims hold, {fails} "
                     f"{'fails' if fails == 1 else 'fail'}, {undecided} {'is' if undecided == 1 else 'are'} undecided "
                     f"and {unjudged} {'is' if unjudged == 1 else 'are'} not judged.")
    return " ".join(lines)
