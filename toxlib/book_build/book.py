"""Build the book: execute the notebooks listed in _toc.yml with papermill, then run Jupyter Book 1 (execution off).

A full build executes the notebooks in place (their outputs are the committed "last full run") and writes
results under data/results/; the HTML is built from a copy of the sources in _build/src. A smoke build
(``profile="smoke"``, for CI) copies the book sources into a staging directory, runs each notebook with its tiny
smoke parameters there, with results written inside the staging directory, so the committed notebooks and results are
never overwritten by a smoke run. A paper build (``profile="paper"``: every chapter with its paper profile, see
``toxlib.book_build.runner``) is a real run: it executes in place and writes data/results/, like a default build.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from toxlib.book_build import build_stamp, repository
from toxlib.book_build.kernels import KernelPrestart
from toxlib.book_build.runner import PROFILES, checkout_env, governing_chapter, run_notebook
from toxlib.book_build.toc import write_toc
from toxlib.common.errors import BookBuildError, ParameterError, UnknownNameError
from toxlib.common.provenance import uncommitted_files
from toxlib.store import paths

#: what ``stage_sources`` copies; data/record/audits.csv is the audit history the methods page shows as a table
BOOK_SOURCES = ("_config.yml", "_toc.yml", "references.bib", "_static", "book", "notebooks", "data/record/audits.csv")


def toc_files(root: Path) -> list[str]:
    """The ``file:`` entries of root/_toc.yml in reading order (root first), without extensions."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    found = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    return found


def toc_notebooks(root: Path) -> list[Path]:
    """The notebooks (.ipynb) among the table of contents' files, in reading order."""
    return [root / f"{f}.ipynb" for f in toc_files(root) if (root / f"{f}.ipynb").exists()]


def is_aggregate(notebook: Path) -> bool:
    """Whether the notebook gathers other chapters' results (its declaration's ``aggregate``: the scorecard, and the
    report card page, whose rows sit beside the book's claims)."""
    return governing_chapter(notebook).aggregate


def execution_order(notebooks: list[Path]) -> list[Path]:
    """``notebooks`` in the order a build executes them: the chapters in their given (reading) order, then the
    aggregating pages (``is_aggregate``) in theirs."""
    return [nb for nb in notebooks if not is_aggregate(nb)] + [nb for nb in notebooks if is_aggregate(nb)]


def stage_sources(root: Path, staging: Path) -> Path:
    """Copy the book's sources (not data or results, but the record's audit history) into ``staging``, at the
    same relative paths, and return it. The staged _config.yml gets the repository's address
    (``toxlib.book_build.repository``: ``TOXLIB_REPOSITORY_URL`` or the checkout's ``origin``) for the launch,
    repository and issue buttons, or those buttons off when there is none."""
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    for name in BOOK_SOURCES:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, staging / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        elif src.exists():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, staging / name)
    if (staging / "_config.yml").exists():
        url = repository.repository_url(root)
        if not repository.configure(staging / "_config.yml", url, repository.repository_branch(root)):
            print("[toxlib] no repository address (set TOXLIB_REPOSITORY_URL, or a git remote 'origin'): the book is "
                  "built without its launch, repository and issue buttons", flush=True)
    return staging


def build_html(source: Path, output: Path, results: Path | None = None) -> Path:
    """Run ``jupyter-book build`` on ``source`` into output/_build/html (written afresh when a file of the book's
    ``_static`` changed since it was built: Sphinx writes nothing, static files included, when no page changed);
    warnings (broken references) fail it. The book's Sphinx extension (``toxlib.book_build.sphinx_book``) copies
    the tables' CSVs under ``results`` (default: source/data/results) to html/data/results/, where the tables'
    download links point, as it does for the publishing workflow's build."""
    cmd = [
        sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
        "build", str(source), "--path-output", str(output), "--builder", "html", "-W", "-n", "--keep-going",
    ]
    env = {**os.environ, **({"TOXLIB_RESULTS_DIR": str(results)} if results is not None else {})}
    html = output / "_build" / "html"
    if _static_changed(source / "_static", html / "_static"):
        shutil.rmtree(html, ignore_errors=True)  # Sphinx copies static files only when it writes pages
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-60:])
        raise BookBuildError(f"jupyter-book build failed (exit {done.returncode}):\n{tail}")
    return output / "_build" / "html"


def _static_changed(sources: Path, built: Path) -> bool:
    """Whether ``built`` exists and a file under ``sources`` is missing from it or differs from its copy there."""
    if not (sources.is_dir() and built.is_dir()):
        return False
    for source in (p for p in sources.rglob("*") if p.is_file()):
        copy = built / source.relative_to(sources)
        if not copy.is_file() or not filecmp.cmp(source, copy, shallow=False):
            return True
    return False


