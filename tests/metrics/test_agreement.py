"""Agreement metrics against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from toxlib.metrics.agreement import agreement, calibration_bins, calibration_error


def test_agreement_matches_hand_computed_pearson_spearman_and_pairwise_auc():
    ref = np.array([0.1, 0.9, 0.4, 0.7, 0.2, np.nan])
    score = np.array([0.2, 0.6, 0.5, 0.8, 0.1, 0.3])
    out = agreement(ref, score)
    assert np.isnan(out.pop("calibration_error"))  # 5 pairs: fewer than the 10 decile bins
    r, s = ref[:5], score[:5]
    pearson = (((r - r.mean()) * (s - s.mean())).sum()
               / np.sqrt(((r - r.mean()) ** 2).sum() * ((s - s.mean()) ** 2).sum()))
    # ranks: ref 1,5,3,4,2; score 2,4,3,5,1 -> d = -1,1,0,-1,1 -> rho = 1 - 6*4/(5*24)
    spearman = 1 - 6 * 4 / (5 * 24)
    # positives (ref >= 0.5): scores 0.6, 0.8; negatives 0.2, 0.5, 0.1: all 6 pairs ranked correctly
    assert out == {"n": 5, "n_positive": 2, "pearson": pytest.approx(pearson), "spearman": pytest.approx(spearman),
                   "auc": pytest.approx(1.0)}
    swapped = agreement([0.1, 0.9, 0.6], [0.7, 0.3, 0.5])  # 0 of 2 pairs ranked right
    assert swapped["auc"] == 0.0


def test_agreement_is_nan_where_undefined():
    one_class = agreement([0.1, 0.2, 0.3], [0.5, 0.1, 0.2])
    assert np.isnan(one_class["auc"]) and one_class["n_positive"] == 0
    constant = agreement([0.1, 0.9, 0.3], [0.5, 0.5, 0.5])
    assert np.isnan(constant["pearson"]) and constant["auc"] == 0.5


def test_calibration_error_is_the_mean_gap_over_equal_count_bins_of_the_score():
    # bins=2 by hand: sorted by score -> (0.05, 0.15 | 0.92, 0.95); gaps |0.1 - 0.1| = 0 and |0.935 - 0.8| = 0.135
    assert calibration_error([0.0, 0.2, 1.0, 0.6], [0.05, 0.15, 0.95, 0.92], bins=2) == pytest.approx(0.0675)
    # deciles of 20 pairs (2 per bin), given shuffled: bin 0 is 0.2 too low; bin 1's gaps +0.1 and -0.1 cancel
    # inside the bin (the error compares bin means, not texts); every other bin is exact -> 0.2 / 10
    score = np.repeat(np.arange(10) / 10 + 0.05, 2)
    ref = score.copy()
    ref[:2] += 0.2
    ref[2] += 0.1
    ref[3] -= 0.1
    order = np.random.default_rng(0).permutation(20)
    assert calibration_error(ref[order], score[order]) == pytest.approx(0.02)
    assert calibration_error(np.append(ref, np.nan), np.append(score, 0.5)) == pytest.approx(0.02)  # NaN pair left out
    assert np.isnan(calibration_error(ref[:9], score[:9]))  # fewer pairs than bins
    assert agreement(ref, score)["calibration_error"] == pytest.approx(0.02)
    with pytest.raises(ValueError, match="shape"):
        calibration_error([0.1, 0.2], [0.1])


def test_calibration_bins_average_the_reference_per_score_bin():
    table = calibration_bins([0.0, 0.2, 1.0, 0.6], [0.05, 0.15, 0.95, 0.92], bins=2)
    assert table.to_dict("list") == {"bin_low": [0.0, 0.5], "bin_high": [0.5, 1.0], "mean_score": [0.1, 0.935],
                                     "mean_reference": [0.1, 0.8], "n": [2, 2]}
