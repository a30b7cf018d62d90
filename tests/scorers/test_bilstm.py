"""The torch port of tox-block 0.1.2 (toxlib.scorers.bilstm) against tox-block's documented outputs, a hand-worked
tokenizer case and a numpy re-implementation of the Keras LSTM."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

pytest.importorskip("tox_block", reason="pip install --no-deps tox-block==0.1.2")
pytest.importorskip("h5py")

from toxlib.common.errors import ModelUnavailableError  # noqa: E402
from toxlib.scorers import bilstm  # noqa: E402
from toxlib.scorers.bilstm import LABELS, BiLSTMNet, BiLSTMScorer, KerasTokenizer, keras_lstm, rescale  # noqa: E402

# tox-block 0.1.2's README (the PyPI description, in tox_block-0.1.2.dist-info/METADATA), "Usage": the output of
# make_predictions([...], rescale=True), i.e. min-max rescaled probabilities, in LABELS order.
README = {
    "Good morning my friend, I hope you're having a fantastic day!":
        [0.05347811430692673, 0.0006274021579883993, 0.004466842859983444, 0.009578478522598743,
         0.00757843442261219, 0.002106667961925268],
    "I will kill you, you fucking idiot!":
        [0.9998679757118225, 0.7870362997055054, 0.9885633587837219, 0.8483908176422119, 0.9883397221565247,
         0.171059250831604],
    "I do strongly disagree with the fascist views of this joke that calls itself a political party.":
        [0.026190076023340225, 7.185135473264381e-05, 0.0009493605466559529, 0.00012321282702032477,
         0.0029190618079155684, 0.0022098885383456945],
}
# The same README's make_single_prediction("I will kill you, you fucking idiot!", rescale=True).
README_SINGLE = [0.9998680353164673, 0.7870364189147949, 0.9885633587837219, 0.8483908176422119,
                 0.9883397221565247, 0.1710592657327652]


@pytest.fixture(scope="module")
def scorer():
    return BiLSTMScorer(device="cpu")


@pytest.mark.models
def test_documented_examples(scorer):
    texts = list(README)
    ours = rescale(scorer.probabilities(texts).astype(np.float64))
    # The README prints float32 results to 16 digits, but only ~7 carry: its own two runs of the same text (single
    # vs batch) differ by 1.2e-7. So: agreement to 5e-7 absolute.
    np.testing.assert_allclose(ours, np.array([README[t] for t in texts]), rtol=0, atol=5e-7)
    np.testing.assert_allclose(ours[1], README_SINGLE, rtol=0, atol=5e-7)
    # Not in the README: the design doc's "about 0.62 toxicity" for this (raw and rescaled alike).
    assert scorer.probabilities(["You are a wonderful person."])[0, 0] == pytest.approx(0.625, abs=0.005)


def test_tokenizer_hand_worked():
    tok = KerasTokenizer({"hello": 1, "world": 2, "it's": 3, "rare": 20, "naïve": 4}, num_words=20,
                         filters='!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n', lower=True, split=" ", char_level=False,
                         oov_token=None)
    # Punctuation, tab and newline become spaces; "'" is kept; lowercased; "foo" (unknown) and "rare" (index 20,
    # not < num_words) are dropped; "\r" is not a separator, so "hello\rworld" is one unknown word.
    assert tok.words("Hello, WORLD!\tit's\nfoo-NAÏVE") == ["hello", "world", "it's", "foo", "naïve"]
    assert tok.ids("Hello, WORLD!\tit's\nfoo rare  NAÏVE hello\rworld") == [1, 2, 3, 4]
    enc = tok.encode(["Hello, WORLD!\tit's\nfoo rare", "", "foo bar", " ".join(["hello"] * 60 + ["world"] * 60)])
    assert enc.shape == (4, 100) and enc.dtype == np.int64
    assert enc[0].tolist() == [0] * 97 + [1, 2, 3]  # pre-padding
    assert not enc[1].any() and not enc[2].any()  # nothing known: all padding, still scored
    assert enc[3].tolist() == [1] * 40 + [2] * 60  # pre-truncation keeps the last 100 words


@pytest.mark.models
def test_real_tokenizer_settings(scorer):
    tok = scorer.tokenizer
    assert (tok.num_words, tok.filters, tok.lower, tok.split, tok.char_level, tok.oov_token) == \
        (20000, '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n', True, " ", False, None)
    assert tok.word_index["the"] == 1 and tok.word_index["you"] == 6
    assert tok.encode(["You... THE you"])[0, -3:].tolist() == [6, 1, 6]


def test_unpickler_refuses_other_globals(tmp_path):
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(print))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        bilstm.load_tokenizer(path)


def hard(x):
    return np.clip(0.2 * x + 0.5, 0.0, 1.0)


def lstm_reference(x, kernel, recurrent, bias, act=hard, order="ifco"):
    """One Keras LSTM direction, step by step. x: (T, E); kernel (E, 4H), recurrent (H, 4H), bias (4H,), columns in
    gate order i, f, c, o. Returns (T, H)."""
    hidden = recurrent.shape[0]
    h, c, out = np.zeros(hidden), np.zeros(hidden), []
    for x_t in x:
        z = x_t @ kernel + h @ recurrent + bias
        gate = {name: z[k * hidden:(k + 1) * hidden] for k, name in enumerate(order)}
        c = act(gate["f"]) * c + act(gate["i"]) * np.tanh(gate["c"])
        h = act(gate["o"]) * np.tanh(c)
        out.append(h)
    return np.array(out)


def test_lstm_matches_numpy():
    rng = np.random.default_rng(0)
    n, steps, emb, hidden = 3, 7, 5, 4
    x = rng.normal(size=(n, steps, emb))
    # Large enough weights that the gates reach hard-sigmoid's clipped region.
    k, u = rng.normal(size=(2, emb, 4 * hidden)), rng.normal(size=(2, hidden, 4 * hidden))
    b = rng.normal(size=(2, 4 * hidden))
    xw = torch.tensor(np.einsum("nte,dek->ntdk", x, k) + b[None, None], dtype=torch.float32)
    ours = keras_lstm(xw, torch.tensor(u, dtype=torch.float32)).numpy()  # two directions at once
    assert ours.shape == (n, steps, 2, hidden)
    for d in range(2):
        for row in range(n):
            np.testing.assert_allclose(ours[row, :, d], lstm_reference(x[row], k[d], u[d], b[d]), atol=1e-5)
    # The comparison can fail: a real sigmoid (as in nn.LSTM) or another gate order gives clearly different states.
    sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    assert np.abs(ours[0, :, 0] - lstm_reference(x[0], k[0], u[0], b[0], act=sigmoid)).max() > 1e-2
    assert np.abs(ours[0, :, 0] - lstm_reference(x[0], k[0], u[0], b[0], order="ifoc")).max() > 1e-2


def test_network_matches_numpy():
    """The whole network on tiny random weights: embedding, forward and reversed LSTM, max over time, dense."""
    rng = np.random.default_rng(1)
    vocab, emb, hidden, dense = 9, 3, 4, 5
    w = {"embeddings": rng.normal(size=(vocab, emb)), "dense_kernel": rng.normal(size=(2 * hidden, dense)),
         "dense_bias": rng.normal(size=dense), "out_kernel": rng.normal(size=(dense, 6)),
         "out_bias": rng.normal(size=6)}
    for side in ("forward", "backward"):
        w[f"{side}_kernel"] = rng.normal(size=(emb, 4 * hidden))
        w[f"{side}_recurrent"] = rng.normal(size=(hidden, 4 * hidden))
        w[f"{side}_bias"] = rng.normal(size=4 * hidden)
    ids = np.array([[0, 0, 3, 5, 8, 1], [4, 2, 7, 7, 6, 3]])
    with torch.inference_mode():
        ours = BiLSTMNet(w)(torch.from_numpy(ids)).numpy()
    for row, seq in enumerate(ids):
        x = w["embeddings"][seq]
        fwd = lstm_reference(x, w["forward_kernel"], w["forward_recurrent"], w["forward_bias"])
        bwd = lstm_reference(x[::-1], w["backward_kernel"], w["backward_recurrent"], w["backward_bias"])
        pooled = np.concatenate([fwd.max(0), bwd.max(0)])
        hid = np.maximum(pooled @ w["dense_kernel"] + w["dense_bias"], 0)
        want = 1 / (1 + np.exp(-(hid @ w["out_kernel"] + w["out_bias"])))
        np.testing.assert_allclose(ours[row], want, atol=1e-5)


@pytest.mark.models
def test_batch_invariance(scorer):
    texts = ["", "zzqx unknownword", "You are a wonderful person.", "I will kill you, you fucking idiot!",
             "word " * 150, "Hello\r\nthere, friend", *README]
    one_by_one = np.concatenate([scorer.probabilities([t]) for t in texts])
    scorer.batch_size = 3  # several forward passes inside one call
    try:
        batched = scorer.probabilities(texts)
    finally:
        scorer.batch_size = BiLSTMScorer.batch_size
    np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=1e-6)


@pytest.mark.models
def test_protocol(scorer):
    texts = ["You are a wonderful person.", "", "I will kill you, you fucking idiot!", ""]
    table = scorer.score(texts, cache=False, progress=False)
    attributes = ["toxicity", "severe_toxicity", "profanity", "threat", "insult", "identity_attack"]
    assert list(BiLSTMScorer.attributes) == attributes and len(LABELS) == 6
    assert list(table.columns) == attributes + ["scorer", "version", "error"]
    from toxlib.scorers.base import EMPTY_TEXT

    assert len(table) == 4 and table["error"].isna().tolist() == [True, False, True, False]
    assert (table.loc[[1, 3], "error"] == EMPTY_TEXT).all()  # an empty text has no score
    assert (table["scorer"] == "bilstm").all() and (table["version"] == "tox-block-0.1.2-torch-1").all()
    values = table[attributes].to_numpy()[[0, 2]]
    assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()
    assert np.isnan(table[attributes].to_numpy()[[1, 3]]).all()
    assert table.loc[2, "toxicity"] > 0.99


def test_missing_package(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tox_block", None)
    with pytest.raises(ModelUnavailableError, match="pip install --no-deps tox-block==0.1.2"):
        BiLSTMScorer()
