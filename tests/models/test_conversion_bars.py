"""The bundled models' first conversion draws no loading bar where it must not (a chapter's kernel): transformers'
GGUF reader has a bar of its own that its progress switch does not reach."""

from __future__ import annotations

import pytest

from toxlib.models import bundled

pytestmark = pytest.mark.models


@pytest.mark.parametrize("progress", [False, True])
def test_the_gguf_readers_bar_follows_progress(tmp_path, monkeypatch, capfd, progress):
    monkeypatch.setenv("TOXLIB_MODEL_CACHE", str(tmp_path))
    folder = bundled.converted_dir(bundled.BUNDLED["smollm2-135m"], progress=progress)
    assert (folder / "config.json").is_file()
    drawn = capfd.readouterr().err
    assert ("de-quantizing GGUF tensors" in drawn) is progress
