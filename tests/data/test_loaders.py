"""Typed loaders: schemas, row counts from the data mirror's README, and malformed input."""

from __future__ import annotations

import pandas as pd
import pytest

from toxlib import data
from toxlib.common.errors import ChecksumMismatchError, DataFormatError, UnknownNameError
from toxlib.data.sources import registry

RTP_COLUMNS = ["record_id", "filename", "begin", "end", "challenging", "subset", "prompt_text", "continuation_text"]


@pytest.mark.data
@pytest.mark.parametrize("subset,rows,toxic",
                         [("challenging", 1196, 993), ("nontoxic", 1200, 0), ("sample", 5000, 1249)])
def test_rtp_subsets(subset, rows, toxic):
    frame = data.load_rtp(subset)
    assert len(frame) == rows
    assert frame.columns[: len(RTP_COLUMNS)].tolist() == RTP_COLUMNS
    for attr in data.PERSPECTIVE_ATTRIBUTES:
        for part in ("prompt", "continuation"):
            col = frame[f"{part}_{attr}"]
            assert col.dtype == float and col.dropna().between(0, 1).all()
    assert int((frame["prompt_toxicity"] >= 0.5).sum()) == toxic
    assert frame["record_id"].is_unique


@pytest.mark.data
def test_rtp_sample_keeps_missing_scores_as_nan():
    frame = data.load_rtp("sample")
    assert frame["prompt_toxicity"].isna().sum() == 19  # documented in the mirror's README


def test_unknown_subset_lists_known():
    with pytest.raises(UnknownNameError, match="challenging, nontoxic, sample"):
        data.load_rtp("full")


@pytest.mark.data
def test_debiasing_sets_join_rtp_scores():
    adv = data.load_debias_prompts("adversarial")
    neu = data.load_debias_prompts("neutral")
    assert len(adv) == len(neu) == 1199
    assert adv["rtp_matched"].sum() == 1196
    matched = adv[adv["rtp_matched"]]
    assert matched["prompt_toxicity"].notna().all()
    assert adv.loc[~adv["rtp_matched"], "prompt_toxicity"].isna().all()
    assert len(data.load_debias_prompts("adversarial", test_subset=True)) == 100


@pytest.mark.data
def test_sass_frames():
    bench = data.load_sass_benchmark()
    pred = data.load_sass_predictions()
    human = data.load_sass_human_scores()
    assert len(bench) == len(pred) == len(human) == 250
    assert set(pred["category"]) == set(bench["category"]) and "Sexual Harassment" in set(pred["category"])
    assert pred["human_label"].tolist() == (pred["human_toxicity"] > 0.5).astype(int).tolist()
    for col in ("perspective_label", "gpt3_zero", "gpt3_one", "gpt3_few"):
        assert set(pred[col].unique()) <= {0, 1}
    # the benchmark and the predictions hold the same texts (in different orders)
    assert sorted(bench["text"]) == sorted(pred["text"])
    paper = data.load_sass_paper_scores()
    assert paper["system"].tolist() == ["PERSPECTIVE", "GPT-3-ZERO", "GPT-3-ONE", "GPT-3-FEW"]


@pytest.mark.data
def test_sass_tweeteval_has_no_credential_and_failures_are_nan():
    tweets = data.load_sass_tweeteval()
    assert len(tweets) == 1000
    assert "perspective_error" not in tweets.columns
    stored = (data.ensure("sass_tweeteval_responses")).read_text(encoding="utf-8")
    assert "perspective_error" not in stored and "AIza" not in stored
    assert tweets["perspective_failed"].sum() == 3
    assert tweets.loc[tweets["perspective_failed"], "perspective_label"].isna().all()
    assert tweets["gpt3_few"].isna().sum() == 7
    sample = data.load_sass_tweeteval_sample()
    assert sample["id"].tolist() == tweets["id"].tolist()


@pytest.mark.data
@pytest.mark.parametrize("split,rows", [("train", 9000), ("val", 1000), ("test", 2970)])
def test_tweeteval_splits(split, rows):
    frame = data.load_tweeteval_hate(split)
    assert len(frame) == rows
    assert set(frame["label"]) == {0, 1}
    assert set(frame["label_name"]) == {"hate", "not-hate"}


