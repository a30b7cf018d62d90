"""One clean published run: every committed notebook's chapter run names one clean commit (build.chapter_runs)."""

from __future__ import annotations

import subprocess

import nbformat
import pytest

from toxlib.book_build.book import toc_notebooks
from toxlib.book_build.chapter_runs import chapter_run_problems, check_one_clean_run
from toxlib.book_build.runner import _chapter_run_cell
from toxlib.common.errors import ToxlibError
from toxlib.store import paths

ROOT = paths.project_root()


def _executed(tmp_path, name, commit, profile="default", shown_commit=None, record=True):
    """A notebook as runner.run_notebook leaves it: metadata toxlib.last_run and the shown record as last cell."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(1)")]
    if record:
        facts = {"notebook": name, "parameters": {}, "profile": profile, "smoke": profile == "smoke",
                 "toxlib_version": "0.1.0", "commit": commit, "machine": "Linux", "finished": "2026-11-23 06:00 UTC",
                 "wall_s": 1.0}
        nb.metadata["toxlib"] = {"last_run": facts}
        nb.cells.append(_chapter_run_cell({**facts, "commit": shown_commit or commit}))
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def test_agreeing_clean_records_pass(tmp_path):
    books = [_executed(tmp_path, f"{n}.ipynb", "abc123def456") for n in "abc"]
    assert chapter_run_problems(books) == []
    assert check_one_clean_run(books) == "abc123def456"


def test_disagreeing_dirty_and_missing_records_are_each_named(tmp_path):
    books = [_executed(tmp_path, "a.ipynb", "abc123def456"), _executed(tmp_path, "b.ipynb", "0123456789ab+dirty"),
             _executed(tmp_path, "c.ipynb", "abc123def456", profile="smoke"),
             _executed(tmp_path, "d.ipynb", "abc123def456", shown_commit="ffffffffffff"),
             _executed(tmp_path, "e.ipynb", "", record=False)]
    problems = chapter_run_problems(books)
    assert "b.ipynb: run with uncommitted library changes (0123456789ab+dirty)" in problems
    assert "c.ipynb: a smoke run, not the default parameters" in problems
    assert any(p.startswith("d.ipynb: the shown run record does not name") for p in problems)
    assert any(p.startswith("e.ipynb: no run record") for p in problems)
    assert any("name 2 commits, not one (0123456789ab+dirty: b.ipynb; abc123def456: a.ipynb, c.ipynb, d.ipynb)" in p
               for p in problems)
    with pytest.raises(ToxlibError, match="not one clean run"):
        check_one_clean_run(books)


def _git(repo, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()


def test_recorded_commit_must_carry_the_library_of_head(tmp_path):
    repo = tmp_path / "repo"
    (repo / "toxlib").mkdir(parents=True)
    (repo / "toxlib" / "__init__.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "toxlib")
    _git(repo, "commit", "-q", "-m", "library")
    built = _git(repo, "rev-parse", "--short=12", "HEAD")
    (repo / "notes.md").write_text("results committed after the build\n")
    _git(repo, "add", "notes.md")
    _git(repo, "commit", "-q", "-m", "results")
    books = [_executed(tmp_path, "a.ipynb", built), _executed(tmp_path, "b.ipynb", built)]
    assert chapter_run_problems(books, repo) == []  # a later commit that leaves toxlib alone is fine
    (repo / "toxlib" / "__init__.py").write_text("x = 2\n")
    _git(repo, "commit", "-q", "-am", "library changed after the build")
    assert chapter_run_problems(books, repo) == [f"the library changed since {built}: 1 file changed, 1 insertion(+), "
                                            "1 deletion(-)"]
    assert "is not in" in chapter_run_problems([_executed(tmp_path, "c.ipynb", "0000000000ff")], repo)[0]


def test_committed_notebooks_are_one_clean_run():
    """The published book: every notebook in _toc.yml was executed by one default build at one clean commit whose
    library is HEAD's (rebuild with python -m toxlib book at a clean commit when this fails)."""
    check_one_clean_run(toc_notebooks(ROOT), repo=ROOT)
