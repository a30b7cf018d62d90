"""The results contract: tables and claims under results_dir()/<stem>/, gathered by the scorecard."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib import results


def test_claims_round_trip_and_collect(results_dir):
    results.write_claims("chap_a", [results.claim("x is 0.5", 0.5, 0.5004, results.within(0.5, 0.5004, 0.001), "n")])
    results.write_claims("chap_b", [results.claim("y > z", "1 > 0", "no data", None)])
    table = results.collect_claims()
    assert table.columns.tolist() == ["chapter"] + results.CLAIM_COLUMNS
    assert table["chapter"].tolist() == ["chap_a", "chap_b"]
    assert table["holds"].tolist() == [True, None] and table.loc[0, "our_value"] == "0.5"
    assert results.claim("c", 1, 2, float("nan"))["holds"] is None
    assert (results_dir / "chap_a" / "claims.csv").exists()


def test_collect_rejects_a_claims_file_without_the_columns(results_dir):
    results.write_table("bad", "claims", pd.DataFrame({"claim": ["x"], "value": [1]}))
    with pytest.raises(ValueError, match="lacks the claims columns"):
        results.collect_claims()


def test_within_is_false_for_nan():
    assert not results.within(0.5, float("nan"), 1.0)
    assert results.within(0.26, 0.2647, 0.01) and not results.within(0.26, 0.2801, 0.01)


def test_claims_summary_counts_by_hand(results_dir):
    results.write_claims("a", [results.claim("1", 1, 1, True), results.claim("2", 1, 2, False),
                               results.claim("3", 1, 1, True)])
    results.write_claims("b", [results.claim("4", 1, "?", None)])
    summary = results.claims_summary(results.collect_claims()).set_index("chapter")
    assert summary.loc["a"].tolist() == [2, 1, 0, 3]
    assert summary.loc["b"].tolist() == [0, 0, 1, 1]