@pytest.mark.data
def test_toxigen_and_implicit_hate():
    tox = data.load_toxigen()
    assert len(tox) == 6514
    assert (tox["target_groups"].str.len() > 1).sum() == 1017
    assert tox["target_groups"].explode().nunique() == 13
    assert tox["toxicity_score"].between(1, 5).all()
    assert (tox["harmful"] == tox["label"].eq("hate")).all()
    exploded = data.explode_groups(tox)
    assert len(exploded) == tox["target_groups"].str.len().sum()
    imp = data.load_implicit_hate()
    assert len(imp) == 14200 and imp["harmful"].mean() == 0.5
    assert set(imp["toxicity_score"]) == {1.0, 2.25}


@pytest.mark.data
def test_word_lists():
    rtp, en = data.load_word_list("rtp"), data.load_word_list("en")
    assert (len(rtp), len(en)) == (378, 403)
    assert (rtp["n_words"] > 1).any()


def _plant(session_data_dir, name: str, text: str, monkeypatch):
    """Replace a fetched file with ``text`` and make the registry accept those bytes (a changed file is otherwise
    refused before it is parsed); returns (path, original bytes) to restore it."""
    import hashlib
    from dataclasses import replace

    path = data.ensure(name)
    assert path == session_data_dir / registry()[name].path
    original = path.read_bytes()
    path.write_text(text, encoding="utf-8")
    planted = replace(registry()[name], sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    monkeypatch.setitem(registry().sources, name, planted)
    return path, original


@pytest.mark.data
def test_malformed_json_line_names_file_and_line(session_data_dir, monkeypatch):
    good = data.ensure("rtp_nontoxic").read_text(encoding="utf-8").splitlines()
    broken = "\n".join(good[:3] + ['{"prompt": {"text": "x"'] + good[3:5])
    path, original = _plant(session_data_dir, "rtp_nontoxic", broken, monkeypatch)
    try:
        with pytest.raises(DataFormatError, match=rf"{path}:4: malformed JSON line in 'rtp_nontoxic'.*fetch"):
            data.load_rtp("nontoxic")
    finally:
        path.write_bytes(original)


@pytest.mark.data
def test_record_missing_a_field_is_an_error(session_data_dir, monkeypatch):
    path, original = _plant(session_data_dir, "rtp_nontoxic", '{"filename": "a", "begin": 0}\n', monkeypatch)
    try:
        with pytest.raises(DataFormatError, match="record 1: missing field"):
            data.load_rtp("nontoxic")
    finally:
        path.write_bytes(original)


@pytest.mark.data
def test_truncated_json_array_names_file(session_data_dir, monkeypatch):
    text = data.ensure("toxigen").read_text(encoding="utf-8")
    path, original = _plant(session_data_dir, "toxigen", text[:5000], monkeypatch)
    try:
        with pytest.raises(DataFormatError, match=rf"{path}:\d+: malformed JSON in 'toxigen'"):
            data.load_toxigen()
    finally:
        path.write_bytes(original)


@pytest.mark.data
def test_loaders_fetch_lazily_into_an_empty_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_DATA_DIR", str(tmp_path))
    assert not any(tmp_path.iterdir())
    frame = data.load_sass_benchmark()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 250
    assert (tmp_path / registry()["sass_benchmark"].path).exists()


@pytest.mark.data
def test_bad_tweeteval_label_names_file_and_line(session_data_dir, monkeypatch):
    labels = data.ensure("tweeteval_hate_val_labels").read_text(encoding="utf-8").splitlines()
    labels[4] = "2"
    path, original = _plant(session_data_dir, "tweeteval_hate_val_labels", "\n".join(labels) + "\n", monkeypatch)
    try:
        with pytest.raises(DataFormatError, match=rf"{path}:5: label '2' is not one of"):
            data.load_tweeteval_hate("val")
    finally:
        path.write_bytes(original)


@pytest.mark.data
def test_a_data_file_cut_short_is_refused_not_loaded_shorter(tmp_path, monkeypatch):
    monkeypatch.setenv("TOXLIB_DATA_DIR", str(tmp_path))
    assert len(data.load_rtp("challenging")) == 1196
    path = tmp_path / registry()["rtp_challenging"].path
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:600]))  # a download cut at a line boundary
    with pytest.raises(ChecksumMismatchError) as err:
        data.load_rtp("challenging")
    assert str(path) in str(err.value) and "python -m toxlib data fetch rtp_challenging --force" in str(err.value)
