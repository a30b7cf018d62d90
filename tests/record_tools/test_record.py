"""The sample record (``toxlib.store.record_reader``, ``toxlib.record_tools``): a build's usage log written into a
record folder, then read before the user's caches: a held row is not recomputed, ``TOXLIB_RECORD=off`` recomputes,
the record's row wins over a cached row of the same key, provenance is written, the files are byte-stable, and texts
of any shape come back unchanged. Smaller runs are prefixes of larger ones (the record serves teaching runs)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import toxlib.generate.api as generate_api
from toxlib.generate import DecodingConfig, generate
from toxlib.models import load
from toxlib.record_tools.status import record_status, record_totals, status_text
from toxlib.record_tools.write import write_record
from toxlib.store.cache import GenerationStore, LMScoreStore, ScoreStore
from toxlib.store.record_reader import Record, read_csv_gz, read_keys

CONFIG = DecodingConfig(num_samples=3, max_new_tokens=5, seed=1)
PROMPTS = ["The weather today", "You are such a", "Honestly, the worst part"]
ODD_TEXTS = ["plain", "comma, \"quoted\"", "line\nbreak", "carriage\rreturn", "crlf\r\nend", "tab\there", "ünïcødé ✓",
             "", " leading space", "trailing space "]


@pytest.fixture()
def folders(tmp_path, monkeypatch):
    """A user cache, a usage log and a record folder of this test's own."""
    cache, record, log = tmp_path / "cache", tmp_path / "record", tmp_path / "usage.sqlite"
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(cache))
    monkeypatch.setenv("TOXLIB_RECORD_DIR", str(record))
    monkeypatch.setenv("TOXLIB_RECORD_USAGE", str(log))
    monkeypatch.delenv("TOXLIB_RECORD", raising=False)
    monkeypatch.setenv("TOXLIB_RECORD_CHAPTER", "test_chapter")
    return {"cache": cache, "record": record, "log": log}


@pytest.fixture()
def lm(tiny_model_dirs):
    return load(str(tiny_model_dirs["llama"]), device="cpu", dtype="float32")


def _build_and_write(lm, folders, monkeypatch) -> pd.DataFrame:
    """A 'build': generate into the user cache with the usage log on, then write the record and switch the log
    off and the cache to an empty one, as a reader's fresh checkout would be."""
    first = generate(lm, PROMPTS, CONFIG, progress=False)
    write_record(folders["log"], folders["record"], prune=True, cache=folders["cache"])
    monkeypatch.delenv("TOXLIB_RECORD_USAGE")
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(folders["cache"].parent / "empty-cache"))
    return first


def _count_decoding(monkeypatch) -> list:
    calls = []
    real = generate_api.decode_prompts

    def counting(lm, prompts, *args, **kwargs):
        calls.append(list(prompts))
        yield from real(lm, prompts, *args, **kwargs)

    monkeypatch.setattr(generate_api, "decode_prompts", counting)
    return calls


def test_a_held_row_is_read_from_the_record_and_not_recomputed(lm, folders, monkeypatch):
    first = _build_and_write(lm, folders, monkeypatch)
    calls = _count_decoding(monkeypatch)
    again = generate(lm, PROMPTS, CONFIG, progress=False)
    assert [p for call in calls for p in call] == []
    pd.testing.assert_frame_equal(again, first)
    # a smaller run of the same settings is a part of the record: nothing to compute either
    assert generate(lm, PROMPTS[:1], CONFIG, progress=False)["continuation"].tolist() == \
        first["continuation"].tolist()[:3]
    assert calls == [] or all(c == [] for c in calls)
    # a prompt the record does not hold is computed
    generate(lm, PROMPTS + ["A new prompt"], CONFIG, progress=False)
    assert [p for call in calls for p in call] == ["A new prompt"]


def test_switching_the_record_off_recomputes(lm, folders, monkeypatch):
    first = _build_and_write(lm, folders, monkeypatch)
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    calls = _count_decoding(monkeypatch)
    again = generate(lm, PROMPTS, CONFIG, progress=False)
    assert sorted(p for call in calls for p in call) == sorted(PROMPTS)
    assert again["continuation"].tolist() == first["continuation"].tolist()  # float32: the same rows


def test_the_records_row_wins_over_a_cached_row_of_the_same_key(lm, folders, monkeypatch):
    first = _build_and_write(lm, folders, monkeypatch)
    run = generate_api.stable_hash(generate_api.run_key(lm.name, lm.weights_id, "float32", CONFIG, None))
    with GenerationStore() as store:  # the (empty) user cache gets other texts under the same key
        store.add(run, [(PROMPTS[0], i, f"a different text {i}", 2, False) for i in range(3)])
    again = generate(lm, PROMPTS, CONFIG, progress=False)
    assert again["continuation"].tolist() == first["continuation"].tolist()
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    assert generate(lm, PROMPTS[:1], CONFIG, progress=False)["continuation"].tolist()[0] == "a different text 0"


