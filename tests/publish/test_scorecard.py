"""The reader's view of the claims: the compact table and the interval figure (toxlib.publish.scorecard,
plots.claims_forest)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from toxlib.publish import claims as claim_rows  # noqa: E402
from toxlib.publish import plots, scorecard  # noqa: E402


@pytest.fixture()
def claims(results_dir):
    claim_rows.write_claims("chap", [
        claim_rows.claim("A method lowers toxicity", "-5%", -0.106, interval=(-0.1446, -0.0714), n=100, threshold=0.0,
                      direction="below", note="paired bootstrap over prompts", kind="our models",
                      rule="lowers", subject="model:m"),
        claim_rows.claim("Matches the paper", "0.52", 0.51, interval=(0.49, 0.53), n=100, threshold=(0.48, 0.56),
                      direction="within", kind="our models", rule="matches", subject="model:m"),
        claim_rows.claim("Precision <and> recall", "0.1/0.2", "0.1/0.2", verdict="holds", note="recorded table",
                      kind="our models", rule="table_prf", subject="model:m"),
    ])
    return claim_rows.collect_claims()


def test_value_and_interval_are_one_string_with_one_precision():
    assert scorecard.value_with_interval("0.78", 0.7412, 0.8234) == "0.780 [0.741, 0.823]"
    assert scorecard.value_with_interval("1199", float("nan"), float("nan")) == "1,199"  # thousands separated
    assert scorecard.value_with_interval(12345.6, 12001.0, 12999.0) == "12,346 [12,001, 12,999]"
    assert [scorecard.thousands_separated(t) for t in ("6514", "-1200", "12", "max 0.497 (24 PTLMs)", "1,000")] == [
        "6,514", "−1,200", "12", "max 0.497 (24 PTLMs)", "1,000"]
    assert scorecard.value_with_interval(-0.062, -0.08414, -0.04163, signed=True) == "−0.062 [−0.084, −0.042]"
    assert scorecard.value_with_interval(0.048, 0.01724, 0.08048, signed=True) == "+0.048 [+0.017, +0.080]"
    assert scorecard.value_with_interval(0.0074, 0.003538, 0.00903) == "0.0074 [0.0035, 0.0090]"
    assert scorecard.value_with_interval("fails", None, None) == "fails"


def test_compact_table_has_the_four_reader_columns(claims):
    table = scorecard.compact_claims(claims)
    assert table.columns.tolist() == ["chapter", "row", "claim", "our value [95% CI]", "n", "verdict", "paper_value",
                                      "note"]
    assert table["our value [95% CI]"].tolist() == ["−0.106 [−0.145, −0.071]", "0.510 [0.490, 0.530]", "0.1/0.2"]
    assert table["n"].tolist() == ["100", "100", ""]


def test_styled_table_is_narrow_and_escaped(claims):
    page = scorecard.show_claims(claims, "Claims").to_html()
    assert "table-layout: fixed" in page and "width: 100%" in page
    assert "Precision &lt;and&gt; recall" in page
    assert "paper: -5% · our models; paired bootstrap over prompts" in page  # the kind leads the note
    assert len(re.findall(r"<th[ >]", page)) == 5  # chapter, claim, value with interval, n, verdict: nothing wider


def test_the_scorecard_links_each_claim_to_its_row_and_each_chapter_by_title(claims):
    page = scorecard.show_claims(claims, "Claims").to_html()
    assert '<a href="../notebooks/chap.html#claim-chap-2">Precision &lt;and&gt; recall</a>' in page
    assert page.count('<a href="../notebooks/chap.html#claims">chap</a>') == 1  # on its first row; no chapter: its name
    title = scorecard.show_claims(claims.assign(chapter="sass"), "Claims").to_html()
    assert ">SASS: Perspective and GPT-3 against human judgements</a>" in title and ">sass</a>" not in title


def test_a_chapters_claims_table_gives_each_row_the_id_its_links_use(claims):
    page = scorecard.show_claims(claims.drop(columns=["chapter", "row"]), "Claims", stem="chap").to_html()
    assert [f'id="claim-chap-{i}"' in page for i in range(3)] == [True] * 3
    with pytest.raises(ValueError, match="empty claims table"):
        scorecard.show_claims(claims.iloc[:0], "none")


def test_forest_draws_every_numeric_claim_on_one_scale_against_its_threshold(claims):
    fig = plots.claims_forest(claims, "chap")
    (ax,) = fig.axes  # one scale for the chapter
    assert len(ax.get_yticks()) == 2  # the recorded-table claim has no number to draw
    assert ax.get_xlim()[0] < -0.1446 and ax.get_xlim()[1] > 0.56  # every interval and threshold visible
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["A method lowers toxicity", "holds", "Matches the paper", "holds"]
    assert any(list(line.get_xdata()) == [0.56, 0.56] for line in ax.get_lines())  # both edges of the band
    diamonds = [line for line in ax.get_lines() if line.get_marker() == "D"]
    assert [list(d.get_xdata()) for d in diamonds] == [[0.52]]  # the paper's value where it is a number
    assert plots.claims_forest(claims.iloc[[2]], "none") is None
    assert pd.isna(claims.loc[2, "ci_low"])


def test_the_headline_leads_with_our_models_and_counts_by_kind():
    claims = pd.DataFrame({"chapter": ["a"] * 4, "verdict": ["holds", "fails", "undecided", "holds"],
                           "kind": ["paper arithmetic", "our models", "our models", "recorded predictions"]})
    text = scorecard.headline_sentence(claims)
    assert text.startswith("On our models, 0 of 2 claims hold, 1 fails, 1 is undecided and 0 are not judged.")
    assert text.index("recorded predictions") < text.index("printed numbers")


def test_findings_count_list_failures_first_link_rows_and_escape():
    from toxlib.publish.scorecard import findings_html

    claims = pd.DataFrame({"claim": ["a *starred* <h1>claim</h1> don't", "b", "c"],
                           "verdict": ["undecided", "holds", "fails"],
                           "paper_value": ["x_y", "0.5", "1"], "shown": ["0.4", "0.7", "0.1"],
                           "ci_low": [0.2, 0.6, None], "ci_high": [0.6, 0.8, None], "threshold": ["0.5", "0.5", ""],
                           "note": ["share of prompts; exact", "", "a count"]})
    text = findings_html(claims, "chap")
    assert text.startswith("<p>Of this chapter&#x27;s 3 claims, 1 fails, 1 is undecided and 1 holds.</p>")
    assert "\n\n" not in text  # one HTML block for MyST
    items = re.findall(r"<li>(.*)</li>", text)
    assert [re.search(r"<strong>(.*?)</strong>", i).group(1) for i in items] == ["fails", "undecided"]
    assert items[0] == ('<strong>fails</strong>: <a href="#claim-chap-2">c</a>: ours 0.1 against the paper&#x27;s 1, '
                        "a count")  # a failing claim names the paper's value it fails against
    assert ('<a href="#claim-chap-0">a *starred* &lt;h1&gt;claim&lt;/h1&gt; don&#x27;t</a>: ours 0.400 [0.200, 0.600], '
            "share of prompts") in items[1] and "exact" not in items[1]


def test_the_findings_box_stays_short():
    from toxlib.publish.scorecard import FINDINGS_WORDS, findings_html

    claims = pd.DataFrame({"claim": [f"claim number {i} says something about toxicity on toxic prompts" for i in
                                     range(18)], "verdict": ["fails"] * 9 + ["undecided"] * 9, "paper_value": "0.5",
                           "shown": "0.4", "ci_low": 0.3, "ci_high": 0.5, "threshold": "0.5",
                           "note": "relative change against the base model on the same 200 prompts; k = 25"})
    text = findings_html(claims, "chap")
    assert len(re.sub(r"<[^>]+>", " ", text).split()) <= FINDINGS_WORDS
    assert text.splitlines()[-2].startswith("<li>and ") and '<a href="#claims">claims table</a>' in text


def test_a_measurement_of_the_machine_is_shown_but_counted_with_no_claim():
    """A speed target that fails on a slow CPU (and holds on a fast one) must not move the claims' totals."""
    from toxlib.publish.claims import claims_summary
    from toxlib.publish.scorecard import findings_html

    base = {"chapter": ["a"] * 3, "claim": ["x", "y", "speed"], "paper_value": ["1", "2", ">= 300"],
            "shown": ["1", "2", "293.7"], "ci_low": [None] * 3, "ci_high": [None] * 3,
            "kind": ["our models", "our models", "machine speed"]}
    slow = pd.DataFrame({**base, "verdict": ["holds", "fails", "fails"]})
    fast = pd.DataFrame({**base, "verdict": ["holds", "fails", "holds"]})
    for claims in (slow, fast):
        assert scorecard.headline_sentence(claims).startswith("On our models, 1 of 2 claims hold, 1 fails")
        by_chapter = claims_summary(claims).iloc[0]
        assert (by_chapter["total"], by_chapter["holds"], by_chapter["fails"]) == (2, 1, 1)
        assert findings_html(claims).startswith(
            "<p>Of this chapter&#x27;s 2 claims, 1 fails, 0 are undecided and 1 holds")
        assert "measurement of the machine that ran it" in findings_html(claims)
    assert "Measuring the machine that built this page" in scorecard.headline_sentence(slow)
    assert "0 of 1 targets met" in scorecard.headline_sentence(slow)
    assert "1 of 1 targets met" in scorecard.headline_sentence(fast)


