"""The estimate of a report does not crash on a model it cannot time: a masked LM (which generates nothing), a
tokenizer without BOS, EOS or pad token; a folder without a tokenizer is refused with the fix, not a traceback."""

from __future__ import annotations

import shutil

import pytest

from toxlib.common.errors import ModelUnavailableError
from toxlib.models.tiny import tiny_causal_lm, tiny_masked_lm
from toxlib.reportcard.card import estimate_text, plan_report

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {"causal": tiny_causal_lm(root / "causal"), "masked": tiny_masked_lm(root / "masked"), "root": root}


def test_a_masked_lm_is_estimated_from_its_size_with_the_reason(tiny):
    planned = plan_report("m", "smoke", {"m": str(tiny["masked"])}, device="cpu", chapters=["safety_score"])
    assert "masked LM generates nothing to time" in planned.rates["cpu"].how
    assert "safety_score" in estimate_text(planned)


def test_a_tokenizer_without_special_tokens_is_estimated_not_crashed(tiny):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    folder = tiny["root"] / "bare"
    shutil.copytree(tiny["causal"], folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    backend = AutoTokenizer.from_pretrained(tiny["causal"]).backend_tokenizer
    PreTrainedTokenizerFast(tokenizer_object=backend).save_pretrained(folder)  # no BOS, EOS, pad or unk
    planned = plan_report("bare", "smoke", {"bare": str(folder)}, device="cpu", chapters=["rtp_prompted"])
    rates = planned.rates["cpu"]
    assert rates.gen > 0 and rates.read > 0
    assert "timed on this machine" in rates.how or "timing it here failed" in rates.how, rates.how


def test_a_folder_without_a_tokenizer_is_refused_with_the_fix(tiny):
    folder = tiny["root"] / "weights-only"
    folder.mkdir()
    for path in tiny["causal"].iterdir():
        if path.name in ("config.json", "model.safetensors", "generation_config.json"):
            shutil.copy(path, folder / path.name)
    with pytest.raises(ModelUnavailableError, match="tokenizer.save_pretrained"):
        plan_report("w", "smoke", {"w": str(folder)}, device="cpu", chapters=["rtp_prompted"])