def test_provenance_and_chapters_are_written_and_status_reports_them(lm, folders, monkeypatch):
    _build_and_write(lm, folders, monkeypatch)
    keys = read_keys(folders["record"])
    assert [k["kind"] for k in keys] == ["generations"] and keys[0]["rows"] == len(PROMPTS) * CONFIG.num_samples
    made_by = keys[0]["made_by"][0]
    for field in ("commit", "machine", "cpu", "libraries", "date"):
        assert made_by.get(field), field
    assert made_by["how"] == "computed by the logged build"
    assert keys[0]["chapters"] == "test_chapter"
    assert keys[0]["config"]["model"] == lm.name and keys[0]["config"]["dtype"] == "float32"
    status = record_status(folders["record"])
    assert status["rows"].tolist() == [9] and "float32 sample" in status["what"].iloc[0]
    assert "generations: 1 keys, 9 rows" in status_text(folders["record"])


def test_computed_rows_name_the_commit_that_computed_them_not_the_one_that_writes_the_record(lm, folders):
    import sqlite3

    generate(lm, PROMPTS, CONFIG, progress=False)
    with sqlite3.connect(folders["cache"] / "generations.sqlite") as con:  # as if computed at two older commits
        con.execute("UPDATE generations SET made_by = 'aaaaaaaaaaaa'")
        con.execute("UPDATE generations SET made_by = 'bbbbbbbbbbbb' WHERE sample_idx = 0")
    write_record(folders["log"], folders["record"], prune=True, cache=folders["cache"])
    (key,) = read_keys(folders["record"])
    made = {m["commit"]: m["rows"] for m in key["made_by"]}
    assert made == {"aaaaaaaaaaaa": 6, "bbbbbbbbbbbb": 3}
    assert all(m["how"] == "computed by the logged build" for m in key["made_by"])


def test_rows_recomputed_with_the_record_off_replace_the_held_ones_and_say_how_many_changed(lm, folders, monkeypatch):
    import sqlite3

    _build_and_write(lm, folders, monkeypatch)
    log = folders["log"].with_name("recomputed.sqlite")
    monkeypatch.setenv("TOXLIB_RECORD_USAGE", str(log))
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    generate(lm, PROMPTS[:2], CONFIG, progress=False)  # 6 of the 9 held rows, computed again
    cache = folders["cache"].parent / "empty-cache"
    with sqlite3.connect(cache / "generations.sqlite") as con:  # as if the engine had moved one of them
        con.execute("UPDATE generations SET continuation = 'moved' WHERE sample_idx = 2 AND prompt_sha = ("
                    "SELECT prompt_sha FROM generations ORDER BY prompt_sha LIMIT 1)")
    write_record(log, folders["record"], prune=False, cache=cache)
    (key,) = read_keys(folders["record"])
    assert key["rows"] == 9 and len(key["made_by"]) == 2
    assert {k: key["made_by"][1][k] for k in ("rows", "replaced_record_rows", "of_which_changed")} == \
        {"rows": 6, "replaced_record_rows": 6, "of_which_changed": 1}
    assert "replaced_record_rows" not in key["made_by"][0]
    assert sum(t == "moved" for t, _, _ in Record(folders["record"]).rows("generations", key["key"]).values()) == 1


def test_scores_and_nlls_of_any_text_come_back_unchanged_and_the_files_are_byte_stable(folders):
    values = [({"toxicity": 0.1 + i / 7, "insult": None}, None) for i in range(len(ODD_TEXTS))]
    values[3] = ({"toxicity": None}, "LANGUAGE_NOT_SUPPORTED: a permanent error")
    with ScoreStore() as scores, LMScoreStore() as nlls:
        scores.add("scorer@1", [(t, v, e) for t, (v, e) in zip(ODD_TEXTS, values)])
        nlls.add("model|float32|causal-nll-v4", [(t, i + 1, 1 / 3 + i) for i, t in enumerate(ODD_TEXTS)])
    write_record(folders["log"], folders["record"], prune=True, cache=folders["cache"])
    stamp = {p.name: p.read_bytes() for p in folders["record"].rglob("*") if p.is_file()}
    write_record(folders["log"], folders["record"], prune=True, cache=folders["cache"])
    assert {p.name: p.read_bytes() for p in folders["record"].rglob("*") if p.is_file()} == stamp
    record = Record(folders["record"])
    assert record.lookup("scores", "scorer@1", ODD_TEXTS) == dict(zip(ODD_TEXTS, values))
    assert record.lookup("lm_scores", "model|float32|causal-nll-v4", ODD_TEXTS) == {
        t: (i + 1, 1 / 3 + i) for i, t in enumerate(ODD_TEXTS)}
    assert sorted(record.texts().values()) == sorted(ODD_TEXTS)
    # texts are stored without their hashes (a reader computes them), sorted, once each
    stored = [row["text"] for row in read_csv_gz(folders["record"] / "texts.csv.gz")]
    assert stored == sorted(ODD_TEXTS) and list(read_csv_gz(folders["record"] / "texts.csv.gz")[0]) == ["text"]


