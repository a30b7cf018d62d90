"""Claims as data: every claim row has a stable id (its rule and its subject, never its wording) and a subject, and
no two claims of a chapter share an id (issue 63)."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.publish import claims, results
from toxlib.store import paths

COMMITTED = sorted(p.parent.name for p in paths.results_dir().glob("*/claims.csv"))


def test_a_claims_id_is_its_rule_and_subject():
    row = claims.claim("DAPT (toxic) is not failsafe", "some", 0.2, kind="our models",
                       rule=f"not_failsafe.{claims.qualifier('DAPT (toxic)')}", subject=claims.model_subject("m"))
    assert row["id"] == "not_failsafe.dapt_toxic:model:m" and row["subject"] == "model:m"
    assert claims.rule_of(row["id"]) == "not_failsafe.dapt_toxic"
    pooled = claims.models_subject(["smollm2-135m", "gemma3-270m"])
    assert pooled == "models:smollm2-135m+gemma3-270m"
    assert claims.subject_models(pooled) == ["smollm2-135m", "gemma3-270m"]
    assert claims.subject_models("model:a/b") == ["a/b"] and claims.subject_models("scorer:bilstm") == []


@pytest.mark.parametrize("rule,subject", [("Toxic prompts are worse", "model:m"), ("a:b", "model:m"),
                                          ("rule", "dataset"), ("rule", "model:"), ("rule", "models:a+"),
                                          ("rule", "data:rtp")])
def test_a_claim_refuses_a_rule_or_subject_outside_the_vocabulary(rule, subject):
    with pytest.raises(ValueError, match="rule|subject"):
        claims.claim("c", 1, 1, kind="our models", rule=rule, subject=subject)


def test_two_claims_of_a_chapter_with_one_id_are_refused(results_dir):
    rows = [claims.claim(f"x ({n})", 1, 1, verdict="holds", kind="our models", rule="same_rule", subject="model:m")
            for n in ("first wording", "second wording")]
    rows.append(claims.claim("y", 1, 1, verdict="holds", kind="our models", rule="other", subject="model:m"))
    with pytest.raises(ValueError, match=r"share the ids \['same_rule:model:m'\]"):
        claims.write_claims("chap", rows)
    assert not (results_dir / "chap" / "claims.csv").exists()


def test_a_row_without_its_id_is_refused(results_dir):
    row = claims.claim("x", 1, 1, verdict="holds", kind="our models", rule="r", subject="model:m")
    with pytest.raises(ValueError, match="needs its id and subject"):
        claims.write_claims("chap", [{**row, "id": ""}])


def test_a_claims_file_without_ids_says_to_rerun_its_chapter(results_dir):
    row = claims.claim("x", 1, 1, verdict="holds", kind="our models", rule="r", subject="model:m")
    results.write_table("old", "claims", pd.DataFrame([row]).drop(columns=["id", "subject"]))
    with pytest.raises(ValueError, match=r"lacks the claims columns \['id', 'subject'\]: re-run its chapter"):
        claims.read_claims(results_dir / "old" / "claims.csv")


@pytest.mark.parametrize("stem", COMMITTED)
def test_the_committed_claims_have_one_id_each(stem):
    path = paths.results_dir() / stem / "claims.csv"
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if "id" not in table.columns:
        pytest.skip(f"{path} predates claim ids: rebuild the book (scripts/build_book.sh) to write them")
    shared = table.loc[table["id"].duplicated(), "id"].tolist()
    assert not shared, f"{stem}: claims share the ids {shared}"
    assert all(i == f"{claims.rule_of(i)}:{s}" for i, s in zip(table["id"], table["subject"]))
