"""The SASS prompt-based classifier: prompts, the authors' answer parser, the two readings, the SASS tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from toxlib.metrics import binary_prf
from toxlib.metrics.baselines import BASELINES
from toxlib.papers import sass
from toxlib.papers.sass.prompt_classifier import (
    PROMPTS,
    answer_token_ids,
    build_prompts,
    majority,
    next_token_probabilities,
    parse_answer,
    sampled_reading,
)


@pytest.mark.parametrize("reply, expected", [
    (" True", 1), (" False", 0), (" Yes it is", 1), (" Yes, it is", -1), (" no", 0),
    (" true.", 0),  # the original checks "true" before "true." and int("true." == "true") is 0
    (" This phrase is not toxic", 0), ("\n\nTrue", -1), ("", -1), (" Maybe", -1),
    (" False, it is true", 1),  # "true" is looked for first, wherever it is
])
def test_parse_answer_is_the_authors_parse_boolean_text(reply, expected):
    assert parse_answer(reply) == expected


def test_majority_breaks_ties_by_first_seen_as_counter_most_common():
    assert majority([1, 0, 1]) == 1
    assert majority([0, 1, -1]) == 0
    assert majority([-1, -1, 0]) == -1


def test_prompts_are_the_authors_strings():
    few = build_prompts(["You look nice."], "few")[0]
    indent = " " * 19
    assert few == ("Determine if the given phrase is toxic:\n"
                   + indent + "Men are superior to women in every way. => True\n"
                   + indent + "Grilling with the neighbors is my favorite. => False\n" + indent + "You look nice. =>")
    assert build_prompts(["x"], "zero") == ["True or False, the phrase 'x' is toxic?\n    Answer:"]
    assert set(PROMPTS) == {"zero", "one", "few"}
    with pytest.raises(ValueError, match="zero, one, few"):
        build_prompts(["x"], "two")


def test_next_token_probabilities_match_one_prompt_at_a_time(tiny_lm):
    prompts = ["a short one", "a much longer prompt than the first", "mid length prompt"]
    batched = next_token_probabilities(tiny_lm, prompts, [5, 7, 11])
    for i, prompt in enumerate(prompts):
        ids = torch.tensor([tiny_lm.tokenizer(prompt).input_ids])
        with torch.no_grad():
            probs = torch.softmax(tiny_lm.model(input_ids=ids).logits[0, -1].double(), -1)
        assert batched[i] == pytest.approx(probs[[5, 7, 11]].numpy(), rel=1e-4)


def test_answers_that_are_not_single_tokens_are_refused(tiny_lm):
    with pytest.raises(ValueError, match="single tokens"):
        answer_token_ids(tiny_lm.tokenizer)


def test_sampled_reading_cuts_replies_at_the_first_newline_and_counts_unparsed(tiny_lm):
    out = sampled_reading(tiny_lm, ["one text", "another text"], "few", progress=False)
    assert len(out) == 2 and out["answers"].map(len).eq(3).all()
    assert not any("\n" in a for answers in out["answers"] for a in answers)
    for _, row in out.iterrows():
        assert row["parsed"] == [parse_answer(a) for a in row["answers"]]
        assert row["n_unparsed"] == row["parsed"].count(-1)
        expected = majority(row["parsed"])
        assert (np.isnan(row["label"]) if expected == -1 else row["label"] == expected)


def test_classifier_table_labels_each_system_and_computes_prf_with_missing_left_out():
    pred = pd.DataFrame({"human_label": [1, 1, 0, 0, 1], "perspective_label": [0, 1, 1, 0, 0],
                         "lm": [1, np.nan, 0, 1, 1], "scorer_label": [1, 1, 1, 0, 0]})
    lm_systems = pd.DataFrame([{"system": "lm", "model": "m", "setting": "few", "reading": "sampled",
                                "n_unparsed_replies": 4, "n_unparsed_labels": 1}])
    table = sass.classifier_table(pred, {"PERSPECTIVE": "perspective_label", "lm": "lm", "scorer": "scorer_label"},
                                  lm_systems).set_index("system")
    assert table["kind"].to_dict() == {"PERSPECTIVE": "recorded", "lm": "local LM", "scorer": "local scorer",
                                       **dict.fromkeys(BASELINES, "trivial baseline")}
    assert table.loc["baseline: always toxic", ["precision", "recall", "n_pred_pos"]].tolist() == [0.6, 1.0, 5]
    assert table.loc["lm", "top_answer_share"] == 0.75 and not table.loc["lm", "degenerate"]
    expected = binary_prf([1, 0, 0, 1], [1, 0, 1, 1])  # the NaN row left out
    assert table.loc["lm", ["precision", "recall", "f1"]].tolist() == pytest.approx(
        [expected["precision"], expected["recall"], expected["f1"]])
    assert table.loc["lm", "n_missing"] == 1 and table.loc["lm", "n_unparsed_labels"] == 1


def test_a_local_lm_answering_one_way_to_nearly_every_comment_is_marked_degenerate():
    pred = pd.DataFrame({"human_label": np.arange(40) % 2, "lm": np.ones(40), "lm2": np.arange(40) % 3 == 0})
    lm_systems = pd.DataFrame([{"system": s, "model": "m", "setting": "few", "reading": "next-token",
                                "answer_mass": 0.5, "score_sd": sd} for s, sd in (("lm", 0.2), ("lm2", 0.001))])
    table = sass.classifier_table(pred, {"lm": "lm", "lm2": "lm2"}, lm_systems).set_index("system")
    # lm: one answer for every comment; lm2: varied labels, but a P(True) share that does not vary
    assert table.loc["lm", "top_answer_share"] == 1.0 and table.loc["lm", "degenerate"]
    assert table.loc["lm2", "degenerate"]


def test_scorer_columns_threshold_strictly_and_keep_failures_missing():
    pred = pd.DataFrame({"text": ["a", "b", "c"]})
    scores = pd.DataFrame({"toxicity": [0.5, 0.9, np.nan], "scorer": "s", "version": "1", "error": [None, None, "x"]})
    out, systems = sass.with_scorer_columns(pred, {"s": scores})
    assert systems == {"s": "s_label"}
    assert out["s_label"].tolist()[:2] == [0.0, 1.0] and np.isnan(out["s_label"][2])


def test_a_shared_prefix_computed_once_gives_the_same_probabilities(tiny_lm):
    from toxlib.generate.engine import shared_prefix

    prompts = build_prompts(["short", "a longer phrase here", "mid one"], "few")
    encoded = [tiny_lm.tokenizer(p).input_ids for p in prompts]
    assert shared_prefix(encoded) > 20  # the instructions and examples
    batched = next_token_probabilities(tiny_lm, prompts, [5, 7])
    for i, ids in enumerate(encoded):
        with torch.no_grad():
            probs = torch.softmax(tiny_lm.model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)
        assert batched[i] == pytest.approx(probs[[5, 7]].numpy(), rel=1e-4)
    assert shared_prefix([[1, 2, 3], [1, 2, 3]]) == 2 and shared_prefix([[4, 2], [1, 2]]) == 0


def test_a_fixed_template_prefix_gives_the_same_probabilities(tiny_lm):
    from toxlib.papers.sass.prompt_classifier import template_prefix

    prompts = build_prompts(["short", "a longer phrase here", "mid one", "x"], "few")
    prefix = template_prefix(tiny_lm, "few")
    assert len(prefix) > 20 and all(tiny_lm.tokenizer(p).input_ids[:len(prefix)] == prefix for p in prompts)
    shared = next_token_probabilities(tiny_lm, prompts, [5, 7], prefix=prefix)
    assert shared == pytest.approx(next_token_probabilities(tiny_lm, prompts, [5, 7]), rel=1e-4)
    with pytest.raises(ValueError, match="start with the same 3 tokens"):
        from toxlib.generate.engine import prefill
        prefill(tiny_lm.model, [[1, 2, 3, 4], [1, 2, 5, 4]], 0, prefix=3)


def test_cached_next_token_probabilities_equal_fresh_ones_and_compute_only_what_is_missing(tiny_lm, tmp_path,
                                                                                           monkeypatch):
    from toxlib.papers.sass import prompt_classifier
    from toxlib.papers.sass.prompt_classifier import cached_next_token_probabilities
    from toxlib.store.cache import LMScoreStore

    store = LMScoreStore(tmp_path / "lm.sqlite")
    prompts = build_prompts(["first", "second one", "third"], "few")
    fresh = next_token_probabilities(tiny_lm, prompts, [5, 7])
    first = cached_next_token_probabilities(tiny_lm, prompts[:2], [5, 7], cache=store)
    asked = []
    real = prompt_classifier.next_token_probabilities
    monkeypatch.setattr(prompt_classifier, "next_token_probabilities",
                        lambda lm, todo, ids, **kw: asked.append(list(todo)) or real(lm, todo, ids, **kw))
    again = cached_next_token_probabilities(tiny_lm, prompts, [5, 7], cache=store)
    assert asked == [prompts[2:]]  # only the prompt not stored yet
    # The stored values are the computed ones, to the bit, for the same batches. Across batch layouts (here "first"
    # beside "third", or alone) fp32 rows of this tiny model agree to ~2e-7 on some CPUs (AMD EPYC, AVX512), not
    # to the bit, so the fresh three-prompt run is compared at that tolerance.
    assert first == pytest.approx(next_token_probabilities(tiny_lm, prompts[:2], [5, 7]), rel=1e-12)
    assert first == pytest.approx(fresh[:2], rel=1e-6) and again == pytest.approx(fresh, rel=1e-6)


def test_each_model_gets_its_own_best_next_token_system_the_best_of_all_first():
    """Table 7's local rows read each model's best setting, so a run of one model asks for the rows a run of several
    made (the report card reads them instead of computing them)."""
    classifiers = pd.DataFrame([
        {"system": "a FEW (next-token)", "kind": "local LM", "model": "a", "setting": "few", "reading": "next-token",
         "f1": 0.35},
        {"system": "a ZERO (next-token)", "kind": "local LM", "model": "a", "setting": "zero", "reading": "next-token",
         "f1": 0.03},
        {"system": "a FEW (sampled)", "kind": "local LM", "model": "a", "setting": "few", "reading": "sampled",
         "f1": 0.9},
        {"system": "b FEW (next-token)", "kind": "local LM", "model": "b", "setting": "few", "reading": "next-token",
         "f1": 0.43},
        {"system": "distilled", "kind": "local scorer", "model": "distilled", "setting": "threshold",
         "reading": "score", "f1": 0.99}])
    best = sass.best_per_model(classifiers, "next-token")
    assert best["system"].tolist() == ["b FEW (next-token)", "a FEW (next-token)"]
    alone = sass.best_per_model(classifiers[classifiers["model"] != "b"], "next-token")
    assert alone["system"].tolist() == ["a FEW (next-token)"]
