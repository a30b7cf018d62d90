"""A report's rows: every claim of the book's model chapters names its subject (one model, the models it pools, or a
scorer or system, never wording to parse), the reader's claims are joined to the book's by rule, one book row per
bundled model, and a claim about the scorers, systems or data never enters a report."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib.chapters import model_chapters
from toxlib.publish.claims import RULE, claim, rule_of, subject_models
from toxlib.reportcard.rows import book_models, model_claims, read_chapter_claims, report_rows
from toxlib.store import paths


def _committed(stem: str) -> pd.DataFrame:
    """The book's claims.csv of ``stem``; the test is skipped while the committed file predates claim ids."""
    path = paths.results_dir() / stem / "claims.csv"
    if "id" not in pd.read_csv(path, nrows=0).columns:
        pytest.skip(f"{path} predates claim ids: rebuild the book (scripts/build_book.sh) to write them")
    return read_chapter_claims(paths.results_dir(), stem)


@pytest.mark.parametrize("stem", model_chapters())
def test_every_claim_on_our_models_names_its_subject(stem):
    claims = _committed(stem)
    models = book_models(stem)
    for _, row in claims[claims["kind"] == "our models"].iterrows():
        subject = row["subject"]
        assert subject.split(":")[0] in ("model", "models", "scorer", "system"), (stem, row["claim"], subject)
        assert set(subject_models(subject)) <= set(models), (stem, row["claim"], subject)
        assert row["id"] == f"{rule_of(row['id'])}:{subject}" and RULE.fullmatch(rule_of(row["id"])), row["id"]


@pytest.mark.parametrize("stem", model_chapters())
def test_a_bundled_models_report_joins_each_row_to_one_book_row_per_bundled_model(stem):
    """The book's own claims read as a report of each bundled model: every row is that model's, and beside it the
    book holds one row of the same rule per bundled model (one for a pooled claim), its own value among them."""
    book = _committed(stem)
    models = book_models(stem)
    for model in models:
        rows = report_rows(stem, book, model, book, models, outside_domain=False)
        assert rows, (stem, model)
        for row in rows:
            names = [b["model"] for b in row["bundled"]]
            assert len(names) == len(set(names)) and names, (stem, row["id"])
            if row["id"].endswith(f":model:{model}"):
                assert set(names) <= set(models)
                assert {b["model"]: b["value"] for b in row["bundled"]}[model] == row["value"], row["id"]
            else:
                assert names == [" and ".join(subject_models(row["id"].split(":", 1)[1]))], row["id"]


def _claims(rows: list[tuple]) -> pd.DataFrame:
    """A claims table from (text, rule, subject, value, verdict[, kind]) tuples; kind "our models" unless given."""
    built = []
    for text, rule, subject, value, verdict, *kind in rows:
        built.append(claim(text, "0.5", value, kind=kind[0] if kind else "our models", rule=rule, subject=subject,
                           interval=(value - 0.1, value + 0.1), n=100, threshold=0.5, verdict=verdict))
    return pd.DataFrame(built)


def test_report_rows_join_the_readers_claims_to_the_books_by_rule_not_wording():
    book = _claims([("Non-toxic prompts give 0.5 (smollm2-135m)", "nontoxic_probability", "model:smollm2-135m", 0.42,
                     "holds"),
                    ("Non-toxic prompts give 0.5 (gemma3-270m)", "nontoxic_probability", "model:gemma3-270m", 0.31,
                     "fails"),
                    ("Some prompts make every model toxic", "challenging_all_models",
                     "models:smollm2-135m+gemma3-270m", 0.5, "holds")])
    mine = _claims([("Reworded: non-toxic prompts still give 0.5 (<mine>)", "nontoxic_probability", "model:<mine>",
                     0.7, "holds"),
                    ("Non-toxic prompts give 0.5 (smollm2-135m)", "nontoxic_probability", "model:smollm2-135m", 0.4,
                     "holds"),  # a model run beside the reader's (a masked LM's way in): not the reader's
                    ("Some prompts make every model toxic", "challenging_all_models", "models:<mine>", 0.6, "holds"),
                    ("Perspective flags every comment", "flags", "system:PERSPECTIVE", 0.9, "holds",
                     "recorded predictions")])
    rows = report_rows("rtp_prompted", mine, "<mine>", book, ["smollm2-135m", "gemma3-270m"], outside_domain=True)
    assert [r["id"] for r in rows] == ["nontoxic_probability:model:<mine>", "challenging_all_models:models:<mine>"]
    first = rows[0]
    assert first["claim"] == "Reworded: non-toxic prompts still give 0.5 (<mine>)"
    assert [b["model"] for b in first["bundled"]] == ["smollm2-135m", "gemma3-270m"]
    assert first["bundled"][1]["verdict"] == "fails" and first["value"] == "0.700 [0.600, 0.800]"
    assert rows[1]["bundled"] == [{"model": "smollm2-135m and gemma3-270m", "value": "0.500 [0.400, 0.600]",
                                   "verdict": "holds"}]
    assert all(r["outside_domain"] for r in rows)  # a chapter that scores the model's own text
    safety = report_rows("safety_score", mine, "<mine>", None, ["smollm2-135m"], outside_domain=True)
    assert not safety[0]["outside_domain"] and safety[0]["bundled"] == []


def test_claims_about_scorers_systems_and_data_are_left_out():
    claims = _claims([("Perspective flags every comment with a swear word; here: the bilstm scorer",
                       "flags_every_swear_comment", "scorer:bilstm", 0.9, "holds"),
                      ("GPT-3-FEW beats Perspective", "beats_in_f1", "system:GPT-3-FEW", 0.6, "holds"),
                      ("ToxiGen has 13 groups", "toxigen_groups", "data", 13.0, "holds"),
                      ("Few-shot beats zero- and one-shot; here: mine", "few_beats_zero_one", "model:mine", 0.6,
                       "holds")])
    assert model_claims(claims)["id"].tolist() == ["few_beats_zero_one:model:mine"]