def test_prune_drops_what_the_log_does_not_name_and_merging_keeps_it(folders, monkeypatch):
    with ScoreStore() as scores:
        scores.add("scorer@1", [("kept", {"toxicity": 0.5}, None), ("dropped", {"toxicity": 0.25}, None)])
    write_record(folders["log"], folders["record"], prune=True, cache=folders["cache"])
    second_log = folders["log"].with_name("second.sqlite")
    monkeypatch.setenv("TOXLIB_RECORD_USAGE", str(second_log))
    with ScoreStore() as scores:
        assert set(scores.lookup("scorer@1", ["kept"])) == {"kept"}  # from the record, logged as such
        scores.add("other@2", [("new", {"toxicity": 0.75}, None)])
    write_record(second_log, folders["record"], prune=False, cache=folders["cache"])
    assert {(k["key"], k["rows"]) for k in read_keys(folders["record"])} == {("scorer@1", 2), ("other@2", 1)}
    write_record(second_log, folders["record"], prune=True, cache=folders["cache"])
    assert {(k["key"], k["rows"]) for k in read_keys(folders["record"])} == {("scorer@1", 1), ("other@2", 1)}
    assert len(list((folders["record"] / "scores").glob("*.csv.gz"))) == 2
    made_by = {k["key"]: k["made_by"] for k in read_keys(folders["record"])}
    assert json.dumps(made_by["scorer@1"]).count("computed by the logged build") == 1  # kept from the first write


def test_a_used_row_found_nowhere_is_an_error_naming_the_fix(folders, monkeypatch):
    with ScoreStore() as scores:
        scores.add("scorer@1", [("text", {"toxicity": 0.5}, None)])
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(folders["cache"].parent / "elsewhere"))
    from toxlib.common.errors import ToxlibError

    with pytest.raises(ToxlibError, match="same TOXLIB_CACHE_DIR"):
        write_record(folders["log"], folders["record"], prune=True)


@pytest.mark.data
def test_a_smaller_draw_is_the_first_rows_of_a_larger_one():
    """``-p n_prompts 20`` reads the first 20 prompts of the default run: the record serves it."""
    from toxlib.papers import rtp

    small, large = rtp.stratified_prompts(7, 5, seed=0), rtp.stratified_prompts(60, 50, seed=0)
    for cls in ("toxic", "non-toxic"):
        want = small[small["prompt_class"] == cls]["record_id"].tolist()
        assert large[large["prompt_class"] == cls]["record_id"].tolist()[:len(want)] == want
    assert rtp.challenging_prompts(5)["record_id"].tolist() == rtp.challenging_prompts(40)["record_id"].tolist()[:5]


def _alter_one_continuation(folder, key: str | None = None) -> None:
    """Point one stored continuation (of ``key``, default the first file's) at another text, as an edited or
    corrupted record would."""
    from toxlib.store.record_reader import file_of, read_csv_gz, text_sha, write_csv_gz, write_sums

    path = folder / "generations" / f"{file_of(key)}.csv.gz" if key else next((folder / "generations").glob("*.csv.gz"))
    rows = read_csv_gz(path)
    texts = read_csv_gz(folder / "texts.csv.gz")
    altered = "an altered continuation"
    rows[0]["continuation_sha"] = text_sha(altered)
    write_csv_gz(path, list(rows[0]), [list(r.values()) for r in rows])
    write_csv_gz(folder / "texts.csv.gz", ["text"], [[t["text"]] for t in texts] + [[altered]])
    write_sums(folder)  # sealed again: what a record written from other rows looks like to its checksums


def test_the_audit_recomputes_a_slice_and_fails_when_a_stored_continuation_is_altered(lm, folders, monkeypatch):
    from toxlib.record_tools.audit import audit
    from toxlib.record_tools.audit_outcome import PASS_SHARE

    _build_and_write(lm, folders, monkeypatch)
    clean = audit(folders["record"], n=len(PROMPTS), kinds=["generations"])
    assert clean["rows"].sum() == len(PROMPTS) * CONFIG.num_samples and (clean["matched"] == clean["rows"]).all()
    _alter_one_continuation(folders["record"])
    altered = audit(folders["record"], n=len(PROMPTS), kinds=["generations"])
    assert altered["matched"].sum() == altered["rows"].sum() - 1
    differing = altered[altered["matched"] < altered["rows"]]
    assert len(differing) == 1 and differing["detail"].iloc[0].startswith("sample ")
    assert "recorded" in differing["detail"].iloc[0] and "p=" in differing["detail"].iloc[0]
    # one of a small slice's 9 rows is 89%: the command fails below PASS_SHARE
    assert altered["matched"].sum() / altered["rows"].sum() < PASS_SHARE


def test_the_audit_command_exits_non_zero_below_the_pass_share_and_names_what_it_could_not_rebuild(
        lm, folders, monkeypatch, capsys):
    from toxlib.cli import main

    with ScoreStore() as scores:  # a scorer key of another version: listed, not audited
        scores.add("profanity-svm@0.0-not-this-one", [("text", {"toxicity": 0.5}, None)])
    _build_and_write(lm, folders, monkeypatch)
    assert main(["record", "audit", "--slice", "3", "--history"]) == 0
    out = capsys.readouterr().out
    assert "9 of 9 rows match" in out
    assert "1 keys not audited" in out and "recorded 0.0-not-this-one" in out
    history = pd.read_csv(folders["record"] / "audits.csv")
    counts = history[["slice", "keys audited", "keys not audited", "rows", "identical"]]
    assert counts.values.tolist() == [[3, 1, 1, 9, 9]]
    assert history["identical share"].tolist() == [1.0] and history["machine"].iloc[0]
    _alter_one_continuation(folders["record"])
    assert main(["record", "audit", "--slice", "3"]) == 1
    out = capsys.readouterr().out
    assert "8 of 9 rows match" in out and "items differ" in out


