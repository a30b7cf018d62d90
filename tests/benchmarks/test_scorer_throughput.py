"""``bench score`` times each scorer version once."""

from types import SimpleNamespace

from toxlib.benchmarks import scorer_throughput


def test_a_scorer_of_a_version_already_timed_is_copied_and_others_are_timed(monkeypatch):
    versions = {"distilled": "v-fp32", "distilled-fp32": "v-fp32", "distilled-bf16": "v-bf16"}
    timed = []

    def fake_timed(name, scorer, texts, warmup):
        timed.append(name)
        return {"scorer": name, "version": scorer.version, "texts": len(texts), "seconds": 1.0,
                "texts_per_s": 10.0 * len(timed), "threads": 2}

    monkeypatch.setattr(scorer_throughput, "_scorer", lambda name: SimpleNamespace(version=versions[name]))
    monkeypatch.setattr(scorer_throughput, "_timed", fake_timed)
    rows = scorer_throughput.throughput_rows(list(versions), ["a", "b"], ["w"], log=lambda msg: None)
    assert timed == ["distilled", "distilled-bf16"]
    assert [r["scorer"] for r in rows] == list(versions)
    assert rows[1] == {**rows[0], "scorer": "distilled-fp32", "same_as": "distilled"}
    assert "same_as" not in rows[2] and rows[2]["texts_per_s"] == 20.0