def build_book(
    only: list[str] | None = None,
    workdir: str | Path | None = None,
    execute: bool = True,
    profile: str | None = None,
    force: bool = False,
) -> dict:
    """Execute the table of contents' notebooks and build the HTML.

    A default build of every chapter in the checkout executes nothing when nothing that decides or shows the numbers
    changed since the last one (``toxlib.book_build.build_stamp``); ``force`` executes every chapter anyway.
    only: notebook stems to execute (others keep their committed outputs); unknown stems raise UnknownNameError.
    profile: "default", "smoke" or "paper" (each notebook's profile of that name; an aggregating notebook such as
    the scorecard runs with its defaults when it declares none); "smoke" runs in a staging copy under ``workdir``
    (default <project>/_build/smoke). Every notebook's profile is
    checked before the first one runs.
    Returns {"html": path of the HTML folder, "runs": [run record per executed notebook], "wall_s": seconds}.
    """
    started = time.perf_counter()
    root = paths.project_root()
    if profile not in (None, *PROFILES):
        raise UnknownNameError(f"unknown profile {profile!r}; profiles are {', '.join(PROFILES)}")
    profile = profile or "default"
    smoke = profile == "smoke"
    if write_toc(root):  # the chapters' declarations decide what the book holds (toxlib.book_build.toc)
        print("[toxlib] wrote _toc.yml from the chapters' declarations")
    if smoke:
        work = Path(workdir) if workdir else root / "_build" / "smoke"
        source = stage_sources(root, work / "src")
        env = {"TOXLIB_RESULTS_DIR": str(source / "data" / "results")}
    else:
        work = Path(workdir) if workdir else root
        source, env = root, {}
    notebooks = toc_notebooks(source)
    stems = {nb.stem: nb for nb in notebooks}
    if only:
        unknown = sorted(set(only) - set(stems))
        if unknown:
            raise UnknownNameError(f"unknown notebook(s) {', '.join(unknown)}; the book has: {', '.join(stems)}")
        # Aggregating notebooks (the scorecard) re-run whenever any chapter does, so they never go stale.
        notebooks = [nb for s, nb in stems.items() if s in set(only) or is_aggregate(nb)]
    whole = execute and profile == "default" and not only and work == root  # every chapter, default, in place
    if whole and not force and build_stamp.unchanged_since(root):
        print(f"[toxlib] nothing that decides or shows the numbers changed since this checkout's last build "
              f"({build_stamp.STAMP}): building the HTML from the notebooks as they are (--force executes every "
              "chapter)", flush=True)
        execute = False
    elif whole:
        build_stamp.forget(root)  # an interrupted build leaves no stamp
    runs = []
    changed = uncommitted_files(root)
    if execute and changed:
        print(f"[toxlib] uncommitted changes to what decides the numbers ({len(changed)} file(s): "
              f"{', '.join(changed[:6])}{' ...' if len(changed) > 6 else ''}): every run record will say +dirty "
              "and name them; commit them (or restore them) for a publishable build", flush=True)
    # pages that gather the chapters' results (the scorecard, the report card beside the book's claims) run after
    # every chapter, so one build never shows the claims of the build before
    notebooks = execution_order(notebooks)
    if execute:
        chosen = {nb: _book_profile(nb, profile) for nb in notebooks}  # a missing profile fails before any run
        # each notebook's kernel starts (and imports) while the one before it runs: toxlib.book_build.kernels
        with KernelPrestart(notebooks, checkout_env(env)) as kernels:
            for nb in notebooks:
                shown = "" if chosen[nb] == "default" else f" ({chosen[nb]} profile)"
                print(f"[toxlib] executing {nb.relative_to(source)}{shown}", flush=True)
                # in place (the staging copy when smoke)
                runs.append(run_notebook(nb, output=nb, env=env, profile=chosen[nb], kernel=kernels.take(nb)))
        if whole:
            build_stamp.write_stamp(root)
    print("[toxlib] building HTML with jupyter-book", flush=True)
    # Build from a clean copy of the sources, so nothing else in the checkout (caches, READMEs) is parsed.
    staged = source if smoke else stage_sources(root, work / "_build" / "src")
    html = build_html(staged, work, Path(env["TOXLIB_RESULTS_DIR"]) if smoke else paths.results_dir())
    return {"html": html, "runs": runs, "wall_s": time.perf_counter() - started}


def _book_profile(notebook: Path, profile: str) -> str:
    """The profile ``notebook`` runs with in a ``profile`` build: that profile, or the defaults for an aggregating
    notebook that does not declare it; ParameterError for a chapter that does not."""
    if profile in ("default", "smoke"):
        return profile
    try:
        governing_chapter(notebook).profile(profile)
    except ParameterError:
        if is_aggregate(notebook):
            return "default"
        raise
    return profile
