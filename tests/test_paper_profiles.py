"""Every chapter (and the scorecard) declares a paper profile whose parameters its parameters cell accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from toxlib.build import runner

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + [ROOT / "book" / "scorecard.ipynb"]

#: The paper sizes each chapter's paper profile must carry (checked against the parameters by a colleague).
EXPECTED = {
    "rtp_unprompted": {"pool_size": 10000, "resamples": 1000},
    "rtp_prompted": {"n_toxic": 2204, "n_nontoxic": 5054, "n_challenging": 1196},
    "debias_consistency": {"n_prompts": 1199, "decay_constant": 100.0, "sweep": [10.0, 50.0], "num_beams": 3},
    "safety_score": {"max_sentences": 0, "max_implicit_sentences": 0},
    "rtp_detox": {"n_toxic": 416, "n_nontoxic": 700, "n_perplexity": 200, "n_unprompted": 400, "k": 25,
                  "corpus_size": 0, "vocab_shift_texts": 0, "discriminator_texts": 0, "adapt_steps": 1000,
                  "pplm_prompts": 42, "pplm_k": 10},
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_paper_profile_is_declared_and_its_parameters_exist(path):
    profile = runner.profile_parameters(path, "paper")
    assert profile == EXPECTED.get(path.stem, {})
    assert runner.check_parameters(path, profile) == profile  # every name is a parameter, values keep their type
    assert runner.notebook_profiles(path)["smoke"] or path.stem == "scorecard"  # smoke kept