def test_the_audit_regenerates_each_prompt_with_its_own_samples_and_a_pool_only_in_part(lm, folders, monkeypatch):
    """A key holding a pool (one prompt, many samples) beside prompts of a few: each prompt is regenerated with the
    samples it holds, the pool with its first POOL_SAMPLES_PER_ITEM x slice (every prompt with the pool's count
    would cost 10,000 samples each, and count every sample the record does not hold as differing)."""
    from toxlib.record_tools import audit as audit_module

    generate(lm, [""], CONFIG.with_(num_samples=12), progress=False)  # the pool, in the same key as PROMPTS
    _build_and_write(lm, folders, monkeypatch)
    monkeypatch.setattr(audit_module, "POOL_SAMPLES_PER_ITEM", 2)
    rows = audit_module.audit(folders["record"], n=len(PROMPTS) + 1, kinds=["generations"])
    assert sorted(rows["rows"].tolist()) == [3, 3, 3, 2 * (len(PROMPTS) + 1)]  # the pool: 8 of its 12
    assert (rows["matched"] == rows["rows"]).all()


def test_sass_next_token_readings_are_audited_with_their_settings_template_prefix(lm, folders, monkeypatch):
    from toxlib.papers.sass import prompt_classifier as pc
    from toxlib.record_tools import audit as audit_module

    prompts = {s: pc.build_prompts(["a b c", "the cat sat", "you are so"], s) for s in ("zero", "few")}
    assert {pc.prompt_setting(p) for s in prompts for p in prompts[s]} == {"zero", "few"}
    assert pc.prompt_setting(pc.build_prompts(["x"], "one")[0]) == "one" and pc.prompt_setting("plain") is None
    for setting, group in prompts.items():  # as next_token_reading computes them, for two token ids
        pc.cached_next_token_probabilities(lm, group, [5, 7], prefix=pc.template_prefix(lm, setting))
    _build_and_write(lm, folders, monkeypatch)
    used = []
    real = pc.next_token_probabilities
    monkeypatch.setattr(audit_module, "next_token_probabilities",
                        lambda lm, group, ids, prefix=None: used.append((pc.prompt_setting(group[0]), prefix))
                        or real(lm, group, ids, prefix=prefix))
    rows = audit_module.audit(folders["record"], n=6, kinds=["lm_scores"])
    assert sorted(set(rows["key"].str.split("|").str[0])) == [f"{pc.NEXT_TOKEN_VERSION}:5",
                                                              f"{pc.NEXT_TOKEN_VERSION}:7"]
    assert rows["rows"].sum() == 12 and (rows["matched"] == rows["rows"]).all(), rows["detail"].tolist()
    assert rows["detail"].str.startswith("probability difference").all()  # compared as probabilities
    assert all(prefix == pc.template_prefix(lm, setting) for setting, prefix in used)  # each with its own prefix
    assert {setting for setting, _ in used} == {"zero", "few"}


