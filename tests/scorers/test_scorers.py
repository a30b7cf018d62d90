"""The scorer protocol (cache, resume, failures), the registry, the HF-classifier and profanity scorers."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from toxlib.common.errors import ModelUnavailableError, UnknownNameError
from toxlib.scorers import BatchScores, Scorer, get_scorer, known_scorers, score
from toxlib.store.cache import ScoreStore


class LengthScorer(Scorer):
    """A scorer whose score is a function of the text, counting what it was asked to score."""

    name, version, attributes, chunk_size = "length", "1", ("toxicity", "insult"), 2

    def __init__(self, fail_on=(), transient=(), crash_after=None):
        self.calls, self.fail_on, self.transient, self.crash_after = [], set(fail_on), set(transient), crash_after

    def score_batch(self, texts):
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise KeyboardInterrupt("simulated interruption")
        self.calls.append(list(texts))
        values = np.array([[len(t) / 100, 0.5] for t in texts])
        errors = [("bad" if t in self.fail_on | self.transient else None) for t in texts]
        return BatchScores(values, errors, [t not in self.transient for t in texts])


def test_scores_come_back_in_input_order_with_name_version_and_duplicates_scored_once(tmp_path):
    scorer = LengthScorer()
    table = scorer.score(["ccc", "a", "bb", "a"], cache=ScoreStore(tmp_path / "s.sqlite"), progress=False)
    assert table["toxicity"].tolist() == [0.03, 0.01, 0.02, 0.01]
    assert list(table.columns) == ["toxicity", "insult", "scorer", "version", "error"]
    assert set(table["scorer"]) == {"length"} and set(table["version"]) == {"1"}
    assert sorted(t for call in scorer.calls for t in call) == ["a", "bb", "ccc"]


def test_cached_texts_are_not_scored_again_and_an_interrupted_run_resumes(tmp_path):
    store = ScoreStore(tmp_path / "s.sqlite")
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    with pytest.raises(KeyboardInterrupt):
        LengthScorer(crash_after=1).score(texts, cache=store, progress=False)  # the first chunk of 2 is stored
    assert len(store.lookup("length@1", texts)) == 2
    resumed = LengthScorer()
    table = resumed.score(texts, cache=store, progress=False)
    assert sorted(t for call in resumed.calls for t in call) == ["ccc", "dddd", "eeeee"]
    assert table["toxicity"].tolist() == pytest.approx([0.01, 0.02, 0.03, 0.04, 0.05])
    assert store.integrity_check() == "ok"


def test_a_failed_text_is_nan_with_its_error_never_zero_and_transient_failures_are_retried(tmp_path):
    store = ScoreStore(tmp_path / "s.sqlite")
    first = LengthScorer(fail_on={"bb"}, transient={"ccc"})
    table = first.score(["a", "bb", "ccc"], cache=store, progress=False)
    assert np.isnan(table.loc[1, ["toxicity", "insult"]].to_numpy(float)).all()  # values were 0.02/0.5: dropped
    assert np.isnan(table.loc[2, ["toxicity", "insult"]].to_numpy(float)).all()
    assert table["error"].tolist() == [None, "bad", "bad"]
    again = LengthScorer()
    again.score(["a", "bb", "ccc"], cache=store, progress=False)
    assert again.calls == [["ccc"]]  # the permanent failure is cached, the transient one is retried


def test_unknown_scorer_lists_the_known_ones():
    with pytest.raises(UnknownNameError, match="distilled, bilstm, profanity-svm, perspective"):
        get_scorer("perspektive")
    assert "hf:<hub id or directory>" in known_scorers()


def test_profanity_svm_is_alt_profanity_check(tmp_path):
    from profanity_check import predict_prob

    texts = ["you are a wonderful person", "shut the fuck up, you idiot"]
    table = score(texts, scorer="profanity-svm", cache=False, progress=False)
    assert table["profanity"].to_numpy() == pytest.approx(predict_prob(texts))
    assert table["profanity"][1] > 0.9 > 0.1 > table["profanity"][0]
    assert table["version"][0] == "alt-profanity-check-1.9.1"


@pytest.fixture(scope="module")
def tiny_classifiers(tmp_path_factory):
    from toxlib.models.tiny import tiny_classifier

    root = tmp_path_factory.mktemp("classifiers")
    return {"multi": tiny_classifier(root / "multi", ["toxic", "obscene", "male"], multi_label=True),
            "binary": tiny_classifier(root / "binary", ["LABEL_0", "LABEL_1"], multi_label=False)}


def _logits(folder, texts):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    tok = AutoTokenizer.from_pretrained(folder)
    with torch.no_grad():
        return torch.cat([model(**tok([t], return_tensors="pt")).logits for t in texts])


def test_hf_multi_label_classifier_gives_sigmoid_per_mapped_label_and_drops_unknown_labels(tiny_classifiers):
    texts = ["hello there", "a much longer text than the first one", "x"]
    table = score(texts, scorer=f"hf:{tiny_classifiers['multi']}", cache=False, progress=False)
    expected = torch.sigmoid(_logits(tiny_classifiers["multi"], texts)).numpy()
    assert [c for c in table.columns if c not in ("scorer", "version", "error")] == ["toxicity", "profanity"]
    assert table["toxicity"].to_numpy() == pytest.approx(expected[:, 0], abs=1e-5)  # batched + padded = one by one
    assert table["profanity"].to_numpy() == pytest.approx(expected[:, 1], abs=1e-5)
    assert table["version"][0].startswith("sha256:") and "sigmoid" in table["version"][0]


def test_hf_single_label_binary_classifier_reports_class_one_as_toxicity(tiny_classifiers):
    texts = ["hello there", "another text"]
    table = score(texts, scorer=f"hf:{tiny_classifiers['binary']}", cache=False, progress=False)
    expected = torch.softmax(_logits(tiny_classifiers["binary"], texts), -1)[:, 1].numpy()
    assert table["toxicity"].to_numpy() == pytest.approx(expected, abs=1e-5)


def test_detoxify_name_offline_says_how_to_get_the_checkpoint(tmp_path):
    code = ("from toxlib.scorers import get_scorer\n"
            "try:\n    get_scorer('detoxify-original')\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300).stdout
    assert out.startswith(ModelUnavailableError.__name__)
    assert "unitary/toxic-bert" in out and "AutoModelForSequenceClassification" in out


def test_cli_scores_lines_from_stdin():
    out = subprocess.run([sys.executable, "-m", "toxlib", "score", "--scorer", "profanity-svm", "--no-cache"],
                         input="hello friend\nfuck off\n", capture_output=True, text=True, timeout=300)
    lines = out.stdout.strip().splitlines()
    assert lines[0] == '"line","text","profanity","scorer","version","error","truncated"' and len(lines) == 3
    assert lines[1].startswith('1,"hello friend",') and lines[2].startswith('2,"fuck off",')
    assert float(lines[2].split(",")[2]) > 0.9 > 0.1 > float(lines[1].split(",")[2])


def test_cli_output_reads_back_as_the_same_rows_with_pandas_and_csv(tmp_path):
    """A file with only "\r" line ends is one text (lines split on "\n"); its "\r"s, commas and quotes stay inside
    one quoted field, so both readers get the rows that were written."""
    import csv
    import io

    data = 'first\rsecond\rthird, with "quotes"\nplain one\n'.encode()
    code, out, err = _cli_score([], data)
    assert code == 0, err
    texts = ['first\rsecond\rthird, with "quotes"', "plain one"]
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert [r["text"] for r in rows] == texts and [r["line"] for r in rows] == ["1", "2"]
    frame = pd.read_csv(io.StringIO(out, newline=""))
    assert frame["text"].tolist() == texts and frame["line"].tolist() == [1, 2]
    assert frame["profanity"].between(0, 1).all() and frame["error"].isna().all()


# --- issue 17: no silent wrong results -----------------------------------------------------------------------------

@pytest.mark.parametrize("texts,position", [([None], "texts[0] is NoneType"), (["ok", 3], "texts[1] is int 3"),
                                            ([float("nan")], "texts[0] is float nan"),
                                            (["ok", b"bytes"], "texts[1] is bytes")])
def test_non_text_input_is_refused_with_its_position(tmp_path, texts, position):
    scorer = LengthScorer()
    with pytest.raises(TypeError, match=position.replace("[", r"\[").replace("]", r"\]")):
        scorer.score(texts, cache=False, progress=False)
    assert scorer.calls == []


def test_a_bare_string_is_refused_not_scored_per_character():
    scorer = LengthScorer()
    with pytest.raises(TypeError, match=r"single str .*score\(\[text\]\)"):
        scorer.score("a plain string", cache=False, progress=False)
    with pytest.raises(TypeError, match="single str"):
        score("a plain string", scorer=scorer, cache=False, progress=False)
    assert scorer.calls == []


def test_empty_and_whitespace_texts_are_nan_with_an_error_and_not_cached(tmp_path):
    from toxlib.scorers.base import EMPTY_TEXT

    store = ScoreStore(tmp_path / "s.sqlite")
    scorer = LengthScorer()
    table = scorer.score(["", " \t\n ", "ok", "\u3000"], cache=store, progress=False)
    assert table["toxicity"].isna().tolist() == [True, True, False, True]
    assert table["error"].tolist() == [EMPTY_TEXT, EMPTY_TEXT, None, EMPTY_TEXT]
    assert scorer.calls == [["ok"]]  # nothing empty reached the scorer
    assert set(store.lookup("length@1", ["", " \t\n ", "ok", "\u3000"])) == {"ok"}


def test_a_real_scorer_gives_whitespace_no_score(tmp_path):
    table = score(["   ", "hello friend"], scorer="profanity-svm", cache=False, progress=False)
    assert np.isnan(table.loc[0, "profanity"]) and table.loc[0, "error"] and table.loc[1, "profanity"] < 0.5


def _cli_score(args, data: bytes):
    done = subprocess.run([sys.executable, "-m", "toxlib", "score", "--scorer", "profanity-svm", "--no-cache",
                           *args], input=data, capture_output=True, timeout=300)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def test_cli_splits_on_newlines_only_and_echoes_each_text(tmp_path):
    import csv
    import io

    texts = ["one\u2028still one", "two\u2029still two", "three\x0cstill three", "four\x85still four",
             "five\vstill five"]
    path = tmp_path / "in.txt"
    path.write_bytes("\r\n".join(texts).encode("utf-8") + b"\n")
    code, out, err = _cli_score([str(path)], b"")
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert code == 0, err
    assert [r["text"] for r in rows] == texts and [r["line"] for r in rows] == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize("kind", ["missing", "latin1", "directory", "utf-16", "utf-16-be", "utf-32"])
def test_cli_score_file_problems_are_one_line_errors(tmp_path, kind):
    path = tmp_path / "in.txt"
    if kind == "latin1":
        path.write_bytes("ok\ncaf\xe9 au lait\n".encode("latin-1"))
    elif kind.startswith("utf-"):
        bom = b"\xfe\xff" if kind == "utf-16-be" else b""  # "utf-16" and "utf-32" write their own mark
        path.write_bytes(bom + "ok\nfine\n".encode(kind))
    elif kind == "directory":
        path.mkdir()
    code, out, err = _cli_score([str(path)], b"")
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1 and str(path) in err
    if kind == "latin1":
        assert "not UTF-8" in err and "line 2" in err
    if kind.startswith("utf-"):  # the advice names the file's real encoding, not Latin-1
        expected = {"utf-16": "UTF-16LE", "utf-16-be": "UTF-16BE", "utf-32": "UTF-32LE"}[kind]
        assert f"is {expected} text" in err and f"iconv -f {expected} -t UTF-8" in err and "latin1" not in err


def test_cli_exits_non_zero_when_every_row_failed():
    code, out, err = _cli_score([], b"   \n\t\n")
    assert code == 1 and "every one of the 2" in err
    assert len(out.strip().splitlines()) == 3  # the table is still written
    code, _, err = _cli_score([], b"fine\n  \n")
    assert code == 0 and "1 of 2" in err


def test_options_that_change_scores_change_the_version_and_incomplete_rows_are_rescored(tiny_classifiers, tmp_path):
    from toxlib.scorers.hf import HFClassifierScorer

    store = ScoreStore(tmp_path / "s.sqlite")
    plain = HFClassifierScorer(str(tiny_classifiers["multi"]))
    as_threat = HFClassifierScorer(str(tiny_classifiers["multi"]), labels={"toxic": "threat"})
    short = HFClassifierScorer(str(tiny_classifiers["multi"]), max_length=4)
    assert len({plain.version, as_threat.version, short.version}) == 3
    plain.score(["some text here"], cache=store, progress=False)

    class SameKeyMoreAttributes(LengthScorer):  # a row stored under this key lacks "threat": it must be rescored
        attributes = ("toxicity", "insult", "threat")

        def score_batch(self, texts):
            self.calls.append(list(texts))
            return BatchScores(np.array([[0.1, 0.2, 0.3] for _ in texts]))

    LengthScorer().score(["abc"], cache=store, progress=False)
    wider = SameKeyMoreAttributes()
    table = wider.score(["abc"], cache=store, progress=False)
    assert wider.calls == [["abc"]] and table["threat"][0] == pytest.approx(0.3)
