"""A report's names and folders: a short name is never a path, ``--out`` must be a folder, a report folder of one
model is never resumed for another under the same name, and Ctrl-C ends a command with one line, not a traceback."""

from __future__ import annotations

import json

import pytest

from toxlib import cli
from toxlib.common.errors import ParameterError
from toxlib.common.provenance import library_commit
from toxlib.reportcard.card import model_identity
from toxlib.reportcard.runs import _write_log, check_same_model, done_before


@pytest.mark.parametrize("name", ["../x", "/tmp/abs", "", "a/b", "..", ".hidden", "x" * 65])
def test_a_name_that_is_not_a_short_name_stops_argparse_naming_what_is_allowed(name, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.parser().parse_args(["report", "--model", "smollm2-135m", "--name", name])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "argument --name" in err and "is not a short name" in err


def test_a_default_name_from_a_folder_that_is_no_short_name_asks_for_one(tmp_path, capsys):
    folder = tmp_path / "my model"
    folder.mkdir()
    assert cli.main(["report", "--model", str(folder), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "is not a short name" in err and "give --name" in err


def test_an_out_that_is_a_file_is_refused_before_anything_runs(tmp_path, capsys):
    out = tmp_path / "reports"
    out.write_text("not a folder")
    assert cli.main(["report", "--model", "smollm2-135m", "--out", str(out)]) == 2
    assert f"--out {out} is a file" in capsys.readouterr().err


def _finished(folder, stem, values, model, device="cpu"):
    (folder / "chapters").mkdir(parents=True, exist_ok=True)
    (folder / "chapters" / f"{stem}.ipynb").write_text("{}")
    (folder / "results" / stem).mkdir(parents=True, exist_ok=True)
    (folder / "results" / stem / "claims.csv").write_text("claim\n")
    return {stem: {"status": "ran", "values": values, "commit": library_commit(), "model": model, "device": device}}


def test_a_chapter_isdone_before_only_for_the_same_model(tmp_path):
    values = {"model": "m", "n_prompts": 10}
    log = _finished(tmp_path, "sass", values, "/models/a@sha256:aaa")
    assert done_before(log, "sass", values, tmp_path, "/models/a@sha256:aaa")
    assert not done_before(log, "sass", values, tmp_path, "/models/b@sha256:bbb")  # same name, another model
    assert not done_before(log, "sass", {**values, "n_prompts": 20}, tmp_path, "/models/a@sha256:aaa")
    assert not done_before(log, "sass", values, tmp_path, "/models/a@sha256:aaa", "cuda")  # another device


def test_another_model_under_a_used_name_is_refused_with_the_fix_before_any_estimate(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "reports" / "mine"
    _write_log(folder, _finished(folder, "sass", {"models": ["mine"]}, "/models/a@sha256:aaa"))
    with pytest.raises(ParameterError, match="give another --name, or --fresh"):
        check_same_model(folder, "/models/b@sha256:bbb")
    check_same_model(folder, "/models/a@sha256:aaa")  # the same model resumes
    from toxlib.reportcard import card

    monkeypatch.setattr(card, "plan_report", lambda *a, **k: pytest.fail("estimated before refusing"))
    assert cli.main(["report", "--model", "smollm2-135m", "--name", "mine", "--out", str(tmp_path / "reports")]) == 2
    assert "holds a report of another model under this name (/models/a@sha256:aaa)" in capsys.readouterr().err
    check_same_model(folder, "smollm2-135m", fresh=True)  # --fresh: the other model's report is gone
    assert not (folder / "runs.json").exists() and not (folder / "chapters").exists()


def test_two_folders_with_other_weights_are_two_models_and_a_bundled_name_is_itself(tmp_path):
    for name, data in (("a", b"weights of a"), ("b", b"weights of b")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(data)
        (tmp_path / name / "config.json").write_text(json.dumps({"model_type": "llama"}))
    first, second = model_identity(str(tmp_path / "a")), model_identity(str(tmp_path / "b"))
    assert first != second and first == model_identity(str(tmp_path / "a"))
    assert model_identity("smollm2-135m") == "smollm2-135m"


def test_ctrl_c_ends_a_command_with_one_line_and_the_shells_status(monkeypatch, capsys):
    from toxlib.cli import book

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(book, "_chapters", interrupted)  # what `python -m toxlib chapters` runs
    assert cli.main(["chapters"]) == cli.INTERRUPTED_EXIT == 130
    err = capsys.readouterr().err
    assert "interrupted:" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
