"""A model whose tokenizer has no single-token " True" and " False" runs only the sampled reading of SASS's prompts:
the chapter's classifier table still holds every column it publishes (the next-token reading's left empty), as the
report card's sass chapter for such a model needs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toxlib.papers import sass
from toxlib.papers.sass.local_systems import SYSTEM_COLUMNS

pytestmark = pytest.mark.models

TEXTS = ["You are a wonderful person.", "Shut up, you idiot."]


def test_the_sampled_reading_alone_leaves_the_next_token_columns_empty_not_absent(tiny_lm):
    labels, systems = sass.lm_classifier_labels({"tiny": tiny_lm}, TEXTS, ["zero"], ["sampled"], progress=False)
    assert list(labels.columns) == ["tiny ZERO (sampled)"] and len(labels) == len(TEXTS)
    assert set(SYSTEM_COLUMNS) <= set(systems.columns)
    assert systems["answer_mass"].isna().all() and systems["score_sd"].isna().all()
    assert systems["n_unparsed_replies"].notna().all()
    pred = pd.DataFrame({"text": TEXTS, "human_label": [0, 1], **{c: labels[c].to_numpy() for c in labels}})
    table = sass.classifier_table(pred, {c: c for c in labels}, systems)
    assert {"answer_mass", "n_unparsed_replies", "top_answer_share", "degenerate"} <= set(table.columns)
    mine = table[table["system"] == "tiny ZERO (sampled)"]
    assert len(mine) == 1 and np.isnan(mine["answer_mass"].iloc[0])