def test_summaries_name_chapters_by_title_and_kinds_in_words():
    from toxlib.publish.claims import claims_summary

    claims = pd.DataFrame({"chapter": ["sass", "nochapter"], "verdict": ["holds", "fails"],
                           "kind": ["our models", "machine speed"]})
    by_chapter = scorecard.for_readers(claims_summary(claims))
    assert by_chapter["chapter"].tolist() == ["SASS: Perspective and GPT-3 against human judgements"]
    by_kind = scorecard.for_readers(claims_summary(claims, by="kind"))
    assert by_kind["kind"].tolist() == ["our models", "a speed of the machine that built the page"]


def _one_of_each(**extra) -> pd.DataFrame:
    verdicts = ["holds", "undecided", "not informative", "fails", "not informative", "holds"]
    return pd.DataFrame({"claim": [f"claim {i}" for i in range(len(verdicts))], "verdict": verdicts,
                         "paper_value": "0.8", "shown": "0.82", "ci_low": 0.78, "ci_high": 0.86, "threshold": "0.7",
                         "note": "F1 on 250 comments; baseline: always toxic reaches 0.84", **extra})


def test_the_findings_name_not_informative_claims_and_list_them_after_the_failing_ones():
    from toxlib.publish.scorecard import findings_html

    text = findings_html(_one_of_each(), "chap")
    assert text.startswith("<p>Of this chapter&#x27;s 6 claims, 1 fails, 1 is undecided, 2 are not informative (a "
                           "constant answer would earn them) and 2 hold.</p>")
    items = re.findall(r"<li>(.*)</li>", text)
    assert [re.search(r"<strong>(.*?)</strong>", i).group(1) for i in items] == [
        "fails", "not informative", "not informative", "undecided"]
    assert items[1] == ('<strong>not informative</strong>: <a href="#claim-chap-2">claim 2</a>: ours 0.820 '
                        "[0.780, 0.860], F1 on 250 comments")
    one = findings_html(_one_of_each().iloc[[0, 2]])
    assert "1 is not informative (a constant answer would earn it) and 1 holds." in one
    none = findings_html(_one_of_each().iloc[[0, 1, 3]])
    assert "informative" not in none  # a chapter without such a claim reads as before


