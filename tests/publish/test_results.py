"""The results contract: tables and claims under results_dir()/<stem>/, gathered by the scorecard."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.metrics.uncertainty import Interval
from toxlib.publish import claims, results

#: the subject of the claims built here (their rules r<n> keep ids unique within a chapter)
OF_M = {"subject": "model:m"}


def test_claims_round_trip_and_collect(results_dir):
    ci = Interval(0.62, 0.55, 0.70, 120, "bootstrap BCa over 120 units")
    claims.write_claims("chap_a", [
        claims.claim("x exceeds 0.5", 0.6, 0.62, interval=ci, threshold=0.5, note="prompts", kind="our models",
                     rule="r0", **OF_M),
        claims.claim("x is 0.5", 0.5, 0.5004, verdict="holds", note="recorded table", kind="our models", rule="r1",
                     **OF_M),
    ])
    claims.write_claims("chap_b", [claims.claim("y > z", "1 > 0", "no data", kind="our models", rule="r2", **OF_M)])
    table = claims.collect_claims()
    assert table.columns.tolist() == ["chapter", "row"] + claims.CLAIM_COLUMNS
    assert table["chapter"].tolist() == ["chap_a", "chap_a", "chap_b"] and table["row"].tolist() == [0, 1, 0]
    assert table["verdict"].tolist() == ["holds", "holds", "not judged"]
    first = table.iloc[0]
    assert (first["our_value"], first["shown"], first["ci_low"], first["ci_high"], first["n"]) == (
        0.62, "0.62", 0.55, 0.70, 120)
    assert first["kind"] == "our models" and pd.isna(table.loc[2, "our_value"]) and table.loc[2, "shown"] == "no data"
    assert first["threshold"] == "0.5" and pd.isna(first["n_to_decide"])
    assert pd.isna(table.loc[1, "ci_low"]) and pd.isna(table.loc[1, "n"])  # an exact fact keeps an empty interval
    assert "holds" not in table.columns and (results_dir / "chap_a" / "claims.csv").exists()
    again = claims.read_claims(results_dir / "chap_a" / "claims.csv")
    pd.testing.assert_frame_equal(again, table[table["chapter"] == "chap_a"].drop(columns=["chapter", "row"]))


@pytest.mark.parametrize("interval,threshold,direction,expected", [
    ((-0.30, -0.10), 0.0, "below", "holds"),     # a clear reduction
    ((-0.10, 0.05), 0.0, "below", "undecided"),  # the interval contains "no change"
    ((0.05, 0.20), 0.0, "below", "fails"),       # a reversed effect
])
def test_claim_verdict_comes_from_the_interval(interval, threshold, direction, expected):
    value = sum(interval) / 2
    row = claims.claim("method lowers toxicity", "-0.2", value, interval=interval, n=50, threshold=threshold,
                        direction=direction, kind="our models", rule="r3", **OF_M)
    assert row["verdict"] == expected
    assert (row["n_to_decide"] is not None) == (expected == "undecided")


def test_undecided_claim_says_what_would_decide_it():
    # mean 0.52, se 0.05 over 100 units: per-unit sd 0.5, effect 0.02 -> (2.8016 * 0.5 / 0.02)^2 = 4906 units
    row = claims.claim("above 0.5", "0.6", 0.52, interval=(0.52 - 0.098, 0.52 + 0.098), n=100, threshold=0.5,
                        kind="our models", rule="r4", **OF_M)
    assert row["verdict"] == "undecided" and row["n_to_decide"] == pytest.approx(4906, rel=0.01)
    assert f"{row['n_to_decide']:,} units would decide it" in row["note"]


def test_exact_fact_is_judged_from_its_value_and_within_band():
    assert claims.claim("dataset has 1,199 prompts", 1199, 1199, threshold=(1199, 1199), direction="within",
                         verdict="holds", kind="our models", rule="r5", **OF_M)["verdict"] == "holds"
    assert claims.claim("rate above 0.5", "0.6", 0.7, threshold=0.5, kind="our models", rule="r6",
                        **OF_M)["verdict"] == "holds"
    row = claims.claim("matches the paper", 0.5, 0.51, interval=(0.49, 0.53), threshold=(0.48, 0.52),
                        direction="within", kind="our models", rule="r7", **OF_M)
    assert row["verdict"] == "undecided" and row["threshold"] == "0.48..0.52" and row["n_to_decide"] is None
    with pytest.raises(ValueError, match="verdict must be one of"):
        claims.claim("c", 1, 1, verdict="maybe", kind="our models", rule="r8", **OF_M)


def test_the_removed_holds_form_is_refused():
    with pytest.raises(TypeError):
        claims.claim("c", 1, 2, holds=True, kind="our models", rule="r9", **OF_M)


def test_collect_refuses_a_claims_file_of_an_older_form_and_says_to_rerun(results_dir):
    old = pd.DataFrame({"claim": ["a", "b", "c"], "paper_value": ["1", "2", "3"], "our_value": ["1", "3", "?"],
                        "holds": ["True", "False", ""], "note": ["", "", "no data"]})
    results.write_table("old_chapter", "claims", old)
    with pytest.raises(ValueError, match="old_chapter.*re-run its chapter"):
        claims.collect_claims()


def test_collect_rejects_a_claims_file_without_the_columns(results_dir):
    results.write_table("bad", "claims", pd.DataFrame({"claim": ["x"], "value": [1]}))
    with pytest.raises(ValueError, match="lacks the claims columns"):
        claims.collect_claims()


def test_within_is_false_for_nan():
    assert not claims.within(0.5, float("nan"), 1.0)
    assert claims.within(0.26, 0.2647, 0.01) and not claims.within(0.26, 0.2801, 0.01)


def test_claims_summary_counts_by_hand(results_dir):
    claims.write_claims("a", [claims.claim("1", 1, 1, verdict="holds", kind="our models", rule="r10", **OF_M),
                               claims.claim("2", 1, 2, verdict="fails", kind="paper arithmetic", rule="r11", **OF_M),
                               claims.claim("3", 1, 1, verdict="holds", kind="our models", rule="r12", **OF_M),
                               claims.claim("4", 1, 1, verdict="undecided", kind="our models", rule="r13", **OF_M)])
    claims.write_claims("b", [claims.claim("5", 1, "?", kind="our models", rule="r14", **OF_M)])
    summary = claims.claims_summary(claims.collect_claims()).set_index("chapter")
    assert summary.columns.tolist() == ["holds", "fails", "undecided", "not informative", "not judged", "total"]
    assert summary.loc["a"].tolist() == [2, 1, 1, 0, 0, 4]
    assert summary.loc["b"].tolist() == [0, 0, 0, 0, 1, 1]


def test_write_claims_refuses_rows_without_a_verdict(results_dir):
    row = claims.claim("x", 1, 1, kind="our models", rule="r15", **OF_M)
    row["verdict"] = "probably"
    with pytest.raises(ValueError, match="verdict among"):
        claims.write_claims("c", [row])


def test_claims_summary_by_kind_leads_with_our_models(results_dir):
    claims.write_claims("a", [claims.claim("1", 1, 1, verdict="holds", kind="paper arithmetic", rule="r16", **OF_M),
                               claims.claim("2", 1, 2, verdict="fails", kind="our models", rule="r17", **OF_M),
                               claims.claim("3", 1, 2, verdict="undecided", kind="our models", rule="r18", **OF_M),
                               claims.claim("4", 1, 2, verdict="holds", kind="recorded predictions", rule="r19",
                                            **OF_M)])
    by_kind = claims.claims_summary(claims.collect_claims(), by="kind").set_index("kind")
    assert by_kind.index.tolist() == ["our models", "recorded predictions", "paper arithmetic"]
    assert by_kind.loc["our models"].tolist() == [0, 1, 1, 0, 0, 2]
    assert by_kind.loc["paper arithmetic", "holds"] == 1 and by_kind["total"].sum() == 4


def test_a_claim_needs_a_known_kind():
    with pytest.raises(TypeError, match="kind"):
        claims.claim("c", 1, 1, verdict="holds", rule="r20", **OF_M)  # noqa  (kind is required)
    with pytest.raises(ValueError, match="kind must be one of"):
        claims.claim("c", 1, 1, verdict="holds", kind="vibes", rule="r21", **OF_M)


def test_the_verdict_reads_the_unrounded_interval():
    """A lower bound of 0.500004 is above 0.5 though it is stored as 0.5 (4 significant digits)."""
    row = claims.claim("above 0.5", "0.6", 0.52, interval=(0.500004, 0.54), n=100, threshold=0.5, kind="our models",
                       rule="r22", **OF_M)
    assert row["verdict"] == "holds" and row["ci_low"] == 0.5
    row = claims.claim("above 0.5", "0.6", 0.52, interval=(0.49999, 0.54), n=100, threshold=0.5, kind="our models",
                       rule="r23", **OF_M)
    assert row["verdict"] == "undecided" and row["ci_low"] == 0.5


def test_a_not_informative_claim_is_written_read_back_and_counted_in_its_own_column(results_dir):
    """A claim a constant answer would earn too is passed as ``verdict="not informative"`` with the reason in its
    note: written, read back as written, and counted apart from the claims that hold."""
    floor = "baseline: always toxic reaches F1 0.84 on these comments; the system's 0.82 [0.78, 0.86] does not beat it"
    written = claims.write_claims("chap", [
        claims.claim("Perspective's F1 is high", "0.80", 0.82, interval=(0.78, 0.86), n=250, threshold=0.7,
                     verdict="not informative", note=floor, kind="recorded predictions", rule="r24", **OF_M),
        claims.claim("x is 0.5", 0.5, 0.5, verdict="holds", kind="our models", rule="r25", **OF_M),
    ])
    assert written["verdict"].tolist() == ["not informative", "holds"]
    again = claims.read_claims(results_dir / "chap" / "claims.csv")
    pd.testing.assert_frame_equal(again, written)
    assert again.loc[0, "note"] == floor and pd.isna(again.loc[0, "n_to_decide"])  # no "units would decide it"
    summary = claims.claims_summary(claims.collect_claims()).set_index("chapter")
    assert summary.loc["chap", "not informative"] == 1 and summary.loc["chap", "holds"] == 1
    assert summary.loc["chap", "total"] == 2
    by_kind = claims.claims_summary(claims.collect_claims(), by="kind").set_index("kind")
    assert by_kind.loc["recorded predictions", "not informative"] == 1


def test_every_verdict_is_a_column_of_the_summary_in_the_order_of_verdicts():
    from toxlib.metrics.uncertainty import VERDICTS

    assert VERDICTS == ("holds", "fails", "undecided", "not informative", "not judged")
    claims_ = pd.DataFrame({"chapter": ["a"] * len(VERDICTS), "verdict": list(VERDICTS), "kind": "our models"})
    summary = claims.claims_summary(claims_)
    assert summary.columns.tolist() == ["chapter", *VERDICTS, "total"]
    assert summary.iloc[0, 1:].tolist() == [1] * len(VERDICTS) + [len(VERDICTS)]