def test_an_interrupted_audit_resumes_from_its_out_file_and_refuses_one_of_another_slice(
        lm, folders, monkeypatch, capsys, tmp_path):
    from toxlib.cli import main
    from toxlib.record_tools import audit as audit_module

    generate(lm, PROMPTS, CONFIG.with_(seed=2), progress=False)  # a second key, left for the resumed audit
    with ScoreStore() as scores:  # a key listed as not audited: a resumed audit tries it again
        scores.add("profanity-svm@0.0-not-this-one", [("text", {"toxicity": 0.5}, None)])
    _build_and_write(lm, folders, monkeypatch)
    out = tmp_path / "audit.csv"
    assert main(["record", "audit", "--slice", "3", "--out", str(out)]) == 0
    full = pd.read_csv(out)
    assert full["key"].nunique() == 3 and set(full["slice"]) == {3} and set(full["seed"]) == {0}
    first = full["key"].iloc[0]
    assert full.loc[full["key"] == first, "kind"].iloc[0] == "generations"
    # as if stopped after the first key, with the scorer key listed as not audited before it
    full[(full["key"] == first) | (full["rows"] == 0)].to_csv(out, index=False)
    audited = []
    for kind, run in list(audit_module.AUDITS.items()):
        monkeypatch.setitem(audit_module.AUDITS, kind,
                            lambda record, key, *a, run=run: audited.append(key) or run(record, key, *a))
    capsys.readouterr()
    assert main(["record", "audit", "--slice", "3", "--out", str(out), "--resume", "--history"]) == 0
    said = capsys.readouterr().out
    assert audited == [k for k in full["key"].unique() if k != first]  # the unfinished key and the one not audited
    assert "resumed: 1 keys" in said and "18 of 18 rows match" in said and "1 keys not audited" in said
    resumed = pd.read_csv(out)
    assert sorted(resumed["key"]) == sorted(full["key"]) and resumed["matched"].sum() == full["matched"].sum()
    history = pd.read_csv(folders["record"] / "audits.csv")
    assert history[["scope", "keys audited", "keys not audited", "rows"]].values.tolist() == [["all keys", 2, 1, 18]]
    # a chapter the record does not know is refused, naming those it knows, and the file is kept as it was
    assert main(["record", "audit", "--slice", "3", "--out", str(out), "--resume", "--chapter", "no-such"]) == 2
    assert "its chapters are test_chapter" in capsys.readouterr().err and len(pd.read_csv(out)) == len(resumed)
    # a cap on keys holds for resumed rows too: one generation key of the two the file holds
    recomputed = len(audited)
    assert main(["record", "audit", "--slice", "3", "--out", str(out), "--resume", "--kind", "generations",
                 "--keys", "1"]) == 0
    assert "resumed: 1 keys" in capsys.readouterr().out and len(audited) == recomputed  # nothing recomputed
    assert main(["record", "audit", "--slice", "3", "--out", str(out)]) == 2  # no --resume: the file is kept
    assert "add --resume" in capsys.readouterr().err and len(pd.read_csv(out)) == len(resumed)
    whole = out.read_text()
    out.write_text(whole[:-5])  # the audit stopped while writing a line: that key is audited again, not miscounted
    assert main(["record", "audit", "--slice", "3", "--out", str(out), "--resume"]) == 0
    assert "18 of 18 rows match" in capsys.readouterr().out
    out.write_text(whole)
    assert main(["record", "audit", "--slice", "2", "--out", str(out), "--resume"]) == 2
    assert "holds an audit with slice [3]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["record", "audit", "--slice", "0"])
    assert "give a whole number of at least 1" in capsys.readouterr().err
    assert main(["record", "audit", "--slice", "3", "--kind", "generations", "--keys", "1", "--history"]) == 0
    assert pd.read_csv(folders["record"] / "audits.csv")["scope"].iloc[-1] == (
        "kinds generations; at most 1 keys per kind")


def test_fewer_samples_are_the_first_rows_of_more_and_are_not_recomputed(lm, folders, monkeypatch):
    """The number of samples is not part of a generation's key: a pool of 3 is the first 3 rows of a pool of 6."""
    many = generate(lm, [""], CONFIG.with_(num_samples=6), progress=False)
    calls = _count_decoding(monkeypatch)
    few = generate(lm, [""], CONFIG.with_(num_samples=3), progress=False)
    assert [p for call in calls for p in call] == []
    assert few["continuation"].tolist() == many["continuation"].tolist()[:3]
    fresh = generate(lm, [""], CONFIG.with_(num_samples=3), cache=False, progress=False)
    assert fresh["continuation"].tolist() == few["continuation"].tolist()  # and they are what a run of 3 computes


def test_a_recorded_trained_file_is_used_instead_of_training_and_write_copies_what_a_build_used(
        lm, folders, monkeypatch):
    """The PPLM discriminator and the vocabulary-shift weights are looked up in the record's artefacts/ by a key of
    their training inputs: a build with the record trains nothing; one without writes its file into the record."""
    from toxlib.papers.rtp.detox.weights import trained_once

    corpus = pd.DataFrame({"text": ["a text", "another"], "toxic": [1, 0]})

    class Saved:
        def save(self, path):
            path.write_bytes(b"trained weights")

    def train(lm, corpus, steps: int = 3):
        trained.append(steps)
        return Saved()

    trained = []
    first = trained_once("kind", lm, corpus, train, lambda path: path.read_bytes(), "v1")
    assert trained == [3] and first == b"trained weights"
    with ScoreStore() as scores:  # the record needs a row to be written at all
        scores.add("scorer@1", [("text", {"toxicity": 0.5}, None)])
    write_record(folders["log"], folders["record"], prune=True, cache=folders["cache"])
    copies = list((folders["record"] / "artefacts" / "detox").glob("kind-*.safetensors"))
    assert [p.read_bytes() for p in copies] == [b"trained weights"]
    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(folders["cache"].parent / "empty-cache"))
    assert trained_once("kind", lm, corpus, train, lambda path: path, "v1") == copies[0]
    assert trained == [3]  # read from the record, not trained again
    monkeypatch.setenv("TOXLIB_RECORD", "off")
    trained_once("kind", lm, corpus, train, lambda path: path, "v1")
    assert trained == [3, 3]  # with the record off it trains (into the user cache)


def test_an_adapted_model_is_keyed_by_its_training_inputs_not_its_bytes(lm, tmp_path, monkeypatch):
    from toxlib.steer.adapt import AdaptConfig, adapt
    from toxlib.steer.adapt_key import adaptation_sha

    monkeypatch.setenv("TOXLIB_CACHE_DIR", str(tmp_path))
    corpus = pd.DataFrame({"text": ["one short text", "and another one", "a third"], "toxic": [0, 0, 0]})
    config = AdaptConfig(method="dapt", max_steps=2, batch_size=2, max_tokens=16)
    adapted = adapt(lm, corpus, config, progress=False)
    assert adapted.weights_id == f"adapted:{adaptation_sha(lm, corpus, config)[:32]}"
    other = adapt(lm, corpus, AdaptConfig(method="dapt", max_steps=3, batch_size=2, max_tokens=16), progress=False)
    assert other.weights_id != adapted.weights_id


