"""The report card's domain check (``toxlib.reportcard.domain``): the human continuations' reference shipped with
toxlib is what the reference model gives them, and it is used only under the key it was computed with."""

from __future__ import annotations

import json

import pytest

from toxlib.models import load
from toxlib.reportcard import domain

pytestmark = [pytest.mark.data, pytest.mark.models]


@pytest.fixture(scope="module")
def reference():
    return load(domain.REFERENCE, dtype="float32")


def test_the_shipped_human_reference_is_the_reference_models(reference):
    """Fails when the reference's weights, NLL method, the texts' draw or the quantile change without the file:
    ``python -c "from toxlib.reportcard.domain import write_human_reference; write_human_reference()"``. In a
    checkout the NLLs come from the sample record (the rows the file was written from, while the record holds
    them); without them they are computed, and NLL sums agree across CPUs within a relative 1e-6 (the record's
    audit), hence the tolerance."""
    human = domain.domain_texts()[1]
    shipped = json.loads(domain.HUMAN_REFERENCE_FILE.read_text())
    computed = domain.computed_human_reference(reference, human)
    assert shipped["key"] == computed["key"] and shipped["n"] == computed["n"] == domain.N_HUMAN
    for value in ("threshold", "median"):
        assert shipped[value] == pytest.approx(computed[value], rel=1e-6), value
    assert computed["threshold"] > computed["median"]


def test_the_file_is_used_under_its_own_key_only(reference, tmp_path, monkeypatch):
    human = domain.domain_texts()[1]
    planted = {**json.loads(domain.HUMAN_REFERENCE_FILE.read_text()), "threshold": 99.0}
    real_key = domain.model_key
    monkeypatch.setattr(domain, "HUMAN_REFERENCE_FILE", tmp_path / "human_reference.json")
    domain.HUMAN_REFERENCE_FILE.write_text(json.dumps(planted))
    assert domain.human_reference(reference, human)["threshold"] == 99.0  # read, not computed
    other = human[:-1]  # other texts: another key
    assert domain.human_reference(reference, other) == domain.computed_human_reference(reference, other)
    monkeypatch.setattr(domain, "QUANTILE", 0.9)  # another quantile: another key
    assert domain.human_reference(reference, human)["threshold"] < 99.0
    monkeypatch.setattr(domain, "QUANTILE", planted["key"]["quantile"])
    monkeypatch.setattr(domain, "model_key", lambda lm, method: "another reference")  # another NLL key
    assert domain.human_reference(reference, human)["threshold"] < 99.0
    monkeypatch.setattr(domain, "model_key", real_key)
    domain.HUMAN_REFERENCE_FILE.write_text("{damaged")
    assert domain.human_reference(reference, human)["threshold"] < 99.0  # a damaged file is computed around
