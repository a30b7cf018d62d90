"""A model that answers one way to every comment earns no unmarked "holds" on a SASS classification claim: every claim
rule of the chapter's part 2 is fed a constant model's labels (each constant), with the recorded systems and a
constant scorer beside it, through the chapter's own table functions on the real comments and tweets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib import data
from toxlib.metrics import prf_table
from toxlib.metrics.baselines import with_baselines
from toxlib.papers import sass
from toxlib.papers.sass.paper_claims import DEGENERATE_MARK

MODEL = "const"
SETTINGS = ("zero", "one", "few")


@pytest.fixture(scope="module")
def recorded():
    pred = sass.relabel(data.load_sass_predictions())
    tweets = data.load_sass_tweeteval()
    words = {"rtp": data.load_word_list("rtp")["word"]}
    t3 = with_baselines(sass.with_paper(sass.table3(pred), sass.PAPER_TABLE3, "system"), pred["human_label"])
    t7 = with_baselines(sass.with_paper(sass.table7(tweets), sass.PAPER_TABLE7, "system"), tweets["label"])
    return pred, tweets, words, (t3, sass.table5(pred), sass.table6_by_word_list(pred, words), t7)


def _constant_model_claims(recorded, answer: float) -> tuple[list[dict], pd.DataFrame]:
    pred, tweets, words, tables = recorded
    lm = {f"{MODEL} {s.upper()} (next-token)": np.full(len(pred), answer) for s in SETTINGS}
    pred2 = pred.assign(**lm, scorer_label=answer)
    systems = {**sass.RECORDED_SYSTEMS, **{s: s for s in lm}, "flat": "scorer_label"}
    lm_systems = pd.DataFrame([{"system": s, "model": MODEL, "setting": setting, "reading": "next-token",
                                "answer_mass": 1.0, "score_sd": 0.0} for s, setting in zip(lm, SETTINGS)])
    classifiers = sass.classifier_table(pred2, systems, lm_systems)
    t6_local = sass.table6_by_word_list(pred2, words, systems, scopes=False)
    few = f"{MODEL} FEW (next-token)"
    t7_local = with_baselines(prf_table(tweets["label"], {"PERSPECTIVE": tweets["perspective_label"],
                                                          "GPT-3-FEW": tweets["gpt3_few"],
                                                          few: np.full(len(tweets), answer),
                                                          "flat": np.full(len(tweets), answer)}), tweets["label"])
    rows = sass.claims(*tables, classifiers, t6_local, t7_local, len(pred2), len(tweets), 0.5, pred2, systems)
    return rows, classifiers


@pytest.mark.parametrize("answer", [1.0, 0.0], ids=["always toxic", "never toxic"])
def test_a_constant_model_gets_no_unmarked_holds(recorded, answer):
    rows, classifiers = _constant_model_claims(recorded, answer)
    local = [r for r in rows if r["kind"] == "our models"]
    assert len(local) >= 4  # the best LM, few vs zero/one, the scorer's swear words, TweetEval
    assert [r["claim"] for r in local if r["verdict"] == "holds"] == []
    assert classifiers.set_index("system").loc[f"{MODEL} FEW (next-token)", "degenerate"]


def test_answering_toxic_to_everything_beats_perspective_and_is_called_not_informative(recorded):
    rows, _ = _constant_model_claims(recorded, 1.0)
    by_claim = {r["claim"]: r for r in rows}
    best = by_claim["A few-shot prompted LM beats Perspective on SASS (F1); here: the best local LM system"]
    # F1 0.840 against Perspective's 0.084: the comparison alone would hold
    assert best["ci_low"] > 0 and best["verdict"] == "not informative"
    assert "not informative: answering toxic to every comment scores F1 0.840" in best["note"]
    assert f"{DEGENERATE_MARK}: {MODEL} " in best["note"]  # the best system answered as a constant would
    swear = by_claim["Perspective flags every comment with a swear word; here: the flat scorer"]
    # 13 of 13 comments with a swear word flagged, [0.75, 1]: undecided against 0.8, and never "holds", since the
    # scorer flags the comments without one alike
    assert swear["shown"] == "1" and swear["verdict"] == "undecided" and "difference +0.000" in swear["note"]
    recorded_claim = by_claim["GPT-3-FEW beats Perspective on SASS (F1)"]  # the paper's, judged as it states it
    assert recorded_claim["verdict"] == "holds" and "neither system beats that constant" in recorded_claim["note"]
