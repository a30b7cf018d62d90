"""A steering's config() keys its generations in the cache: one that does not say what it changes must not share
texts with another setting."""

from __future__ import annotations

import pytest

from toxlib.steer import LogitsSteering, PromptTemplate, Steering


class Forgetful(Steering):
    name = "forgetful"

    def __init__(self, strength: float):
        self.strength = strength

    def transform_prompt(self, prompt: str) -> str:
        return "!" * int(self.strength) + prompt


def test_a_subclass_without_config_is_refused_by_name():
    with pytest.raises(TypeError, match="Forgetful must define config"):
        Forgetful(2).config()
    with pytest.raises(TypeError, match="Forgetful"):
        repr(Forgetful(3))


def test_no_steering_and_the_defined_configs_still_work():
    assert Steering().config() == {"name": "none"}
    assert PromptTemplate("Be kind: {prompt}").config()["template"] == "Be kind: {prompt}"
    assert LogitsSteering("x", [], {"a": 1}).config() == {"name": "x", "a": 1}


def test_generate_refuses_it_before_computing(tiny_lm):
    from toxlib.generate import DecodingConfig, generate

    with pytest.raises(TypeError, match="Forgetful must define config"):
        generate(tiny_lm, ["Hello"], DecodingConfig(num_samples=1, max_new_tokens=2), steering=Forgetful(1),
                 cache=False, progress=False)
