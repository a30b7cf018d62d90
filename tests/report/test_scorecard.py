"""The reader's view of the claims: the compact table and the interval figure (toxlib.report.scorecard,
plots.claims_forest)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from toxlib.report import claims as claim_rows  # noqa: E402
from toxlib.report import plots, scorecard  # noqa: E402


@pytest.fixture()
def claims(results_dir):
    claim_rows.write_claims("chap", [
        claim_rows.claim("A method lowers toxicity", "-5%", -0.106, interval=(-0.1446, -0.0714), n=100, threshold=0.0,
                      direction="below", note="paired bootstrap over prompts", kind="our models"),
        claim_rows.claim("Matches the paper", "0.52", 0.51, interval=(0.49, 0.53), n=100, threshold=(0.48, 0.56),
                      direction="within", kind="our models"),
        claim_rows.claim("Precision <and> recall", "0.1/0.2", "0.1/0.2", verdict="holds", note="recorded table",
                      kind="our models"),
    ])
    return claim_rows.collect_claims()


def test_value_and_interval_are_one_string():
    assert scorecard.value_with_interval("0.78", 0.7412, 0.8234) == "0.78 [0.741, 0.823]"
    assert scorecard.value_with_interval("1199", float("nan"), float("nan")) == "1199"


def test_compact_table_has_the_four_reader_columns(claims):
    table = scorecard.compact_claims(claims)
    assert table.columns.tolist() == ["chapter", "claim", "our value [95% CI]", "n", "verdict", "paper_value", "note"]
    assert table["our value [95% CI]"].tolist() == ["-0.106 [-0.145, -0.0714]", "0.51 [0.49, 0.53]", "0.1/0.2"]
    assert table["n"].tolist() == ["100", "100", ""]


def test_styled_table_is_narrow_and_escaped(claims):
    page = scorecard.show_claims(claims, "Claims").to_html()
    assert "table-layout: fixed" in page and "width: 100%" in page
    assert "Precision &lt;and&gt; recall" in page
    assert "paper: -5% · our models; paired bootstrap over prompts" in page  # the kind leads the note
    assert len(re.findall(r"<th[ >]", page)) == 5  # chapter, claim, value with interval, n, verdict: nothing wider
    with pytest.raises(ValueError, match="empty claims table"):
        scorecard.show_claims(claims.iloc[:0], "none")


def test_forest_draws_every_numeric_claim_against_its_threshold(claims):
    fig = plots.claims_forest(claims, "chap")
    assert len(fig.axes) == 2  # the recorded-table claim has no number to draw
    first, band = fig.axes
    assert first.get_xlim()[0] < -0.1446 and first.get_xlim()[1] > 0.0  # interval and threshold both visible
    assert [t.get_text() for t in first.texts] == ["holds"]
    assert any(line.get_xdata()[0] == 0.56 for line in band.get_lines())  # both edges of the band
    assert plots.claims_forest(claims.iloc[[2]], "none") is None
    assert pd.isna(claims.loc[2, "ci_low"])


def test_the_headline_leads_with_our_models_and_counts_by_kind():
    claims = pd.DataFrame({"chapter": ["a"] * 4, "verdict": ["holds", "fails", "undecided", "holds"],
                           "kind": ["paper arithmetic", "our models", "our models", "recorded predictions"]})
    text = scorecard.headline(claims)
    assert text.startswith("On our models, 0 of 2 claims hold, 1 fails, 1 is undecided and 0 are not judged.")
    assert text.index("recorded predictions") < text.index("printed numbers")


def test_findings_markdown_counts_orders_and_escapes():
    import pandas as pd

    from toxlib.report.scorecard import findings_markdown

    claims = pd.DataFrame({"claim": ["a *starred* claim", "b", "c"], "verdict": ["undecided", "holds", "fails"],
                           "paper_value": ["x_y", "0.5", "1"], "shown": ["0.4", "0.7", "0.1"],
                           "ci_low": [0.2, 0.6, None], "ci_high": [0.6, 0.8, None]})
    text = findings_markdown(claims)
    assert text.startswith("Of this chapter's 3 claims, 1 holds, 1 fails, 1 undecided, 0 not judged.")
    lines = text.split("\n\n")[1].splitlines()
    assert [line.split("**")[1] for line in lines] == ["holds", "fails", "undecided"]
    assert "a \\*starred\\* claim" in lines[2] and "paper: x\\_y" in lines[2] and "0.4 \\[0.2, 0.6\\]" in lines[2]


def test_a_measurement_of_the_machine_is_shown_but_counted_with_no_claim():
    """A speed target that fails on a slow CPU (and holds on a fast one) must not move the claims' totals."""
    from toxlib.report.claims import claims_summary
    from toxlib.report.scorecard import findings_markdown

    base = {"chapter": ["a"] * 3, "claim": ["x", "y", "speed"], "paper_value": ["1", "2", ">= 300"],
            "shown": ["1", "2", "293.7"], "ci_low": [None] * 3, "ci_high": [None] * 3,
            "kind": ["our models", "our models", "machine speed"]}
    slow = pd.DataFrame({**base, "verdict": ["holds", "fails", "fails"]})
    fast = pd.DataFrame({**base, "verdict": ["holds", "fails", "holds"]})
    for claims in (slow, fast):
        assert scorecard.headline(claims).startswith("On our models, 1 of 2 claims hold, 1 fails")
        by_chapter = claims_summary(claims).iloc[0]
        assert (by_chapter["total"], by_chapter["holds"], by_chapter["fails"]) == (2, 1, 1)
        assert findings_markdown(claims).startswith("Of this chapter's 2 claims, 1 holds, 1 fails")
        assert "speed of the machine that built the page, not counted" in findings_markdown(claims)
    assert "Measuring the machine that built this page" in scorecard.headline(slow)
    assert "0 of 1 targets met" in scorecard.headline(slow) and "1 of 1 targets met" in scorecard.headline(fast)
