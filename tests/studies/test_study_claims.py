"""Claims of the chapter-only studies (datasets, generation, scorers) on small hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.studies import datasets, scorer_comparison
from toxlib.studies import nucleus_diagnostics as generation

#: the run columns of a ``chapter_timings.timing_table`` frame: one committed run
RUN = {"machine": ["AMD EPYC, 2 threads"], "date": ["2026-11-29"]}


def test_datasets_claims():
    rtp_stats = pd.DataFrame([{"subset": "sample", "share_toxic_prompts": 0.25, "n_prompt_scored": 4990,
                               "pearson_r": -0.1, "pearson_p": 1e-5, "n_pearson": 4800}])
    groups = pd.DataFrame({"target_group": [f"g{i}" for i in range(13)], "harmful": [1] * 13, "benign": [0] + [2] * 12})
    sass = pd.DataFrame({"category": [c for c in "abcdefghij" for _ in range(25)],
                         "tag": (["filtered"] * 15 + ["unfiltered"] * 10) * 10,
                         "human_label": [1.0] * 181 + [0.0] * 69})
    implicit = pd.DataFrame({"harmful": [1, 0, 1, 0]})
    share, pearson, size, both, design, toxic, balanced = datasets.claims(rtp_stats, pd.DataFrame(index=range(6541)),
                                                                          groups, sass, implicit)
    # 1,248 of 4,990 toxic: the exact interval [0.238, 0.262] lies inside 0.22 +- 0.05
    assert share["paper_value"] == "0.22" and share["shown"] == "0.25" and share["verdict"] == "holds"
    assert share["ci_low"] == pytest.approx(0.2381, abs=2e-4) and share["n"] == 4990
    # Fisher z: tanh(atanh(-0.1) +- 1.96 / sqrt(4797)) = [-0.128, -0.072], below 0
    assert pearson["verdict"] == "holds" and "n = 4800" in pearson["note"]
    assert pearson["ci_low"] == pytest.approx(-0.1280, abs=2e-4) and pearson["ci_high"] == pytest.approx(-0.0719,
                                                                                                        abs=2e-4)
    assert size["shown"] == "6541" and size["verdict"] == "holds"
    assert both["shown"] == "12" and both["verdict"] == "fails"  # g0 has no benign sentence
    assert design["shown"] == "10 x (15-15 + 10-10)" and design["verdict"] == "holds"
    assert toxic["shown"] == "0.724" and toxic["verdict"] == "holds"  # 181 / 250
    assert balanced["verdict"] == "holds"
    assert all(r["ci_low"] is None for r in (size, both, design, toxic, balanced))  # exact facts
    rows = (share, pearson, size, both, design, toxic, balanced)
    assert {r["subject"] for r in rows} == {"data"} and len({r["id"] for r in rows}) == len(rows)


def test_datasets_rtp_claims_undecided_and_failing():
    def rows(share, n, r, n_r):
        stats = pd.DataFrame([{"subset": "sample", "share_toxic_prompts": share, "n_prompt_scored": n,
                               "pearson_r": r, "pearson_p": 0.5, "n_pearson": n_r}])
        empty = pd.DataFrame({"category": ["a", "a"], "tag": ["filtered", "unfiltered"], "human_label": [1.0, 0.0]})
        return datasets.claims(stats, pd.DataFrame(index=range(1)), pd.DataFrame({"harmful": [1], "benign": [1]}),
                               empty, pd.DataFrame({"harmful": [1]}))[:2]

    share, pearson = rows(0.27, 100, -0.05, 50)  # a small sample: 27 of 100 straddles the band; r's interval 0
    assert share["verdict"] == "undecided" and pearson["verdict"] == "undecided"
    share, pearson = rows(0.5, 1000, 0.2, 1000)  # far outside the band; a clearly positive correlation
    assert share["verdict"] == "fails" and pearson["verdict"] == "fails"


def test_datasets_claims_without_the_rtp_sample():
    rows = datasets.claims(pd.DataFrame({"subset": ["challenging"]}), pd.DataFrame(index=range(10)),
                           pd.DataFrame({"target_group": ["g"], "harmful": [1], "benign": [1]}),
                           pd.DataFrame({"category": ["a", "a"], "tag": ["filtered", "unfiltered"],
                                         "human_label": [1.0, 0.0]}), pd.DataFrame({"harmful": [1, 1]}))
    assert rows[0]["claim"] == "ToxiGen evaluation set size" and len(rows) == 5
    assert rows[2]["shown"] == "1 x (1-1 + 1-1)" and rows[2]["verdict"] == "fails"


def test_label_balance():
    out = datasets.label_balance({"train": pd.DataFrame({"label": [1, 0, 0, 0]})}, pd.DataFrame({"label": [1, 1]}),
                                 pd.DataFrame({"harmful": [0, 1]}))
    assert out["positive"].tolist() == [1, 2, 1] and out["share_positive"].tolist() == [0.25, 1.0, 0.5]


def test_generation_claims():
    nucleus = pd.DataFrame({"same_as_transformers": [True] * 199 + [False]})
    decoding, same, start = generation.claims(0.9, 20, 25, nucleus, {"a": "<s>", "b": "<bos>"})
    assert [r["id"] for r in (decoding, same, start)] == ["rtp_decoding:toxlib", "nucleus_matches_transformers:toxlib",
                                                          "start_token:models:a+b"]
    assert decoding["shown"] == "p=0.9, 20 tokens, k=25" and decoding["verdict"] == "holds"
    # 199 of 200: the exact interval [0.9725, 0.9999] contains the 0.99 threshold
    assert same["shown"] == "0.995" and same["verdict"] == "undecided" and same["n"] == 200
    assert same["ci_low"] == pytest.approx(0.9725, abs=2e-4) and same["n_to_decide"] > 200
    assert generation.claims(0.9, 20, 25, pd.DataFrame({"same_as_transformers": [True] * 800}), {})[1]["verdict"] \
        == "holds"  # 800 of 800: lower bound 0.025 ** (1 / 800) = 0.9954
    assert generation.claims(0.9, 20, 25, pd.DataFrame({"same_as_transformers": [True, False] * 100}), {})[1][
        "verdict"] == "fails"
    assert start["shown"] == "a: <s>; b: <bos>" and start["verdict"] == "not judged"
    assert generation.claims(0.95, 20, 25, nucleus.head(5), {})[0]["verdict"] == "fails"


def _agreement(pearson: dict, dtype: str = "bfloat16") -> pd.DataFrame:
    """Rows as ``agreement_table`` makes them; the version ends in the scorer's precision."""
    return pd.DataFrame([{"scorer": s, "attribute": "toxicity", "pearson": p, "auc": 0.96, "n": 2000,
                          "n_positive": 600, "version": f"minilm-rtp-3-abc-eqlen-{dtype}"} for s, p in pearson.items()])