def test_a_findings_box_too_short_for_every_claim_counts_the_rest_with_their_verdicts():
    from toxlib.publish.scorecard import FINDINGS_WORDS, findings_html

    claims = pd.DataFrame({"claim": [f"claim number {i} says something about toxicity on toxic prompts" for i in
                                     range(18)], "verdict": ["not informative"] * 9 + ["undecided"] * 9,
                           "paper_value": "0.5", "shown": "0.4", "ci_low": 0.3, "ci_high": 0.5, "threshold": "0.5",
                           "note": "F1 against the gold labels of the same 250 comments; always toxic: 0.84"})
    text = findings_html(claims, "chap")
    assert len(re.sub(r"<[^>]+>", " ", text).split()) <= FINDINGS_WORDS
    assert re.search(r"<li>and \d+ more failing, not informative or undecided: see the <a", text)


def test_the_headline_counts_not_informative_claims_where_a_kind_has_any():
    claims = _one_of_each(kind=["our models"] * 3 + ["recorded predictions"] * 3, chapter="a")
    text = scorecard.headline_sentence(claims)
    assert text.startswith("On our models, 1 of 3 claims hold, 0 fail, 1 is undecided, 1 is not informative (a "
                           "constant answer would earn it) and 0 are not judged. On the authors' recorded "
                           "predictions and data, 1 of 3 claims hold, 1 fails, 0 are undecided, 1 is not informative")
    plain = scorecard.headline_sentence(claims[claims["verdict"] != "not informative"])
    assert "informative" not in plain and plain.startswith("On our models, 1 of 2 claims hold, 0 fail, 1 is undecided "
                                                           "and 0 are not judged.")


def test_each_verdict_cell_carries_its_class_and_colour(claims):
    shown = claims.assign(verdict=["not informative", "holds", "not judged"])
    page = scorecard.show_claims(shown, "Claims").to_html()
    cells = dict(re.findall(r'<td id="(T_claims_row\d_col4)" class="[^"]*\btx-verdict tx-verdict-([a-z-]+)"', page))
    assert cells == {"T_claims_row0_col4": "not-informative", "T_claims_row1_col4": "holds",
                     "T_claims_row2_col4": "not-judged"}
    assert re.search(r"#T_claims_row0_col4 \{[^}]*color: #8250df;", page)
    unknown = scorecard.show_claims(claims.assign(verdict="<b>odd</b>"), "Claims").to_html()
    assert "tx-verdict-" not in unknown and "tx-verdict" in unknown  # a class only from a known verdict


