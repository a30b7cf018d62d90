"""The bundled models' first conversion draws no loading bar where it must not (a chapter's kernel): transformers'
GGUF reader has a bar of its own that its progress switch does not reach. A conversion that parses the GGUF file
once (``bundled._gguf_parsed_once``) writes the files of one that lets transformers parse it three times."""

from __future__ import annotations

import contextlib
import shutil

import gguf
import pytest

from toxlib.common.digest import file_sha256
from toxlib.models import bundled

pytestmark = pytest.mark.models


def _convert(folder, monkeypatch, capfd, progress: bool):
    monkeypatch.setenv("TOXLIB_MODEL_CACHE", str(folder))
    converted = bundled.converted_dir(bundled.BUNDLED["smollm2-135m"], progress=progress)
    assert (converted / "config.json").is_file()
    return converted, capfd.readouterr().err


def _digests(folder) -> dict[str, str]:
    """{file name: sha256} of a conversion's files."""
    return {path.name: file_sha256(path) for path in folder.iterdir()}


def test_the_gguf_readers_bar_follows_progress_and_one_parse_writes_the_files_of_three(tmp_path, monkeypatch, capfd):
    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    once, drawn_once = _convert(tmp_path / "once", monkeypatch, capfd, progress=False)
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (reader, name_map), "the shared parse outlived its block"
    digests_once = _digests(once)
    shutil.rmtree(tmp_path / "once")  # 540 MB: one conversion on disk at a time
    with monkeypatch.context() as patch:
        patch.setattr(bundled, "_gguf_parsed_once", contextlib.nullcontext)
        thrice, drawn_thrice = _convert(tmp_path / "thrice", monkeypatch, capfd, progress=True)
    assert "de-quantizing GGUF tensors" not in drawn_once
    assert "de-quantizing GGUF tensors" in drawn_thrice
    digests_thrice = _digests(thrice)
    assert sorted(digests_once) == sorted(digests_thrice)
    differ = [name for name in digests_once if digests_once[name] != digests_thrice[name]]
    assert not differ, f"parsing the GGUF once changed {differ}"