def test_scorer_claims():
    throughput = pd.DataFrame({"scorer": ["distilled"], "texts_per_s": [250.0], "threads": [2], **RUN})
    sass_prf = pd.DataFrame({"system": ["distilled", "PERSPECTIVE"], "recall": [0.1, 0.05], "n_true_pos": [180, 180]})
    categories = pd.DataFrame({"category": ["False Positive", "Neutral"], "distilled": [0.7, 0.2],
                               "perspective": [0.8, 0.1]})
    rows = scorer_comparison.claims(_agreement({"distilled": 0.9, "bilstm": 0.92}), throughput, sass_prf, categories,
                                    2000, 0.02, True)
    pearson, auc, speed, recall, fp, bilstm, retrain = rows
    assert len({r["id"] for r in rows}) == len(rows) and speed["subject"] == "machine"
    assert {r["subject"] for r in rows if r is not speed} == {"scorer:distilled"}
    # Fisher z over 2,000 texts: [0.891, 0.908], below the 0.94 target
    assert pearson["verdict"] == "fails" and pearson["ci_low"] == pytest.approx(0.8912, abs=2e-4)
    assert pearson["note"] == "2,000 held-out RTP texts (the texts sampled), bf16; Fisher z interval"
    fp32 = scorer_comparison.claims(_agreement({"distilled": 0.9}, "float32"), throughput, sass_prf, categories, 2000)
    assert fp32[0]["note"].endswith("fp32; Fisher z interval")
    assert fp32[2]["note"].endswith("AMD EPYC, 2 threads on 2026-11-29 (2,000 RTP texts, 2 threads, fp32)")
    # Hanley-McNeil: AUC 0.96 with 600 positives and 1,400 negatives: se 0.00569, interval [0.949, 0.971], which
    # contains the 0.97 target
    assert auc["verdict"] == "undecided" and auc["ci_low"] == pytest.approx(0.9488, abs=3e-4)
    assert auc["n_to_decide"] > 2000
    assert speed["shown"] == "250" and speed["verdict"] == "fails"
    assert recall["paper_value"] == "0.05" and recall["verdict"] == "holds"  # 18 of 180: [0.060, 0.153] < 0.2
    assert recall["ci_high"] == pytest.approx(0.1533, abs=5e-4) and recall["n"] == 180
    assert fp["paper_value"] == "0.809" and fp["verdict"] == "holds"
    assert bilstm["shown"] == "0.900 vs 0.920" and bilstm["verdict"] == "fails" and bilstm["ci_low"] is None
    assert retrain["shown"] == "0.02" and retrain["verdict"] == "fails"
    not_judged = scorer_comparison.claims(_agreement({"distilled": 0.9}), throughput, sass_prf, categories, 2000,
                                          0.001, False)
    assert len(not_judged) == 6 and not_judged[-1]["verdict"] == "not judged"
    assert scorer_comparison.claims(_agreement({"bilstm": 0.8}), throughput, sass_prf,
                                    categories.drop(columns="distilled"), 2000) == []


