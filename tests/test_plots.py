"""Figures are the same in every build: the jittered points of ``box_with_points`` do not depend on numpy's global
random state, which the call leaves as it found it."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from toxlib.report import plots


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def test_box_with_points_is_the_same_whatever_the_global_random_state():
    reference = pd.DataFrame({"group": ["a", "a", "b", "b"], "score": [0.2, 0.4, 0.5, 0.7]})
    ours = pd.DataFrame({"group": ["a", "a", "b", "b"], "score": [0.3, 0.35, 0.6, 0.65],
                         "model": ["m1", "m2", "m1", "m2"]})
    np.random.seed(1)
    first = _png(plots.box_with_points(reference, ours, "group", "score", "model", "t", "score"))
    np.random.seed(2)
    before = np.random.get_state()[1].copy()
    second = _png(plots.box_with_points(reference, ours, "group", "score", "model", "t", "score"))
    assert first == second
    assert (np.random.get_state()[1] == before).all()  # the caller's stream is untouched
