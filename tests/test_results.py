"""The results contract: tables and claims under results_dir()/<stem>/, gathered by the scorecard."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.report import results
from toxlib.metrics.uncertainty import Interval


def test_claims_round_trip_and_collect(results_dir):
    ci = Interval(0.62, 0.55, 0.70, 120, "bootstrap BCa over 120 units")
    results.write_claims("chap_a", [
        results.claim("x exceeds 0.5", 0.6, 0.62, interval=ci, threshold=0.5, note="prompts", kind="our models"),
        results.claim("x is 0.5", 0.5, 0.5004, verdict="holds", note="recorded table", kind="our models"),
    ])
    results.write_claims("chap_b", [results.claim("y > z", "1 > 0", "no data", kind="our models")])
    table = results.collect_claims()
    assert table.columns.tolist() == ["chapter"] + results.CLAIM_COLUMNS
    assert table["chapter"].tolist() == ["chap_a", "chap_a", "chap_b"]
    assert table["verdict"].tolist() == ["holds", "holds", "not judged"]
    first = table.iloc[0]
    assert (first["our_value"], first["shown"], first["ci_low"], first["ci_high"], first["n"]) == (
        0.62, "0.62", 0.55, 0.70, 120)
    assert first["kind"] == "our models" and pd.isna(table.loc[2, "our_value"]) and table.loc[2, "shown"] == "no data"
    assert first["threshold"] == "0.5" and pd.isna(first["n_to_decide"])
    assert pd.isna(table.loc[1, "ci_low"]) and pd.isna(table.loc[1, "n"])  # an exact fact keeps an empty interval
    assert "holds" not in table.columns and (results_dir / "chap_a" / "claims.csv").exists()
    again = results.read_claims(results_dir / "chap_a" / "claims.csv")
    pd.testing.assert_frame_equal(again, table[table["chapter"] == "chap_a"].drop(columns="chapter"))


@pytest.mark.parametrize("interval,threshold,direction,expected", [
    ((-0.30, -0.10), 0.0, "below", "holds"),     # a clear reduction
    ((-0.10, 0.05), 0.0, "below", "undecided"),  # the interval contains "no change"
    ((0.05, 0.20), 0.0, "below", "fails"),       # a reversed effect
])
def test_claim_verdict_comes_from_the_interval(interval, threshold, direction, expected):
    value = sum(interval) / 2
    row = results.claim("method lowers toxicity", "-0.2", value, interval=interval, n=50, threshold=threshold,
                        direction=direction, kind="our models")
    assert row["verdict"] == expected
    assert (row["n_to_decide"] is not None) == (expected == "undecided")


def test_undecided_claim_says_what_would_decide_it():
    # mean 0.52, se 0.05 over 100 units: per-unit sd 0.5, effect 0.02 -> (2.8016 * 0.5 / 0.02)^2 = 4906 units
    row = results.claim("above 0.5", "0.6", 0.52, interval=(0.52 - 0.098, 0.52 + 0.098), n=100, threshold=0.5,
                        kind="our models")
    assert row["verdict"] == "undecided" and row["n_to_decide"] == pytest.approx(4906, rel=0.01)
    assert f"{row['n_to_decide']:,} units would decide it" in row["note"]


def test_exact_fact_is_judged_from_its_value_and_within_band():
    assert results.claim("dataset has 1,199 prompts", 1199, 1199, threshold=(1199, 1199), direction="within",
                         verdict="holds", kind="our models")["verdict"] == "holds"
    assert results.claim("rate above 0.5", "0.6", 0.7, threshold=0.5, kind="our models")["verdict"] == "holds"
    row = results.claim("matches the paper", 0.5, 0.51, interval=(0.49, 0.53), threshold=(0.48, 0.52),
                        direction="within", kind="our models")
    assert row["verdict"] == "undecided" and row["threshold"] == "0.48..0.52" and row["n_to_decide"] is None
    with pytest.raises(ValueError, match="verdict must be one of"):
        results.claim("c", 1, 1, verdict="maybe", kind="our models")


@pytest.mark.parametrize("holds,expected", [(True, "holds"), (False, "fails"), (None, "not judged"),
                                             (float("nan"), "not judged")])
def test_deprecated_holds_still_works(holds, expected):
    with pytest.warns(DeprecationWarning, match="holds=.*deprecated"):
        assert results.claim("c", 1, 2, holds=holds, kind="our models")["verdict"] == expected
    with pytest.warns(DeprecationWarning):
        assert results.claim("c", 1, 2, holds, "old positional form", kind="our models")["verdict"] == expected


def test_collect_reads_the_old_holds_form(results_dir):
    old = pd.DataFrame({"claim": ["a", "b", "c"], "paper_value": ["1", "2", "3"], "our_value": ["1", "3", "?"],
                        "holds": ["True", "False", ""], "note": ["", "", "no data"]})
    results.write_table("old_chapter", "claims", old)
    table = results.collect_claims()
    assert table["verdict"].tolist() == ["holds", "fails", "not judged"]
    assert table["ci_low"].isna().all() and table.columns.tolist() == ["chapter"] + results.CLAIM_COLUMNS


def test_collect_rejects_a_claims_file_without_the_columns(results_dir):
    results.write_table("bad", "claims", pd.DataFrame({"claim": ["x"], "value": [1]}))
    with pytest.raises(ValueError, match="lacks the claims columns"):
        results.collect_claims()


def test_within_is_false_for_nan():
    assert not results.within(0.5, float("nan"), 1.0)
    assert results.within(0.26, 0.2647, 0.01) and not results.within(0.26, 0.2801, 0.01)


def test_claims_summary_counts_by_hand(results_dir):
    results.write_claims("a", [results.claim("1", 1, 1, verdict="holds", kind="our models"),
                               results.claim("2", 1, 2, verdict="fails", kind="paper arithmetic"),
                               results.claim("3", 1, 1, verdict="holds", kind="our models"),
                               results.claim("4", 1, 1, verdict="undecided", kind="our models")])
    results.write_claims("b", [results.claim("5", 1, "?", kind="our models")])
    summary = results.claims_summary(results.collect_claims()).set_index("chapter")
    assert summary.columns.tolist() == ["holds", "fails", "undecided", "not judged", "total"]
    assert summary.loc["a"].tolist() == [2, 1, 1, 0, 4]
    assert summary.loc["b"].tolist() == [0, 0, 0, 1, 1]


def test_write_claims_refuses_rows_without_a_verdict(results_dir):
    row = results.claim("x", 1, 1, kind="our models")
    row["verdict"] = "probably"
    with pytest.raises(ValueError, match="verdict among"):
        results.write_claims("c", [row])


def test_claims_summary_by_kind_leads_with_our_models(results_dir):
    results.write_claims("a", [results.claim("1", 1, 1, verdict="holds", kind="paper arithmetic"),
                               results.claim("2", 1, 2, verdict="fails", kind="our models"),
                               results.claim("3", 1, 2, verdict="undecided", kind="our models"),
                               results.claim("4", 1, 2, verdict="holds", kind="recorded predictions")])
    by_kind = results.claims_summary(results.collect_claims(), by="kind").set_index("kind")
    assert by_kind.index.tolist() == ["our models", "recorded predictions", "paper arithmetic"]
    assert by_kind.loc["our models"].tolist() == [0, 1, 1, 0, 2]
    assert by_kind.loc["paper arithmetic", "holds"] == 1 and by_kind["total"].sum() == 4


def test_a_claim_needs_a_known_kind():
    with pytest.raises(TypeError, match="kind"):
        results.claim("c", 1, 1, verdict="holds")  # noqa  (kind is required)
    with pytest.raises(ValueError, match="kind must be one of"):
        results.claim("c", 1, 1, verdict="holds", kind="vibes")


def test_the_verdict_reads_the_unrounded_interval():
    """A lower bound of 0.500004 is above 0.5 though it is stored as 0.5 (4 significant digits)."""
    row = results.claim("above 0.5", "0.6", 0.52, interval=(0.500004, 0.54), n=100, threshold=0.5, kind="our models")
    assert row["verdict"] == "holds" and row["ci_low"] == 0.5
    row = results.claim("above 0.5", "0.6", 0.52, interval=(0.49999, 0.54), n=100, threshold=0.5, kind="our models")
    assert row["verdict"] == "undecided" and row["ci_low"] == 0.5


def test_collect_reads_claims_written_before_kind_and_shown(results_dir):
    old = pd.DataFrame({"claim": ["a"], "paper_value": ["1"], "our_value": ["0.25"], "ci_low": ["0.1"],
                        "ci_high": ["0.4"], "n": ["20"], "verdict": ["holds"], "note": [""], "n_to_decide": [""],
                        "threshold": ["0"]})
    results.write_table("older", "claims", old)
    row = results.collect_claims().iloc[0]
    assert row["our_value"] == 0.25 and row["shown"] == "0.25" and row["kind"] == ""