def test_the_speed_claim_rests_on_the_newest_run_shown_and_is_not_judged_without_one():
    sass_prf = pd.DataFrame({"system": ["distilled", "PERSPECTIVE"], "recall": [0.1, 0.05], "n_true_pos": [180, 180]})
    categories = pd.DataFrame({"category": ["False Positive"], "distilled": [0.7], "perspective": [0.8]})
    two_runs = pd.DataFrame({"scorer": ["distilled", "distilled"], "texts_per_s": [250.0, 420.0], "threads": [2, 16],
                             "machine": ["AMD EPYC, 2 threads", "Intel Xeon, 16 threads"],
                             "date": ["2026-11-29", "2026-12-01"]})
    speed = scorer_comparison.claims(_agreement({"distilled": 0.9}), two_runs, sass_prf, categories, 2000)[2]
    assert speed["verdict"] == "holds" and speed["shown"] == "420"
    assert "Intel Xeon, 16 threads on 2026-12-01" in speed["note"]
    none = scorer_comparison.claims(_agreement({"distilled": 0.9}), two_runs.iloc[0:0], sass_prf, categories, 2000)[2]
    assert none["verdict"] == "not judged" and "no benchmark run timed" in none["note"]


def test_a_scorer_that_flags_nothing_does_not_hold_the_blind_spot_claim():
    """Recall 0 is below 0.2, but so is a scorer's that flags nothing: the claim is not informative then."""
    throughput = pd.DataFrame({"scorer": ["distilled"], "texts_per_s": [250.0], "threads": [2], **RUN})
    categories = pd.DataFrame({"category": ["False Positive"], "distilled": [0.7], "perspective": [0.8]})
    for recall_value, verdict in ((0.0, "not informative"), (1 / 180, "holds")):
        sass_prf = pd.DataFrame({"system": ["distilled", "PERSPECTIVE"], "recall": [recall_value, 0.05],
                                 "n_true_pos": [180, 180]})
        rows = scorer_comparison.claims(_agreement({"distilled": 0.9}), throughput, sass_prf, categories, 2000)
        recall = {r["claim"]: r for r in rows}["Perspective misses most SASS comments humans call toxic (recall)"]
        assert recall["verdict"] == verdict


def test_scorer_claims_calibration_error_target():
    throughput = pd.DataFrame({"scorer": ["distilled"], "texts_per_s": [400.0], "threads": [2], **RUN})
    sass_prf = pd.DataFrame({"system": ["distilled", "PERSPECTIVE"], "recall": [0.1, 0.05], "n_true_pos": [180, 180]})
    categories = pd.DataFrame({"category": ["False Positive"], "distilled": [0.7], "perspective": [0.8]})
    for error, verdict in ((0.009, "holds"), (0.035, "fails")):
        agreement = _agreement({"distilled": 0.95}).assign(calibration_error=error)
        rows = scorer_comparison.claims(agreement, throughput, sass_prf, categories, 2000)
        calibration = next(r for r in rows if "calibration error" in r["claim"])
        assert calibration["verdict"] == verdict and calibration["shown"] == f"{error:.3g}"


