"""A chapter's intro (the comment opening its parameters cell) quotes its declaration: every "<parameter> <value>" it
names is the value of the declaration's "paper" profile, so the intro cannot drift from the profile it describes."""

from __future__ import annotations

import ast
import re

import pytest

from toxlib.chapters import STEMS, chapter

#: (chapter, parameter) an intro names with a value its paper profile does not set, and why
NOT_IN_PROFILE = {
    ("debias_consistency", "scorer"): "Perspective needs an API key; the paper profile runs offline with the "
                                      "distilled scorer and the intro says what the paper's own scorer takes",
}


def quoted_values(stem: str) -> list[tuple[str, object]]:
    """(parameter, value) for every "<parameter> <literal>" in the chapter's intro: a number, a [list] or a
    "string"."""
    declared = chapter(stem)
    names = "|".join(re.escape(p.name) for p in declared.parameters)
    found = re.finditer(rf'\b({names}) ("[^"]*"|\[[^\]]*\]|-?\d+(?:\.\d+)?)(?![\d,])', declared.intro)
    return [(name, ast.literal_eval(text)) for name, text in (m.groups() for m in found)]


@pytest.mark.parametrize("stem", STEMS)
def test_every_value_an_intro_names_is_its_paper_profiles(stem):
    declared = chapter(stem)
    if "paper" not in declared.profiles:
        assert quoted_values(stem) == []
        return
    paper = declared.values("paper")
    for name, value in quoted_values(stem):
        if (stem, name) in NOT_IN_PROFILE:
            continue
        assert value == paper[name], f"{stem}'s intro says {name} {value!r}; its paper profile: {paper[name]!r}"


def test_the_prompted_intro_quotes_the_paper_profile():
    assert dict(quoted_values("rtp_prompted")) == {"n_toxic": 2204, "n_nontoxic": 5054}
    assert ("debias_consistency", "scorer") in {("debias_consistency", n) for n, _ in
                                                quoted_values("debias_consistency")}
