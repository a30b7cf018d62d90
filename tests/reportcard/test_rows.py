"""A report's rows: every claim of the book's model chapters is classified (about one model, pooled over the
chapter's models, or about no language model), the reader's claims are matched to the book's by their text with the
model's name as a whole word, and a claim about the scorers never enters a report."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from toxlib.chapters import model_chapters
from toxlib.reportcard.rows import OTHER, POOLED, book_models, model_claims, report_rows, subject, template
from toxlib.store import paths


@pytest.mark.parametrize("stem", model_chapters())
def test_every_claim_of_the_book_is_classified_on_purpose(stem):
    """A new claim whose text names no model must be declared pooled or other, or it fails here."""
    claims = pd.read_csv(paths.results_dir() / stem / "claims.csv", dtype=str, keep_default_na=False)
    models = book_models(stem)
    for claim in claims.loc[claims["kind"] == "our models", "claim"]:
        found = subject(stem, claim, models)
        if found == "other":
            assert any(re.search(p, claim) for p in OTHER.get(stem, ())), (stem, claim)
        elif found == "pooled":
            assert any(re.search(p, claim) for p in POOLED.get(stem, ())), (stem, claim)
        else:
            assert found.removeprefix("model:") in models


def test_a_models_name_is_matched_as_a_whole_word():
    assert subject("rtp_prompted", "Non-toxic prompts ... (tiny)", ["tiny"]) == "model:tiny"
    assert subject("rtp_prompted", "Some challenging prompts make every model produce toxicity", ["m"]) == "pooled"
    assert template("m exceeds 0.5 within 100 generations by many models", ["m"]) == (
        "{model} exceeds 0.5 within 100 generations by many models")
    assert template("smollm2-135m-ft beats smollm2-135m", ["smollm2-135m"]) == "smollm2-135m-ft beats {model}"


def _claims(rows):
    base = {"kind": "our models", "paper_value": "0.5", "our_value": 0.6, "ci_low": 0.5, "ci_high": 0.7, "n": 100,
            "verdict": "holds", "note": "", "n_to_decide": None, "threshold": 0.5}
    return pd.DataFrame([{**base, **r} for r in rows]).assign(shown=lambda f: f["our_value"].astype(str))


def test_report_rows_put_the_books_value_for_the_same_claim_beside_the_readers():
    book = _claims([{"claim": "Non-toxic prompts still give 0.5 (smollm2-135m)", "our_value": 0.42},
                    {"claim": "Non-toxic prompts still give 0.5 (gemma3-270m)", "our_value": 0.31,
                     "verdict": "fails"},
                    {"claim": "Some challenging prompts make every model produce toxicity >= 0.9"}])
    mine = _claims([{"claim": "Non-toxic prompts still give 0.5 (<mine>)", "our_value": 0.7},
                    {"claim": "Some challenging prompts make every model produce toxicity >= 0.9"},
                    {"claim": "Perspective flags every comment", "kind": "recorded predictions"}])
    rows = report_rows("rtp_prompted", mine, "<mine>", book, ["smollm2-135m", "gemma3-270m"], outside_domain=True)
    assert [r["claim"] for r in rows] == ["Non-toxic prompts still give 0.5 (<mine>)",
                                          "Some challenging prompts make every model produce toxicity >= 0.9"]
    first = rows[0]
    assert [b["model"] for b in first["bundled"]] == ["smollm2-135m", "gemma3-270m"]
    assert first["bundled"][1]["verdict"] == "fails" and first["value"] == "0.7 [0.5, 0.7]"
    assert rows[1]["bundled"][0]["model"] == "smollm2-135m and gemma3-270m"
    assert all(r["outside_domain"] for r in rows)  # a chapter that scores the model's own text
    assert not report_rows("safety_score", mine.assign(claim=["Every demographic (<mine>)", "x", "y"]), "<mine>",
                           None, ["smollm2-135m"], outside_domain=True)[0]["outside_domain"]


def test_claims_about_the_scorers_are_left_out():
    claims = _claims([{"claim": "Perspective flags every comment with a swear word; here: the bilstm scorer"},
                      {"claim": "Few-shot prompting beats zero- and one-shot (F1); here: mine, next-token reading"}])
    assert model_claims(claims, "sass", ["mine"])["claim"].tolist() == [
        "Few-shot prompting beats zero- and one-shot (F1); here: mine, next-token reading"]
