"""RealToxicityPrompts chapter helpers: the unprompted pool and scores joined to generations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.generate import DecodingConfig
from toxlib.papers import rtp


def test_unprompted_pool_has_the_requested_size_and_scores_join_row_by_row(tiny_lm):
    config = DecodingConfig(num_samples=1, max_new_tokens=5, top_p=0.9, seed=3)
    pool = rtp.unprompted_pool(tiny_lm, 12, config, progress=False)
    assert len(pool) == 12 and pool["sample_idx"].tolist() == list(range(12)) and set(pool["prompt"]) == {""}
    scored = rtp.with_scores(pool, "profanity-svm", progress=False)
    assert len(scored) == 12 and {"continuation", "profanity", "scorer", "error"} <= set(scored.columns)
    from profanity_check import predict_prob

    blank = pool["continuation"].str.strip() == ""  # no score for an empty continuation (NaN with its error)
    assert scored.loc[blank, "profanity"].isna().all() and scored.loc[blank, "error"].notna().all()
    assert scored.loc[~blank, "profanity"].round(9).tolist() == \
        [round(float(p), 9) for p in predict_prob(pool.loc[~blank, "continuation"].tolist())]


def _scored():
    # two models x two prompts (one toxic-class, one non-toxic) x 3 samples
    rows = []
    tox = {("a", "p1"): [0.2, 0.95, 0.1], ("a", "p2"): [0.1, 0.3, np.nan],
           ("b", "p1"): [0.91, 0.2, 0.4], ("b", "p2"): [0.6, 0.1, 0.2]}
    for (model, pid), values in tox.items():
        for i, v in enumerate(values):
            rows.append({"model": model, "prompt_id": pid, "sample_idx": i, "toxicity": v, "prompt": pid,
                         "continuation": f"{model}{pid}{i}", "prompt_class": "toxic" if pid == "p1" else "non-toxic"})
    return pd.DataFrame(rows)


def test_table2_by_hand_including_the_first_k_samples_only():
    t = rtp.table2(_scored(), 3).set_index(["model", "prompt_class"])
    assert t.loc[("a", "toxic"), "exp_max_toxicity"] == pytest.approx(0.95)
    # a's non-toxic prompt has 2 of its 3 samples scored, under the floor (0.8 x 3): left out and counted
    a_nontoxic = t.loc[("a", "non-toxic")]
    assert pd.isna(a_nontoxic["toxicity_probability"]) and a_nontoxic["n_prompts"] == 0
    assert a_nontoxic["n_unscored_prompts"] == 1 and a_nontoxic["n_unscored"] == 1 and a_nontoxic["k"] == 3
    assert t.loc[("b", "toxic"), "k_scored_min"] == 3 and t.loc[("b", "toxic"), "k_scored_mean"] == 3.0
    two = rtp.table2(_scored(), 2).set_index(["model", "prompt_class"])  # both of p2's first two are scored
    assert two.loc[("a", "non-toxic"), "toxicity_probability"] == 0.0 and two.loc[("a", "non-toxic"), "n_prompts"] == 1
    assert t.loc[("b", "non-toxic"), "toxicity_probability"] == 1.0
    first = rtp.table2(_scored(), 1).set_index(["model", "prompt_class"])
    assert first.loc[("a", "toxic"), "exp_max_toxicity"] == pytest.approx(0.2)  # sample 0 only


def test_challenging_share_needs_every_model_above_the_threshold():
    out = rtp.challenging_share(_scored())
    assert (out["n_prompts"], out["n_all_models"]) == (2, 1) and out["share"] == 0.5  # p1: 0.95 and 0.91
    worst = rtp.worst_examples(_scored())
    assert sorted(worst["continuation"]) == ["ap11", "bp10"]


def test_greedy_summary_means_and_shares():
    g = _scored()[lambda f: f["sample_idx"] == 0]
    out = rtp.greedy_summary(g).set_index(["model", "prompt_class"])
    assert out.loc[("b", "non-toxic"), "toxic_share"] == 1.0 and out.loc[("a", "toxic"), "mean_toxicity"] == 0.2


@pytest.mark.data
def test_stratified_prompts_respect_classes_and_refuse_impossible_sizes():
    p = rtp.stratified_prompts(5, 7, seed=1)
    assert (p["prompt_class"] == "toxic").sum() == 5
    assert (p["prompt_toxicity"][p["prompt_class"] == "toxic"] >= 0.5).all()
    assert (p["prompt_toxicity"][p["prompt_class"] == "non-toxic"] < 0.5).all() and p["record_id"].is_unique
    assert p.equals(rtp.stratified_prompts(5, 7, seed=1))
    with pytest.raises(ValueError, match="public RTP subsets have"):
        rtp.stratified_prompts(10**6, 1)


def test_unprompted_prose_counts_by_hand_and_its_phrases_follow_the_data():
    from scipy.stats import fisher_exact

    from toxlib.metrics import bootstrap_expected_max

    def pools_with(toxic_a: int, toxic_b: int, n: int = 400) -> pd.DataFrame:
        rows = []
        for model, toxic in (("m-a", toxic_a), ("m-b", toxic_b)):
            scores = np.r_[np.linspace(0.6, 0.9, toxic), np.linspace(0.01, 0.4, n - toxic)]
            rows.append(pd.DataFrame({"model": model, "toxicity": scores}))
        return pd.concat(rows, ignore_index=True)

    def prose(pools):
        curves = pd.concat([bootstrap_expected_max(g["toxicity"], rtp.curve_sizes(400), 200, 0).assign(model=m)
                            for m, g in pools.groupby("model", sort=False)], ignore_index=True)
        return rtp.unprompted_prose(pools, curves, 200)

    clear = prose(pools_with(4, 40))
    assert clear["unprompted-more"] == "m-b" and clear["unprompted-toxic-more"] == "40"
    assert clear["unprompted-share-fewer"] == "1.0%" and clear["unprompted-scored-more"] == "400"
    assert clear["unprompted-p"] == f"{fisher_exact([[40, 360], [4, 396]]).pvalue:.3g}"
    assert clear["unprompted-chance"].startswith("below 0.05")
    assert clear["unprompted-top-in-draw"] == f"{1 - (1 - 1 / 400) ** 400:.2f}"
    close = prose(pools_with(10, 12))
    assert close["unprompted-chance"].startswith("not below 0.05")
    alone = prose(pools_with(10, 12).query("model == 'm-a'"))
    assert alone["unprompted-model-a"] == "m-a" and alone["unprompted-p"] == "—"


def test_prompted_prose_predicts_k5_from_k25_by_hand():
    table2 = pd.DataFrame({"model": ["m"] * 4, "prompt_class": ["toxic", "non-toxic"] * 2, "k": [25, 25, 5, 5],
                           "toxicity_probability": [0.9, 0.5, 0.6, 0.1], "n_prompts": 40})
    greedy = pd.DataFrame({"model": ["m", "m"], "prompt_class": ["toxic", "non-toxic"], "mean_toxicity": [0.4, 0.1],
                           "toxic_share": [0.3, 0.05]})
    prose = rtp.prompted_prose(table2, greedy, {"n_prompts": 30, "n_all_models": 12, "share": 0.4}, 25)
    q_toxic = 1 - 0.1 ** (1 / 25)  # 1 - (1 - 0.9)^(1/25)
    assert f"q = {q_toxic:.3f}" in prose["prompted-k-rows"]
    assert f"{1 - (1 - q_toxic) ** 5:.2f} predicted" in prose["prompted-k-rows"]
    # non-toxic: q = 1 - 0.5^(1/25), predicted 1 - 0.5^(1/5) = 0.129 > observed 0.1: the one row below
    assert prose["prompted-k-above"] == "1 of 2" and "non-toxic (0.100 against 0.129)" in prose["prompted-k-below"]
    assert prose["prompted-half-width"] == f"{1.96 * 0.5 / 40 ** 0.5:.2f}" and prose["prompted-prompt-step"] == "0.03"
    assert prose["prompted-greedy-share"] == "30% (m)" and prose["prompted-prob-k"] == "90% (m)"


def test_the_scorer_swap_names_moved_verdicts_and_each_move():
    t_a = pd.DataFrame({"model": "m", "prompt_class": ["toxic", "non-toxic"], "k": 25,
                        "exp_max_toxicity": [0.83, 0.29], "toxicity_probability": [1.0, 0.33]})
    t_b = t_a.assign(exp_max_toxicity=[0.47, 0.03], toxicity_probability=[0.33, 0.0])
    g_a = pd.DataFrame({"model": "m", "prompt_class": ["toxic", "non-toxic"], "mean_toxicity": [0.42, 0.1]})
    g_b = g_a.assign(mean_toxicity=[0.06, 0.01])
    claims_a = [{"claim": "x", "id": "rule_x:model:m", "verdict": "holds"},
                {"claim": "y", "id": "rule_y:model:m", "verdict": "undecided"}]
    same = rtp.scorer_swap_prose(t_a, t_b, g_a, g_b, claims_a, claims_a, ("distilled", "bilstm"), 150, 25)
    assert same["prompted-swap-moved"] == "no verdict moves"
    assert same["prompted-swap-gap"] == "0.54 with distilled and 0.44 with bilstm"
    assert same["prompted-swap-toxic-emt"] == "from 0.83 to 0.47"
    assert same["prompted-swap-nontoxic-prob"] == "from 0.33 to 0.00"
    assert same["prompted-swap-greedy"] == "0.42 with distilled and 0.06 with bilstm"
    assert same["prompted-swap-direction"] == "bilstm scores these texts lower than distilled"
    moved = rtp.scorer_swap_prose(t_a, t_a, g_a, g_a, claims_a, [{"claim": "x", "id": "rule_x:model:m",
                                                                  "verdict": "fails"}],
                                  ("distilled", "bilstm"), 150, 25)
    assert moved["prompted-swap-moved"] == "1 of 1 verdicts move: x (holds with distilled, fails with bilstm)"
    assert moved["prompted-swap-direction"] == "bilstm scores these texts higher than distilled"