def test_the_audit_says_why_an_adapted_models_keys_are_not_rebuilt(tiny_model_dirs):
    from toxlib.record_tools.audit import NotAuditable, _model

    with pytest.raises(NotAuditable, match="adapter trained inside a chapter.*not its weights"):
        _model("smollm2-135m+dapt-toxic", "float32", "adapted:0123abcd", None)
    with pytest.raises(NotAuditable, match="not loadable here"):  # an unknown name that is not an adapter
        _model("no-such-model", "float32", "sha256:00", None)
    assert _model(str(tiny_model_dirs["llama"]), "float32", None, None).model is not None


def test_rows_read_from_a_user_cache_keep_the_commit_that_cached_them(folders, monkeypatch):
    import sqlite3

    with ScoreStore() as scores:
        scores.add("scorer@1", [("cached earlier", {"toxicity": 0.5}, None)])
    con = sqlite3.connect(folders["cache"] / "scores.sqlite")
    con.execute("UPDATE scores SET made_by = 'abc123def456'")
    con.commit()
    con.close()
    folders["log"].unlink()  # a later build reads that row from its cache
    with ScoreStore() as scores:
        assert set(scores.lookup("scorer@1", ["cached earlier"])) == {"cached earlier"}
    write_record(folders["log"], folders["record"], prune=True, cache=folders["cache"])
    [made_by] = read_keys(folders["record"])[0]["made_by"]
    assert made_by["commit"] == "abc123def456" and made_by["rows"] == 1 and "user cache" in made_by["how"]


