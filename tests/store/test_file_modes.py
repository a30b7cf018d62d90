"""Files rewritten through a temporary file keep the mode of the file they replace (a temporary from mkstemp is
0600), or get the umask's default when new: notebooks run in place, fetched data files, cached tables."""

from __future__ import annotations

import os
import stat
import tempfile

from toxlib.store import paths
from toxlib.store.paths import written_atomically


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "chapter.ipynb"
    target.write_text("old")
    os.chmod(target, 0o640)
    fd, partial = tempfile.mkstemp(dir=tmp_path)
    os.close(fd)
    assert _mode(partial) == 0o600
    paths.replace_keeping_mode(partial, target)
    assert _mode(target) == 0o640 and not os.path.exists(partial)


def test_a_new_file_gets_the_umask_default(tmp_path):
    old = os.umask(0o022)
    try:
        fd, partial = tempfile.mkstemp(dir=tmp_path)
        os.close(fd)
        paths.replace_keeping_mode(partial, tmp_path / "new.csv")
        assert _mode(tmp_path / "new.csv") == 0o644
    finally:
        os.umask(old)


def test_written_atomically_keeps_the_mode_too(tmp_path):
    target = tmp_path / "table.pkl"
    target.write_text("old")
    os.chmod(target, 0o664)
    with written_atomically(target) as partial:
        partial.write_text("new")
        os.chmod(partial, 0o600)
    assert target.read_text() == "new" and _mode(target) == 0o664


def test_a_notebook_run_in_place_and_a_fetched_data_file_keep_their_mode(tmp_path):
    import hashlib
    from dataclasses import replace

    import nbformat

    from toxlib.book_build.runner import run_notebook
    from toxlib.data.sources import Registry, fetch, registry

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell("x")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, str(path))
    os.chmod(path, 0o644)
    run_notebook(path, {"x": "2"}, progress=False)  # in place, through a mkstemp temporary
    assert _mode(path) == 0o644
    (tmp_path / "mirror/owner/repo").mkdir(parents=True)
    (tmp_path / "mirror/owner/repo/file.csv").write_bytes(b"a\n")
    source = replace(registry()["sass_benchmark"], name="fake", path="owner/repo/file.csv",
                     sha256=hashlib.sha256(b"a\n").hexdigest())
    old = os.umask(0o022)
    try:  # fetched through pooch's temporary file (0600): stored with the umask's default
        data = fetch("fake", mirror=tmp_path / "mirror", reg=Registry([source]), data_dir=tmp_path / "data")
    finally:
        os.umask(old)
    assert data.read_text() == "a\n" and _mode(data) == 0o644