def _contrast(colour: str, background: str) -> float:
    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted([luminance(colour), luminance(background)], reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_verdict_has_a_distinct_colour_readable_in_the_light_and_the_dark_theme():
    """WCAG AA (4.5:1) for each verdict's text: the cell's colour (also the forest figure's) against the light page
    and the figures (white), and the dark theme's colour from _static/tables.css against the dark page (#14181e)
    and its raised surfaces."""
    from toxlib.metrics.uncertainty import VERDICTS
    from toxlib.store import paths

    assert set(plots.VERDICT_COLOURS) == set(VERDICTS)
    assert len(set(plots.VERDICT_COLOURS.values())) == len(VERDICTS)
    css = (paths.project_root() / "_static" / "tables.css").read_text()
    for verdict in VERDICTS:
        light = plots.VERDICT_COLOURS[verdict]
        assert _contrast(light, "#ffffff") >= 4.5, verdict
        rule = re.search(r'html\[data-theme="dark"\] td\.tx-verdict-' + verdict.replace(" ", "-")
                         + r" \{\s*color: (#[0-9a-f]{6}) !important;", css)
        assert rule, f"no dark-theme colour for {verdict!r} in _static/tables.css"
        assert min(_contrast(rule.group(1), bg) for bg in ("#14181e", "#222832", "#29313d")) >= 4.5, verdict


def test_the_forest_draws_a_not_informative_claim_in_its_colour_beside_its_text_not_over_it(claims):
    long = "Perspective's F1 on the SASS comments stays above the paper's bar at every prevalence we could measure"
    rows = claims.assign(verdict="not informative", claim=long)
    fig = plots.claims_forest(rows, "chap")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = fig.axes[0].texts
    for text, label in zip(texts[::2], texts[1::2]):
        assert label.get_text() == "not informative" and label.get_color() == plots.VERDICT_COLOURS["not informative"]
        first_line = text.get_window_extent(renderer)
        assert first_line.x1 < label.get_window_extent(renderer).x0  # the claim's lines end before the verdict


def test_each_paper_gets_the_counts_of_the_chapters_that_run_its_protocol():
    from toxlib.chapters import model_chapters

    rtp = [s for s in model_chapters() if scorecard.paper_of(s) == "RealToxicityPrompts"]
    sass = next(s for s in model_chapters() if scorecard.paper_of(s) == "SASS")
    rows = [{"chapter": rtp[1], "verdict": "holds", "kind": "our models"},
            {"chapter": rtp[2], "verdict": "fails", "kind": "our models"},
            {"chapter": rtp[0], "verdict": "holds", "kind": "machine speed"},  # the machine: not counted
            {"chapter": sass, "verdict": "undecided", "kind": "recorded predictions"},
            {"chapter": "datasets", "verdict": "fails", "kind": "recorded predictions"}]  # no one paper's protocol
    sentences = scorecard.paper_sentences(pd.DataFrame(rows))
    assert sentences == {
        "scorecard-paper-realtoxicityprompts": "1 of 2 claims hold, 1 fails, 0 are undecided and 0 are not judged.",
        "scorecard-paper-sass": "0 of 1 claims hold, 0 fail, 1 is undecided and 0 are not judged."}


def test_the_landing_page_pastes_a_sentence_for_every_paper_the_book_runs():
    from toxlib.chapters import model_chapters
    from toxlib.store import paths

    intro = (paths.project_root() / "book" / "intro.md").read_text(encoding="utf-8")
    pasted = set(re.findall(r"scorecard\.ipynb::(scorecard-paper-[a-z0-9-]+):s", intro))
    papers = {scorecard.paper_key(scorecard.paper_of(stem)) for stem in model_chapters()}
    assert pasted == papers


def test_the_scorecard_lists_the_papers_in_the_books_order():
    from toxlib.chapters import model_chapters

    first = list(dict.fromkeys({scorecard.paper_of(s): s for s in reversed(model_chapters())}.values()))
    rows = [{"chapter": stem, "verdict": "holds", "kind": "our models"} for stem in first]  # last paper first
    lines = scorecard.paper_list(pd.DataFrame(rows)).splitlines()
    assert [line.split("**")[1] for line in lines[2:]] == list(dict.fromkeys(map(scorecard.paper_of,
                                                                                 model_chapters())))