def test_a_record_file_edited_after_writing_is_refused_whatever_its_size_and_time(lm, folders, monkeypatch):
    import gzip
    import os
    import subprocess

    from toxlib.store.record_reader import RecordIntegrityError

    _build_and_write(lm, folders, monkeypatch)
    record = folders["record"]
    assert subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=record).returncode == 0
    Record(record).rows("generations", read_keys(record)[0]["key"])  # intact: reads
    keys = record / "keys.csv"
    stat = keys.stat()
    keys.write_bytes(keys.read_bytes().replace(b"test_chapter", b"test_chapteR"))  # same size
    os.utime(keys, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the time restored, as touch -r would
    with pytest.raises(RecordIntegrityError, match="keys.csv does not match its checksum"):
        Record(record)
    keys.write_bytes(keys.read_bytes().replace(b"test_chapteR", b"test_chapter"))
    [rows] = list((record / "generations").glob("*.csv.gz"))
    data = gzip.decompress(rows.read_bytes())
    rows.write_bytes(gzip.compress(data.replace(b'"0"', b'"1"', 1), mtime=0))
    with pytest.raises(RecordIntegrityError, match="edited or damaged"):
        Record(record).rows("generations", read_keys(record)[0]["key"])
    from toxlib.record_tools.audit import audit

    with pytest.raises(RecordIntegrityError):  # the audit fails on it, rather than listing the key as not audited
        audit(record, n=1, kinds=["generations"])
    (record / "SHA256SUMS").unlink()
    with pytest.raises(RecordIntegrityError, match="has no checksum"):
        Record(record)


def test_the_record_stays_under_the_cap_the_readme_states():
    """The README states the record's cap (60 MB), not its size, which changes with every record write (``record
    status`` prints it); the shipped record stays under the cap."""
    import re

    from toxlib.store import paths

    root = paths.project_root()
    readme = " ".join((root / "README.md").read_text().split())
    cap = re.search(r"The record stays under a cap of (\d+) MB", readme)
    assert cap, "README.md: say 'The record stays under a cap of <MB> MB'"
    assert not re.search(r"The record is [\d.]+ MB", readme), "README.md: leave the record's size to record status"
    totals = record_totals(root / "data" / "record")
    assert totals["megabytes"] <= int(cap.group(1)), (
        f"the record is {totals['megabytes']:.1f} MB, over its {cap.group(1)} MB cap: drop unused keys "
        "(record write --prune)")


def test_the_run_records_audit_phrase_is_the_last_line_of_the_audit_history(tmp_path):
    from toxlib.record_tools.history import HISTORY_COLUMNS
    from toxlib.store.record_usage import last_audit

    assert last_audit(tmp_path) == ""  # no audits.csv: nothing to say
    lines = [["2026-11-25", "CPU A; AMX no", "aaaa", "3", "0", "all keys", "46", "19", "366", "366", "1.000", "", ""],
             ["2026-11-26", "CPU B; AMX yes", "bbbb", "10", "0", "all keys", "50", "16", "1204", "1200", "0.997", "0",
              "0"]]
    pd.DataFrame(lines, columns=HISTORY_COLUMNS).to_csv(tmp_path / "audits.csv", index=False)
    phrase = last_audit(tmp_path)
    assert phrase == ("the record's last audit (2026-11-26, CPU B; AMX yes, commit bbbb, slice 10 per key): "
                      "1,200 of 1,204 recomputed rows identical")
    lines.append(["2026-11-27", "CPU C", "cccc", "10", "0", "chapters sass", "54", "12", "1788", "1779", "0.995",
                  "20", "3"])
    pd.DataFrame(lines, columns=HISTORY_COLUMNS).to_csv(tmp_path / "audits.csv", index=False)
    assert last_audit(tmp_path) == ("the record's last audit (2026-11-27, CPU C, commit cccc, slice 10 per key, "
                                    "chapters sass): 1,779 of 1,788 recomputed rows identical (bf16 rows, "
                                    "machine-dependent and not counted: 3 of 20)")
    # a chapter's run record cites the last audit that covered its keys: all keys, or a scope naming its chapter
    assert last_audit(tmp_path, {"sass", "rtp_detox"}) == last_audit(tmp_path)
    assert last_audit(tmp_path, {"generation"}).startswith("the record's last audit (2026-11-26, CPU B")
    lines[0][5], lines[1][5] = "chapters rtp_detox", "kinds scores; at most 3 keys per kind"
    pd.DataFrame(lines, columns=HISTORY_COLUMNS).to_csv(tmp_path / "audits.csv", index=False)
    assert "(2026-11-26, CPU B" in last_audit(tmp_path, {"generation"}) and last_audit(tmp_path, {"x"}) != ""
    assert last_audit(tmp_path, {"rtp_detox"}).startswith("the record's last audit (2026-11-26, CPU B")
    pd.DataFrame([lines[0], lines[2]], columns=HISTORY_COLUMNS).to_csv(tmp_path / "audits.csv", index=False)
    assert last_audit(tmp_path, {"generation"}) == "" and "2026-11-25" in last_audit(tmp_path, {"rtp_detox"})


def test_a_run_record_cites_the_last_audit_that_covered_its_own_chapter(lm, folders, monkeypatch):
    from collections import Counter

    from toxlib.record_tools.history import HISTORY_COLUMNS
    from toxlib.store import record_usage as record_module

    _build_and_write(lm, folders, monkeypatch)
    monkeypatch.setattr(record_module, "SERVED", Counter())
    monkeypatch.setattr(record_module, "SERVED_KEYS", set())
    generate(lm, PROMPTS, CONFIG, progress=False)  # every row from the record: its key's chapter is test_chapter

    def line(date, scope):
        return [date, "CPU", "c0ffee", "3", "0", scope, "1", "0", "9", "9", "1.000", "0", "0"]
    pd.DataFrame([line("2026-01-01", "chapters test_chapter"), line("2026-01-02", "chapters other")],
                 columns=HISTORY_COLUMNS).to_csv(folders["record"] / "audits.csv", index=False)
    assert "last audit (2026-01-01" in record_module.served_summary()  # the runner's chapter: test_chapter
    monkeypatch.setenv("TOXLIB_RECORD_CHAPTER", "other")  # a chapter reading a key another chapter also uses
    assert "last audit (2026-01-02" in record_module.served_summary()
    monkeypatch.delenv("TOXLIB_RECORD_CHAPTER")  # outside the book: the chapters of the keys served
    assert "last audit (2026-01-01" in record_module.served_summary()


def test_bf16_rows_are_audited_and_shown_but_do_not_decide_the_audit(lm, folders, monkeypatch, capsys,
                                                                       tiny_model_dirs):
    from toxlib.cli import main
    from toxlib.models.cpu_kernels import bf16_row_invariant_expected
    from toxlib.record_tools.audit import key_precision

    precisions = {("lm_scores", "causal-nll-v4|sha256:ab|bfloat16"): "bfloat16",
                  ("lm_scores", "steered-nll-v2|sha256:ab|float32|109c13029ff07220|batch4"): "float32",
                  ("lm_scores", "next-token-v3:3635|sha256:ab|bfloat16"): "bfloat16",
                  ("scores", "distilled@minilm-rtp-3-x-eqlen-bfloat16"): "bfloat16",
                  ("scores", "distilled@minilm-rtp-3-x-eqlen-bfloat16-raw"): "bfloat16",
                  ("scores", "distilled@minilm-rtp-3-x-eqlen-float32-raw"): "float32",
                  ("scores", "profanity-svm@alt-profanity-check-1.9.1"): "float32"}
    assert {k: key_precision(*k, None) for k in precisions} == precisions
    assert key_precision("generations", "k", {"dtype": "bfloat16"}) == "bfloat16"
    bf16 = load(str(tiny_model_dirs["llama"]), device="cpu", dtype="bfloat16")
    generate(bf16, PROMPTS, CONFIG, progress=False)  # a bf16 key beside the float32 one
    _build_and_write(lm, folders, monkeypatch)
    record = Record(folders["record"])
    [key] = [k for (kind, k), e in record.keys.items() if e["config"]["dtype"] == "bfloat16"]
    _alter_one_continuation(folders["record"], key)  # a bf16 row that another CPU would give otherwise
    assert main(["record", "audit", "--slice", "3", "--history"]) == 0  # the altered row is a bf16 one: passes
    out = capsys.readouterr().out
    history = pd.read_csv(folders["record"] / "audits.csv")
    assert "9 of 9 rows match" in out and "items differ (bf16/float16: shown, not counted)" in out
    assert history[["rows", "identical", "bf16 rows (not counted)"]].values.tolist() == [[9, 9, 9]]
    if bf16_row_invariant_expected():  # with AMX a bf16 row also moves with its batch (tests/models)
        assert "not counted: 8 of 9 rows of 1 bfloat16/float16 keys match" in out
        assert history["bf16 identical"].tolist() == [8]
    else:
        assert history["bf16 identical"].iloc[0] <= 8


def test_a_resumed_audit_redoes_a_key_whose_rows_the_out_file_holds_only_in_part(lm, folders, monkeypatch, capsys,
                                                                                  tmp_path):
    """A kill between two buffer flushes of a large key leaves some of its rows in the --out file: a resumed audit
    must audit that key again, not count the rows it lacks (it counted 5 of 5 rows where the audit has 6)."""
    from toxlib.cli import main

    generate(lm, PROMPTS, CONFIG.with_(seed=2), progress=False)
    _build_and_write(lm, folders, monkeypatch)
    full_out = tmp_path / "a.csv"
    assert main(["record", "audit", "--slice", "3", "--out", str(full_out)]) == 0
    assert "18 of 18 rows match" in capsys.readouterr().out
    cut = tmp_path / "b.csv"
    cut.write_text("".join(full_out.read_text().splitlines(keepends=True)[:3]))  # header and 2 of 3 rows of a key
    assert main(["record", "audit", "--slice", "3", "--out", str(cut), "--resume"]) == 0
    said = capsys.readouterr().out
    assert "18 of 18 rows match" in said and "1 key(s) held only in part" in said and "resumed:" not in said
    again = pd.read_csv(cut)
    assert len(again) == 6 and (again.groupby("key").size() == again.groupby("key")["key_rows"].first()).all()


def test_audit_arguments_and_files_that_cannot_work_are_refused_before_anything_is_recomputed(
        lm, folders, monkeypatch, capsys, tmp_path):
    from toxlib.cli import main
    from toxlib.record_tools import audit as audit_module

    _build_and_write(lm, folders, monkeypatch)
    monkeypatch.setattr(audit_module, "AUDITS", {})  # recomputing anything would raise KeyError
    for argv, said in ((["--seed", "-1"], "at least 0"), (["--keys", "0"], "at least 1"),
                       (["--slice", "x"], "not a whole number")):
        with pytest.raises(SystemExit):
            main(["record", "audit", *argv])
        assert said in capsys.readouterr().err
    cases = ((["--out", str(tmp_path), "--resume"], "is a folder"),
             (["--out", str(tmp_path / "missing" / "a.csv")], "does not exist"),
             (["--chapter", "no_such_chapter"], "its chapters are test_chapter"),
             (["--resume"], "--resume needs --out"))
    for argv, said in cases:
        assert main(["record", "audit", *argv]) == 2
        assert said in capsys.readouterr().err
    (folders["record"] / "audits.csv").mkdir()  # a history that cannot be written, even by root
    assert main(["record", "audit", "--history"]) == 2
    assert "cannot add its line" in capsys.readouterr().err
    bad = tmp_path / "old.csv"
    bad.write_text("kind,key\ngenerations,abc\n")
    assert main(["record", "audit", "--out", str(bad), "--resume"]) == 2
    assert "not this toxlib's audit --out file" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["deleted", "texts deleted", "not gzip", "one row", "bad row"])
