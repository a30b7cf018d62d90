"""The book's build configuration: the repository the buttons link to (toxlib.book_build.repository), and each page
loading every script once (toxlib.book_build.sphinx_book)."""

from __future__ import annotations

import yaml

from toxlib.book_build import repository, sphinx_book
from toxlib.store import paths

ROOT = paths.project_root()


def test_a_remote_becomes_the_repositorys_web_address():
    for remote in ("git@github.com:owner/repo.git", "https://github.com/owner/repo.git", "https://github.com/owner/repo",
                   "ssh://git@github.com/owner/repo.git", "https://user@github.com/owner/repo/"):
        assert repository.https_address(remote) == "https://github.com/owner/repo", remote
    assert repository.https_address("/srv/git/repo.git") is None


def test_the_address_comes_from_the_environment_first(monkeypatch, tmp_path):
    monkeypatch.setenv("TOXLIB_REPOSITORY_URL", "https://example.org/a/b/")
    assert repository.repository_url(tmp_path) == "https://example.org/a/b"
    monkeypatch.delenv("TOXLIB_REPOSITORY_URL")
    assert repository.repository_url(tmp_path) is None  # not a git checkout, no remote


def test_the_staged_config_gets_the_address_or_loses_the_buttons_that_need_one(tmp_path):
    config = tmp_path / "_config.yml"
    config.write_text((ROOT / "_config.yml").read_text())
    original = yaml.safe_load(config.read_text())
    assert original["launch_buttons"]["colab_url"] and original["launch_buttons"]["binderhub_url"]
    assert original["html"]["use_repository_button"] and original["html"]["use_issues_button"]
    assert repository.configure(config, "https://github.com/o/r", "main")
    staged = yaml.safe_load(config.read_text())
    assert staged["repository"] == {"url": "https://github.com/o/r", "branch": "main"}
    assert staged["launch_buttons"] == original["launch_buttons"]
    config.write_text((ROOT / "_config.yml").read_text())
    assert not repository.configure(config, None)
    staged = yaml.safe_load(config.read_text())
    assert "repository" not in staged and "launch_buttons" not in staged
    assert not staged["html"]["use_repository_button"] and not staged["html"]["use_issues_button"]
    assert staged["sphinx"] == original["sphinx"]  # everything else as written


class _Script(str):
    def __new__(cls, filename, **attributes):
        made = super().__new__(cls, filename or "")
        made.filename, made.attributes = filename, attributes
        return made


def test_each_script_reaches_a_page_once():
    config = _Script(None, body='const THEBE_JS_URL = "x"')
    scripts = [_Script("a.js"), config, _Script("b.js"), _Script("", body='const THEBE_JS_URL = "x"'),
               _Script("a.js"), _Script(None, body="other")]
    context = {"script_files": scripts}
    sphinx_book.one_copy_each(None, "page", "page.html", context, None)
    assert [(s.filename or "", s.attributes.get("body")) for s in context["script_files"]] == [
        ("a.js", None), ("", 'const THEBE_JS_URL = "x"'), ("b.js", None), ("", "other")]
    assert "toxlib.book_build.sphinx_book" in yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"][
        "extra_extensions"]


def test_the_command_fills_a_checkouts_config_from_its_origin(tmp_path, monkeypatch, capsys):
    import subprocess

    monkeypatch.delenv("TOXLIB_REPOSITORY_URL", raising=False)
    monkeypatch.delenv("TOXLIB_REPOSITORY_BRANCH", raising=False)
    subprocess.run(["git", "init", "-q", "-b", "pages", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "git@github.com:fork/book.git"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "start"], check=True)
    config = tmp_path / "_config.yml"
    config.write_text((ROOT / "_config.yml").read_text())
    assert repository.main([str(config)]) == 0
    written = yaml.safe_load(config.read_text())
    assert written["repository"] == {"url": "https://github.com/fork/book", "branch": "pages"}
    assert "https://github.com/fork/book" in capsys.readouterr().out


def test_pages_that_read_the_chapters_claims_run_after_every_chapter():
    """The report card page sets its rows beside the book's claims and the scorecard gathers them: both run after
    the chapters that write those claims, or a build would show the claims of the build before."""
    from toxlib.book_build.book import execution_order, toc_notebooks

    order = [nb.stem for nb in execution_order(toc_notebooks(paths.project_root()))]
    reading = [nb.stem for nb in toc_notebooks(paths.project_root())]
    assert reading.index("your_model") < reading.index("sass")  # the table of contents puts it first
    assert order[-2:] == ["your_model", "scorecard"] and sorted(order) == sorted(reading)
