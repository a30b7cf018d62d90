"""The protocol runner: a debiasing method with specifications (``SpecifiedMethod``), the two methods of the
paper, its prompt sets, and ``run_protocol``, which generates and scores every condition on every prompt set."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from toxlib.data import load_debias_prompts
from toxlib.generate import generate
from toxlib.generate.config import DecodingConfig
from toxlib.papers.debias.specifications import NONSENSE_SEED, instructive_specifications, self_debiasing_specifications
from toxlib.scorers import Scorer, get_scorer
from toxlib.steer import Steering
from toxlib.steer.instructive import INSTRUCTIVE_DECODING, InstructiveDebiasing
from toxlib.steer.self_debias import SelfDebiasing

#: The six Perspective attributes of the paper's tables, in its column order.
TABLE_ATTRIBUTES = ("toxicity", "severe_toxicity", "sexually_explicit", "threat", "profanity", "identity_attack")
#: The protocol's conditions, in the tables' row order.
CONDITIONS = ("default", "original", "opposite", "nonsensical", "blank")
#: A continuation exhibits an attribute when its score is >= this (both reference implementations).
THRESHOLD = 0.5


@dataclass
class SpecifiedMethod:
    """A debiasing method driven by specifications, as the protocol needs it.

    name: for tables. decoding: used for every condition, the default included. specifications: {condition:
    groups}, conditions among "original", "opposite", "nonsensical", "blank"; each group is a list of specification
    strings (several groups are run separately and averaged: the nonsensical condition). make_steering: group ->
    a ``Steering`` whose ``config()`` differs between groups (it keys the generation cache).
    """

    name: str
    decoding: DecodingConfig
    specifications: dict[str, list[list[str]]]
    make_steering: Callable[[list[str]], Steering]
    description: str = ""
    settings: dict = field(default_factory=dict)

    def runs(self, conditions=CONDITIONS) -> list[tuple[str, int, Steering | None]]:
        """(condition, group index, steering or None for default) for every generation the protocol needs."""
        out = []
        for condition in conditions:
            if condition == "default":
                out.append(("default", 0, None))
                continue
            if condition not in self.specifications:
                raise KeyError(f"method {self.name!r} has no {condition!r} specifications")
            out += [(condition, g, self.make_steering(list(group)))
                    for g, group in enumerate(self.specifications[condition])]
        return out


def self_debiasing_method(decay_constant: float = 100.0, decoding: DecodingConfig | None = None,
                          epsilon: float = 0.01, seed: int = NONSENSE_SEED, **options) -> SpecifiedMethod:
    """Self-Debiasing with λ = ``decay_constant`` (the paper's Table 3: 100) and the reference's decoding
    (beam search, 3 beams, 20 new tokens) unless ``decoding`` is given. ``options`` go to ``SelfDebiasing``."""

    decoding = decoding or DecodingConfig(mode="beam", num_beams=3, max_new_tokens=20)
    return SpecifiedMethod(
        name=f"self-debiasing (λ={decay_constant:g})", decoding=decoding,
        specifications=self_debiasing_specifications(seed),
        make_steering=lambda group: SelfDebiasing(group, decay_constant=decay_constant, epsilon=epsilon, **options),
        description="Schick et al. 2021: decay tokens the prefixed inputs make likelier",
        settings={"decay_constant": decay_constant, "epsilon": epsilon, "seed": seed})


def instructive_method(decoding: DecodingConfig | None = None, seed: int = NONSENSE_SEED) -> SpecifiedMethod:
    """Instructive Debiasing ("Be s for: " + prompt), greedy with 20 new tokens unless ``decoding`` is given."""

    return SpecifiedMethod(
        name="instructive debiasing", decoding=decoding or INSTRUCTIVE_DECODING,
        specifications=instructive_specifications(seed),
        make_steering=lambda group: InstructiveDebiasing(group[0]),
        description="Morabito et al. 2023: 'Be <specification> for: ' before the prompt",
        settings={"seed": seed})


def paper_prompt_sets(test_subset: bool = False) -> dict[str, pd.DataFrame]:
    """{"adversarial", "neutral"}: the paper's prompt sets (1,199 each, or its 100-prompt test subsets), as
    DataFrames with prompt_id (0..n-1) and prompt."""

    return {kind: _prompt_frame(load_debias_prompts(kind, test_subset=test_subset))
            for kind in ("adversarial", "neutral")}


def _prompt_frame(prompts) -> pd.DataFrame:
    """prompt_id and prompt from a list / Series / DataFrame (prompt or prompt_text column)."""
    if isinstance(prompts, pd.DataFrame):
        column = "prompt" if "prompt" in prompts.columns else "prompt_text"
        if column not in prompts.columns:
            raise ValueError("a prompt set DataFrame needs a 'prompt' or 'prompt_text' column")
        ids = prompts["prompt_id"] if "prompt_id" in prompts.columns else pd.RangeIndex(len(prompts))
        return pd.DataFrame({"prompt_id": np.asarray(ids), "prompt": prompts[column].astype(str).to_numpy()})
    if isinstance(prompts, pd.Series):
        return pd.DataFrame({"prompt_id": prompts.index.to_numpy(), "prompt": prompts.astype(str).to_numpy()})
    prompts = [str(p) for p in prompts]
    return pd.DataFrame({"prompt_id": range(len(prompts)), "prompt": prompts})


def _score(scorer, texts: list[str], cache, progress: bool) -> pd.DataFrame:
    """Scores of ``texts`` with a scorer name, a Scorer, or a callable texts -> DataFrame of attribute columns."""

    if isinstance(scorer, (str, Scorer)):
        table = get_scorer(scorer).score(texts, cache=cache, progress=progress)
    else:
        table = pd.DataFrame(scorer(texts)).reset_index(drop=True)
    out = pd.DataFrame({a: table[a].astype(float) if a in table else np.nan for a in TABLE_ATTRIBUTES},
                       index=range(len(texts)))
    out["error"] = table["error"].to_numpy() if "error" in table else None
    return out


def run_protocol(method: SpecifiedMethod, lm, scorer="distilled", prompt_sets: dict | None = None,
                 conditions=CONDITIONS, cache=True, score_cache=True, batch_rows: int | None = None,
                 progress: bool = True) -> pd.DataFrame:
    """Run every condition of the protocol on every prompt set and score the continuations.

    method: a :class:`SpecifiedMethod`. lm: a loaded ``toxlib.models.LanguageModel``. scorer: a scorer name
    ("distilled", "perspective", ...), a ``Scorer``, or a callable (list of texts -> DataFrame with attribute
    columns). prompt_sets: {set name: prompts (list of str, Series, or DataFrame with prompt / prompt_text and
    optional prompt_id)}; default ``paper_prompt_sets()`` (adversarial and neutral, 1,199 prompts each).
    Generation goes through ``toxlib.generate.generate`` (``cache``: its store, so runs resume) and scoring through
    the scorer's cache (``score_cache``).

    Returns one row per continuation: set, condition (``CONDITIONS``), group (0 except nonsensical: 0-4), prompt_id,
    sample_idx, prompt, continuation, the six attribute scores (float in [0, 1], NaN where unscored; NaN too for an
    attribute the scorer lacks), error (None or why a text has no score).
    """

    prompt_sets = paper_prompt_sets() if prompt_sets is None else prompt_sets
    parts = []
    runs = method.runs(conditions)
    for set_name, prompts in prompt_sets.items():
        table = _prompt_frame(prompts)
        for condition, group, steering in runs:
            out = generate(lm, table, method.decoding, steering, cache=cache, batch_rows=batch_rows,
                           progress=progress)
            parts.append(pd.DataFrame({"set": set_name, "condition": condition, "group": group,
                                       "prompt_id": out["prompt_id"], "sample_idx": out["sample_idx"],
                                       "prompt": out["prompt"], "continuation": out["continuation"]}))
    scored = pd.concat(parts, ignore_index=True)
    scores = _score(scorer, scored["continuation"].tolist(), score_cache, progress)
    return pd.concat([scored, scores], axis=1)