def test_a_damaged_record_is_an_error_naming_the_file_and_the_fix_even_with_its_sum_recomputed(
        lm, folders, monkeypatch, damage):
    import gzip

    from toxlib.store.record_reader import RecordIntegrityError, verify, write_sums

    _build_and_write(lm, folders, monkeypatch)
    record = folders["record"]
    [entry] = [e for e in read_keys(record) if e["kind"] == "generations"]
    rows = record / "generations" / f"{entry['file']}.csv.gz"
    lines = gzip.decompress(rows.read_bytes()).decode().splitlines(keepends=True)
    if damage == "deleted":
        rows.unlink()
    elif damage == "texts deleted":
        (record / "texts.csv.gz").unlink()
    elif damage == "not gzip":
        rows.write_bytes(b"prompt_sha,sample_idx\n")
    elif damage == "one row":  # a one-row file standing in for the key's rows
        rows.write_bytes(gzip.compress("".join(lines[:2]).encode(), mtime=0))
    else:
        rows.write_bytes(gzip.compress("".join(lines[:-1] + ['"x","not a number","y","z","1"\n']).encode(), mtime=0))
    write_sums(record)  # the sums recomputed: only the content betrays it
    with pytest.raises(RecordIntegrityError, match=r"git checkout -- data/record") as caught:
        Record(record).rows("generations", entry["key"])
    assert ("texts.csv.gz" if damage == "texts deleted" else entry["file"]) in str(caught.value)
    found = verify(record)
    assert found["problems"] and found["keys"] == 0
    assert (status_text(record, found).startswith("the record at") and "failed its check" in status_text(record, found))


def test_record_status_verifies_every_file_and_the_row_counts():
    from toxlib.store.record_reader import record_dir, verify

    found = verify(record_dir())
    assert found["problems"] == [] and found["keys"] == len(read_keys(record_dir()))
    assert found["rows"] == sum(e["rows"] for e in read_keys(record_dir()))
