"""The record's CPU cost: work read from each key's file, charged at the right benchmark's rate (hand-computed
hours on a small record written here), and the shipped record's keys all accounted for."""

from __future__ import annotations

import csv
import json
import math

import pytest

from toxlib.benchmarks.record_cost import cpu_hours, per_chapter, read_rates, record_cost, record_work
from toxlib.cli import main
from toxlib.store.record_reader import KEY_COLUMNS, ROW_COLUMNS, file_of, record_dir, write_csv_gz, write_sums

WEIGHTS = "sha256:" + "ab" * 32


def _generation(model: str, mode: str, steering: str | None) -> dict:
    return {"decoding": {"max_new_tokens": 20, "mode": mode}, "dtype": "float32", "model": model,
            "weights": WEIGHTS if model.startswith("smollm2") else "sha256:" + "cd" * 32,
            **({"steering": {"name": steering}} if steering else {})}


def _nll(dtype: str) -> dict:
    return {"dtype": dtype, "method": "causal", "model": "smollm2-135m", "weights": WEIGHTS}


def _small_record(folder) -> None:
    """Seven keys: sampled SmolLM2 (20 + 10 tokens), Self-Debiasing Gemma (15 + 25), greedy Gemma (8), PPLM (20),
    SmolLM2's NLLs in float32 (7 + 5 tokens) and in bf16 (4), a scorer (3 texts)."""
    keys = [
        ("generations", "k-sample", "ch_one; ch_two",
         _generation("smollm2-135m+dapt-toxic", "sample", None), [("p", 0, "c1", 20, 0), ("p", 1, "c2", 10, 1)]),
        ("generations", "k-sd", "ch_three", _generation("gemma3-270m", "greedy", "self-debiasing"),
         [("p", 0, "c1", 15, 1), ("q", 0, "c2", 25, 0)]),
        ("generations", "k-pplm", "ch_four", _generation("smollm2-135m", "sample", "pplm"), [("p", 0, "c1", 20, 0)]),
        ("generations", "k-greedy", "ch_five", _generation("gemma3-270m", "greedy", None), [("p", 0, "c1", 8, 1)]),
        ("lm_scores", f"causal-nll-v4|{WEIGHTS}|float32", "ch_six", _nll("float32"),
         [("t1", 7, 1.0), ("t2", 5, 2.0)]),
        ("lm_scores", f"causal-nll-v4|{WEIGHTS}|bfloat16", "ch_six", _nll("bfloat16"), [("t1", 4, 1.0)]),
        ("scores", "scorer@1-float32", "ch_seven", None, [("t1", "{}", ""), ("t2", "{}", ""), ("t3", "{}", "")]),
    ]
    with (folder / "keys.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(KEY_COLUMNS)
        for kind, key, chapters, config, rows in keys:
            (folder / kind).mkdir(exist_ok=True)
            write_csv_gz(folder / kind / f"{file_of(key)}.csv.gz", ROW_COLUMNS[kind], [list(r) for r in rows])
            writer.writerow([kind, key, file_of(key), len(rows), chapters, json.dumps(config) if config else "", "[]"])
    write_sums(folder)


def _rates(path) -> None:
    path.write_text("\n".join([
        "model smollm2-135m: a progress line, not JSON",
        json.dumps({"model": "smollm2-135m", "toxlib_tok_s": 1.0, "dtype": "float32"}),  # replaced by the next line
        json.dumps({"model": "/some/folder/smollm2-135m", "toxlib_tok_s": 10.0, "roofline_pct": 50.0}),
        json.dumps({"model": "smollm2-135m", "toxlib_tok_s": 1e6, "weights": "random"}),  # skipped
        json.dumps({"model": "gemma3-270m", "self_debias_tok_s": 4.0, "greedy_tok_s": 8.0}),
        json.dumps({"model": "smollm2-135m", "tok_s": 6.0}),
        json.dumps({"texts": 3, "results": [{"scorer": "s", "version": "1-float32", "texts_per_s": 3.0},
                                           {"scorer": "s-fp32", "version": "1-float32", "texts_per_s": 99.0}]}),
    ]) + "\n", encoding="utf-8")


def test_each_key_is_charged_at_its_benchmarks_rate_and_hours_match_a_hand_count(tmp_path):
    _small_record(tmp_path)
    _rates(tmp_path / "rates.jsonl")
    costs = cpu_hours(record_work(tmp_path), read_rates(tmp_path / "rates.jsonl")).set_index("key")
    # an adapter is charged as its base model; tokens are the rows' n_new_tokens / n_tokens
    assert costs.loc["k-sample", ["model", "work", "rate"]].tolist() == ["smollm2-135m", 30, 10.0]
    assert costs.loc["k-sample", "hours"] == pytest.approx(30 / 10 / 3600)
    assert costs.loc["k-sd", "hours"] == pytest.approx(40 / 4 / 3600)  # Self-Debiasing's rate, not greedy's
    assert costs.loc["k-greedy", "hours"] == pytest.approx(8 / 8 / 3600)
    assert costs.loc[f"causal-nll-v4|{WEIGHTS}|float32", "hours"] == pytest.approx(12 / 6 / 3600)
    # a bf16 NLL is not charged at the float32 rate
    bf16 = costs.loc[f"causal-nll-v4|{WEIGHTS}|bfloat16"]
    assert math.isnan(bf16["hours"]) and bf16["reason"] == "no tok_s for smollm2-135m in bfloat16 in the rates"
    assert costs.loc["scorer@1-float32", "hours"] == pytest.approx(3 / 3 / 3600)
    assert math.isnan(costs.loc["k-pplm", "hours"]) and "PPLM" in costs.loc["k-pplm", "reason"]
    chapters = per_chapter(costs.reset_index()).set_index("chapters")
    assert chapters.loc["ch_four", ["keys", "keys_charged"]].tolist() == [1, 0]
    assert math.isnan(chapters.loc["ch_four", "hours"])  # nothing charged: unknown, not 0 hours
    assert chapters.loc["ch_six", ["keys", "keys_charged"]].tolist() == [2, 1]
    assert chapters["hours"].sum() == pytest.approx((3 + 10 + 1 + 2 + 1) / 3600)


def test_a_model_without_a_rate_says_so_instead_of_costing_nothing(tmp_path):
    _small_record(tmp_path)
    (tmp_path / "rates.jsonl").write_text(json.dumps({"model": "smollm2-135m", "toxlib_tok_s": 10.0}) + "\n")
    costs = cpu_hours(record_work(tmp_path), read_rates(tmp_path / "rates.jsonl")).set_index("key")
    assert math.isnan(costs.loc["k-sd", "hours"])
    assert costs.loc["k-sd", "reason"] == "no self_debias_tok_s for gemma3-270m in float32 in the rates"


def test_the_command_prints_hours_per_file_and_json_last(tmp_path, capsys):
    _small_record(tmp_path)
    for label, rate in (("after", 0.002), ("before", 0.001)):  # 30 tokens: 4.167 and 8.333 hours
        (tmp_path / f"{label}.jsonl").write_text(json.dumps({"model": "smollm2-135m", "toxlib_tok_s": rate}) + "\n")

    runs = [tmp_path / "after.jsonl", tmp_path / "before.jsonl"]
    cost = record_cost(runs, tmp_path)
    assert list(cost.hours.columns) == ["after (h)", "before (h)"]
    assert int(cost.uncharged["after"]["keys"].sum()) == cost.summary["after"]["keys"] - cost.summary["after"][
        "keys_charged"]
    assert main(["bench", "record-cost", *map(str, runs), "--record", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    group = "ch_one; ch_two"
    assert result["after"]["per_chapter_group_hours"][group] == pytest.approx(4.167)
    assert result["before"]["per_chapter_group_hours"][group] == pytest.approx(8.333)
    assert result["before"]["charged_hours"] == pytest.approx(8.333)
    assert result["before"]["per_chapter_group_hours"]["ch_four"] is None
    assert out.count("keys not charged") == 2  # each file's own list
    assert "PPLM's gradient steps" in out and "no self_debias_tok_s for gemma3-270m in float32" in out


def test_every_key_of_the_shipped_record_has_its_work_counted():
    work = record_work(record_dir()).set_index("key")
    keys = list(csv.DictReader((record_dir() / "keys.csv").open(encoding="utf-8")))
    generated = [k for k in keys if k["kind"] == "generations"]
    # at most each key's own max_new_tokens per row, and some rows of the 20-token keys stop early
    limits = {k["key"]: json.loads(k["config"])["decoding"]["max_new_tokens"] * int(k["rows"]) for k in generated}
    assert all(0 < work.loc[key, "work"] <= limit for key, limit in limits.items())
    assert any(work.loc[key, "work"] < limit for key, limit in limits.items())
    assert set(work["rate_field"].dropna()) == {"toxlib_tok_s", "greedy_tok_s", "self_debias_tok_s", "tok_s",
                                                "texts_per_s"}
    assert (work.loc[work["rate_field"].isna(), "reason"] != "").all()
    assert set(work.loc[work["kind"] == "lm_scores", "dtype"]) == {"float32", "bfloat16"}