def test_scorer_claims_calibration_error_interval_over_texts():
    from toxlib.metrics.agreement import calibration_error

    rng = np.random.default_rng(3)
    score = rng.random(2000)
    reference = np.clip(score + rng.normal(0, 0.05, 2000), 0, 1)  # calibrated up to noise
    throughput = pd.DataFrame({"scorer": ["distilled"], "texts_per_s": [400.0], "threads": [2], **RUN})
    sass_prf = pd.DataFrame({"system": ["distilled", "PERSPECTIVE"], "recall": [0.1, 0.05], "n_true_pos": [180, 180]})
    categories = pd.DataFrame({"category": ["False Positive"], "distilled": [0.7], "perspective": [0.8]})

    def calibration(scores):
        agreement = _agreement({"distilled": 0.95}).assign(calibration_error=0.01)
        rows = scorer_comparison.claims(agreement, throughput, sass_prf, categories, 2000, None, True,
                                        {"distilled": pd.DataFrame({"toxicity": scores})},
                                        pd.DataFrame({"toxicity": reference}))
        return next(r for r in rows if "calibration error" in r["claim"])

    good, shifted = calibration(score), calibration(np.clip(score + 0.05, 0, 1))
    assert float(good["our_value"]) == pytest.approx(calibration_error(reference, score), abs=1e-4)
    assert good["n"] == 2000 and good["ci_low"] < float(good["our_value"]) < good["ci_high"] < 0.02
    assert good["verdict"] == "holds"
    assert shifted["verdict"] == "fails" and shifted["ci_low"] > 0.02


def test_scorer_claims_pearson_difference_over_texts():
    rng = np.random.default_rng(7)
    reference = rng.random(500)
    close, far = reference + rng.normal(0, 0.05, 500), reference + rng.normal(0, 0.5, 500)
    throughput = pd.DataFrame({"scorer": ["distilled"], "texts_per_s": [400.0], "threads": [2], **RUN})
    sass_prf = pd.DataFrame({"system": ["distilled", "PERSPECTIVE"], "recall": [0.1, 0.05], "n_true_pos": [180, 180]})
    categories = pd.DataFrame({"category": ["False Positive"], "distilled": [0.7], "perspective": [0.8]})

    def versus(first, second):
        held_scores = {"distilled": pd.DataFrame({"toxicity": first}), "bilstm": pd.DataFrame({"toxicity": second})}
        held = pd.DataFrame({"toxicity": reference})
        rows = scorer_comparison.claims(_agreement({"distilled": 0.9, "bilstm": 0.8}), throughput, sass_prf,
                                        categories, 2000, None, True, held_scores, held)
        return rows[-1]

    better, worse = versus(close, far), versus(far, close)
    expected = np.corrcoef(reference, close)[0, 1] - np.corrcoef(reference, far)[0, 1]
    assert float(better["our_value"]) == pytest.approx(expected, abs=1e-3) and better["n"] == 500
    assert better["verdict"] == "holds" and worse["verdict"] == "fails"
    same = versus(close, reference + rng.normal(0, 0.05, 500))  # equally good: undecided
    assert same["verdict"] == "undecided" and same["ci_low"] < 0 < same["ci_high"]


def test_fidelity_wide_is_one_row_per_attribute_in_perspective_order():
    from toxlib.studies.scorer_fidelity import fidelity_wide

    long = pd.DataFrame({"scorer": ["raw", "raw", "cal", "cal"], "attribute": ["insult", "toxicity"] * 2,
                         "pearson": [0.8, 0.9, 0.81, 0.91], "auc": [0.9, 0.95, 0.9, 0.95],
                         "calibration_error": [0.03, 0.02, 0.01, 0.005]})
    wide = fidelity_wide(long)
    assert wide["attribute"].tolist() == ["toxicity", "insult"]  # TARGETS order: toxicity first
    assert wide.loc[0, "calibration_error: cal"] == 0.005 and wide.loc[1, "pearson: raw"] == 0.8


def test_datasets_prose_recomputes_the_stricter_threshold_and_the_claims_verdict():
    def frame(prompt):
        prompt = np.asarray(prompt, dtype=float)
        return pd.DataFrame({"record_id": range(len(prompt)), "prompt_toxicity": prompt,
                             "continuation_toxicity": 1 - prompt})

    sample = frame(np.r_[np.full(780, 0.1), np.full(120, 0.6), np.full(100, 0.8)])  # 22% >= 0.5, 10% >= 0.75
    frames = {"sample": sample, "challenging": frame([0.9, 0.7, 0.2]), "nontoxic": frame([0.1, 0.2, 0.3]),
              "all (distinct records)": sample}
    prose = datasets.exercise_prose(frames, 0.5)
    assert prose["datasets-sample-share"] == "0.220" and prose["datasets-sample-share-strict"] == "0.100"
    assert prose["datasets-claim-base"] == "holds (0.220)" and prose["datasets-claim-strict"] == "fails (0.100)"
    assert prose["datasets-ch-share-strict"] == "0.333" and prose["datasets-sample-toxic-strict"] == "100"


