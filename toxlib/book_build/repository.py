"""The repository the book links to: its launch buttons (Colab, Binder), repository and issue-tracker buttons are
configured in _config.yml; only the repository's address is filled in when the book is built, so that a fork or a
mirror publishes links to itself.

``repository_url(root)`` is ``TOXLIB_REPOSITORY_URL`` when set, else the checkout's ``origin`` remote as an https
address, else None. ``configure(config_path, url, branch)`` writes it into a staged _config.yml; with no address it
switches the buttons that need one off, so the book still builds (and says so).

``python -m toxlib.book_build.repository [_config.yml]`` does both for a checkout's own _config.yml (the publishing
workflow's step; the file is rewritten without its comments).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from toxlib.common import settings

#: _config.yml's html switches that need a repository address
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button", "use_edit_page_button")


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def https_address(remote: str) -> str | None:
    """A git remote as the https address of its web page: ``git@github.com:owner/repo.git`` and
    ``https://github.com/owner/repo.git`` both give ``https://github.com/owner/repo``; None for a local path."""
    remote = remote.strip()
    scp = re.fullmatch(r"(?:[\w.-]+@)?([\w.-]+):(?!//)([\w./-]+?)(?:\.git)?/?", remote)
    if scp and "/" in scp.group(2):
        return f"https://{scp.group(1)}/{scp.group(2)}"
    web = re.fullmatch(r"(?:https?|ssh|git)://(?:[^@/]+@)?([\w.-]+)(?::\d+)?/([\w./-]+?)(?:\.git)?/?", remote)
    return f"https://{web.group(1)}/{web.group(2)}" if web else None


def repository_url(root: Path) -> str | None:
    """The book's repository address: ``TOXLIB_REPOSITORY_URL``, else the ``origin`` remote of the checkout at
    ``root`` (as https), else None."""
    given = settings.text("TOXLIB_REPOSITORY_URL", "")
    if given:
        return given.rstrip("/")
    remote = _git(root, "remote", "get-url", "origin")
    return https_address(remote) if remote else None


def repository_branch(root: Path) -> str:
    """The branch the launch buttons open: ``TOXLIB_REPOSITORY_BRANCH``, else the checkout's, else "main"."""
    given = settings.text("TOXLIB_REPOSITORY_BRANCH", "")
    branch = given or _git(root, "rev-parse", "--abbrev-ref", "HEAD")
    return branch if branch and branch != "HEAD" else "main"


def configure(config_path: Path, url: str | None, branch: str = "main") -> bool:
    """Write ``url`` and ``branch`` into the _config.yml at ``config_path`` (a staged copy: the file is rewritten
    without its comments). With ``url`` None the repository buttons and the launch buttons are switched off. Returns
    whether the buttons are on."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    html = config.setdefault("html", {})
    if url:
        config["repository"] = {**config.get("repository", {}), "url": url, "branch": branch}
    else:
        config.pop("repository", None)
        config.pop("launch_buttons", None)
        for switch in REPOSITORY_BUTTONS:
            if switch in html:
                html[switch] = False
    config_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return bool(url)


def main(argv: list[str] | None = None) -> int:
    """Fill the repository's address into the _config.yml named in ``argv`` (default ./_config.yml), from the
    checkout around it; print what was written. Returns 0."""
    import sys

    config_path = Path((argv if argv is not None else sys.argv[1:] or ["_config.yml"])[0]).resolve()
    root = config_path.parent
    url = repository_url(root)
    on = configure(config_path, url, repository_branch(root))
    print(f"{config_path.name}: repository {url} ({repository_branch(root)})" if on else
          f"{config_path.name}: no repository address (set TOXLIB_REPOSITORY_URL or a git remote 'origin'): the "
          "launch, repository and issue buttons are left out")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
