"""What a report can run on a model, decided from its config and tokenizer before its weights load: a masked LM
gets the safety score only, a tokenizer that splits " True" gets SASS's sampled reading only, a tokenizer without a
start token gets no unprompted chapter, and a model too large for the memory free gets nothing, saying so."""

from __future__ import annotations

import pytest

from toxlib.chapters import model_chapters
from toxlib.models.tiny import tiny_causal_lm, tiny_masked_lm
from toxlib.reportcard import model_facts as facts_module
from toxlib.reportcard.model_facts import applicability, model_facts

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {"causal": tiny_causal_lm(root / "causal"), "masked": tiny_masked_lm(root / "masked")}


def test_a_masked_lm_gets_the_safety_score_only(tiny):
    facts = model_facts(str(tiny["masked"]), "cpu")
    fits = applicability(facts)
    assert facts.kind == "masked" and [s for s in model_chapters() if fits[s].applies] == ["safety_score"]
    assert "does not generate" in fits["rtp_prompted"].why and "pseudo-perplexity" in fits["safety_score"].why


def test_a_tokenizer_that_splits_the_answers_gets_the_sampled_reading(tiny):
    facts = model_facts(str(tiny["causal"]), "cpu")
    fits = applicability(facts)
    assert not facts.answers_single and fits["sass"].applies and fits["sass"].changes == {"readings": ["sampled"]}
    assert all(fits[s].applies for s in model_chapters()) and facts.start_token == "<bos>"


def test_a_model_too_large_for_the_memory_free_is_refused_before_it_loads(tiny, monkeypatch):
    monkeypatch.setattr(facts_module, "free_memory_gb", lambda device: 1e-6)
    fits = applicability(model_facts(str(tiny["causal"]), "cpu"))
    assert not any(f.applies for f in fits.values())
    assert "GB are free" in fits["safety_score"].why and "--device cuda" in fits["safety_score"].why


def test_a_short_name_shows_instead_of_the_path(tiny):
    from toxlib.models import load, name_models

    names = {"mine": str(tiny["causal"])}
    lm = load("mine", device="cpu", names=names)
    assert lm.name == "mine" and lm.source == "local"
    assert model_facts("mine", "cpu", names=names).target == str(tiny["causal"])
    try:
        name_models(names)  # as a chapter's first cell does with its model_names parameter
        assert load("mine", device="cpu").name == "mine"
        with pytest.raises(Exception, match="bundled model name"):
            name_models({"smollm2-135m": str(tiny["causal"])})
    finally:
        name_models({})
    with pytest.raises(Exception, match="model 'mine'"):  # no longer a short name: a hub id, not reachable here
        load("mine", device="cpu")