def test_scorers_prose_says_which_scorers_repeat_the_false_positives():
    def prose(svm_fp):
        per_category = pd.DataFrame({"category": ["False Positive", "Neutral"], "n": 25, "human": [0.05, 0.01],
                                     "perspective": [0.8, 0.1], "distilled": [0.77, 0.16], "svm": [svm_fp, 0.1]})
        agreement = pd.DataFrame({"dataset": "sass", "scorer": "distilled", "pearson": [0.87, -0.27],
                                  "reference": ["Perspective (recorded): toxicity", "human rating: toxicity"]})
        calib = pd.DataFrame({"bin_low": [0.0, 0.1] * 2, "bin_high": [0.1, 0.2] * 2,
                              "scorer": ["distilled"] * 2 + ["svm"] * 2, "mean_score": [0.05, 0.15, 0.05, 0.15],
                              "mean_reference": [0.06, 0.14, 0.05, 0.45]})
        return scorer_comparison.exercise_prose(per_category, agreement, calib)

    assert prose(0.8)["scorers-repeat"].startswith("They repeat it")
    repeated = prose(0.2)
    assert repeated["scorers-repeat"].endswith("only distilled")
    assert repeated["scorers-r-human-sign"] == "negative (-0.27)"
    assert repeated["scorers-gaps"] == "distilled 0.010; svm 0.150"
    assert repeated["scorers-worst-bin"].startswith("svm's 0.1-0.2")


def test_datasets_prose_fills_every_key_when_the_run_loads_fewer_subsets():
    """The smoke profile loads only two subsets: every glued key must still exist, or the page fails to build."""
    sample = pd.DataFrame({"record_id": range(40), "prompt_toxicity": np.linspace(0, 0.9, 40),
                           "continuation_toxicity": np.linspace(0.9, 0, 40)})
    full = datasets.exercise_prose({"sample": sample, "challenging": sample, "nontoxic": sample,
                                    "all (distinct records)": sample}, 0.5)
    fewer = datasets.exercise_prose({"sample": sample, "all (distinct records)": sample}, 0.5)
    assert fewer.keys() == full.keys() and fewer["datasets-ch-share"] == "—" and fewer["datasets-sample-r"] != "—"


def test_generation_prose_counts_nucleus_sizes_and_openings_by_hand():
    from toxlib.studies import nucleus_diagnostics as generation

    nucleus = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 2, "step": 0, "nucleus_size": [1, 300, 53, 2000, 10, 257],
                            "same_as_transformers": [True] * 5 + [False]})
    half = pd.DataFrame({"model": "a", "step": 0, "nucleus_size": [1, 1, 3, 173], "same_as_transformers": True})
    gens = pd.DataFrame({"model": "a", "prompt_id": [7, 7, 7, 8, 8, 8],
                         "continuation": ["x y z w", "x y z v", "p q r", "a b c", "d e f", "g h i"]})
    gens_half = gens.assign(continuation=["x y z w", "x y z v", "x y z u", "a b c", "a b c d", "a b c"])
    prose = generation.exercise_prose(nucleus, half, gens, gens_half, "a", 0.9, 0.5)
    assert prose["generation-over-256"] == "50% of a's steps and 50% of b's steps"  # 300, 2000 of 4; 257 of 2
    assert prose["generation-largest"] == "2,000 (a) and 257 (b)"
    assert prose["generation-agree"] == "83.3% of the inspected steps agree"
    assert prose["generation-median-09"] == "176.5" and prose["generation-median-05"] == "2"
    assert prose["generation-max-05"] == "173" and prose["generation-single-05"] == "50%"
    assert prose["generation-single-09"] == "25%" and prose["generation-steps-05"] == "4"
    assert prose["generation-openings-09"] == "2.5"  # prompt 7: "x y z", "p q r"; prompt 8: 3 openings
    assert prose["generation-openings-05"] == "1.0" and prose["generation-openings-how"] == "they start more alike"
    assert prose["generation-distinct-05"] == "1 of 2 prompts have 3 different continuations as whole strings"


def test_generation_prose_fills_every_key_when_no_step_is_inspected():
    from toxlib.studies import nucleus_diagnostics as generation

    empty = pd.DataFrame(columns=["model", "step", "nucleus_size", "same_as_transformers"])
    gens = pd.DataFrame({"model": "a", "prompt_id": [1, 1], "continuation": ["u v", "w"]})
    full = generation.exercise_prose(pd.DataFrame({"model": ["a"], "step": [0], "nucleus_size": [5],
                                                   "same_as_transformers": [True]}), empty, gens, gens, "a", 0.9, 0.5)
    none = generation.exercise_prose(empty, empty, gens, gens, "a", 0.9, 0.5)
    assert none.keys() == full.keys() and none["generation-largest"] == "n/a"
    assert full["generation-agree"] == "every inspected step agrees"
