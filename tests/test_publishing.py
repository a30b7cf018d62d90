"""Publishing: the workflows' syntax, licence and citation files, the bibliography, and what committed notebooks show
(no warning, absolute path of the machine or third-party loading bar in any output; tables whose rows all have as
many cells as their header)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

from toxlib.book_build.book import toc_files, toc_notebooks
from toxlib.store import paths

ROOT = paths.project_root()
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
NOTEBOOKS = toc_notebooks(ROOT)
PAGES = [ROOT / f"{page}.md" for page in toc_files(ROOT) if (ROOT / f"{page}.md").exists()]

ABSOLUTE_PATH = re.compile(r"(?<![\w.])(/root|/work|/home|/Users|[A-Za-z]:\\\\)|site-packages|\.venv\b")
WARNING = re.compile(r"\b\w*Warning\b[:(]|^WARNING\b|\bwarnings\.warn\b", re.MULTILINE)
LOADING_BAR = re.compile(r"\|[█▏▎▍▌▋▊▉ ]{3,}\||\d+it/s\]|\?it/s\]|Loading weights|Loading checkpoint shards"
                         r"|Fetching \d+ files")


def _check_jsonschema(schema: str, files: list[Path]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True)


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _pin(requirement: str) -> tuple[str, str]:
    name = re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)
    return name.lower().replace("_", "-"), requirement[len(name):].replace(" ", "")


# ---------------------------------------------------------------- workflows


def test_workflows_pass_the_github_workflow_schema():
    assert {p.name for p in WORKFLOWS} >= {"publish.yml", "tests.yml"}
    done = _check_jsonschema("vendor.github-workflows", WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_can_fail(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("name: broken\non: push\njobs:\n  build:\n    steps:\n      - run: true\n")  # no runs-on
    assert _check_jsonschema("vendor.github-workflows", [broken]).returncode != 0


def _steps(workflow: Path) -> list[dict]:
    jobs = yaml.safe_load(workflow.read_text())["jobs"]
    return [step for job in jobs.values() for step in job.get("steps", [])]


def test_publish_workflow_builds_committed_notebooks_without_executing_and_deploys_to_pages():
    workflow = ROOT / ".github" / "workflows" / "publish.yml"
    steps = _steps(workflow)
    runs = " ".join(step.get("run", "") for step in steps)
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    assert "jupyter-book build ." in runs and "-W" in runs
    assert "toxlib run" not in runs and "toxlib book" not in runs and "papermill" not in runs
    assert "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"
    # the tooling it installs is pinned as pyproject.toml pins it
    project = _pyproject()["project"]
    pins = dict(_pin(r) for r in project["dependencies"] + project["optional-dependencies"]["book"])
    installed = dict(_pin(r) for r in re.findall(r'"([^"]+)"', runs))
    assert installed, runs
    for name, spec in installed.items():
        assert pins.get(name) == spec, f"{name}{spec} in publish.yml, {name}{pins.get(name)} in pyproject.toml"
    build = next(step for step in steps if "jupyter-book build" in step.get("run", ""))
    for extension in config["sphinx"]["extra_extensions"]:
        if extension.startswith("toxlib."):  # the book's own extension, imported from the checkout
            assert (ROOT / (extension.replace(".", "/") + ".py")).is_file(), extension
            assert build.get("env", {}).get("PYTHONPATH") == "${{ github.workspace }}", \
                f"the build step cannot import {extension}: it needs PYTHONPATH set to the checkout"
        else:
            assert _pin(extension)[0] in installed, f"publish.yml does not install the extension {extension}"
    assert "python -m toxlib.book_build.repository _config.yml" in runs  # the buttons link to the published repository


def test_the_published_site_carries_every_csv_its_pages_link(tmp_path, monkeypatch):
    """The workflow's plain ``jupyter-book build .`` loads the book's Sphinx extension, which copies the tables
    into the HTML (as for ``toxlib book``): every CSV link of the committed pages answers on the published site."""
    from toxlib.book_build import sphinx_book

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "toxlib.book_build.sphinx_book" in config["sphinx"]["extra_extensions"]
    monkeypatch.delenv("TOXLIB_RESULTS_DIR", raising=False)  # the workflow sets none: the checkout's results
    assert sphinx_book.results_folder(ROOT) == ROOT / "data" / "results"
    monkeypatch.setenv("TOXLIB_RESULTS_DIR", str(tmp_path / "smoke"))  # a smoke build's own
    assert sphinx_book.results_folder(ROOT) == tmp_path / "smoke"
    html = tmp_path / "html"
    (html / "data" / "results" / "stale").mkdir(parents=True)  # an earlier build's leftovers go
    copied = sphinx_book.copy_tables(ROOT / "data" / "results", html)
    shipped = {p.relative_to(html / "data" / "results").as_posix() for p in html.rglob("*") if p.is_file()}
    linked = {link for nb in NOTEBOOKS for link in re.findall(r'href=\\?"\.\./data/results/([^"\\]+)\\?"',
                                                                   nb.read_text())}
    assert copied == len(shipped) and linked and linked <= shipped, sorted(linked - shipped)
    assert not (html / "data" / "results" / "stale").exists() and not any(p.endswith(".png") for p in shipped)


def test_pull_request_workflow_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^(bash scripts/run_tests\.sh)\b", readme, re.MULTILINE).group(1)
    workflow = ROOT / ".github" / "workflows" / "tests.yml"
    assert "pull_request" in yaml.safe_load(workflow.read_text())[True]  # YAML reads the key `on` as True
    assert command in [step.get("run", "").strip() for step in _steps(workflow)]


# ---------------------------------------------------------------- licence, citation, bibliography


def test_licence_is_declared_as_apache_2_and_named_on_the_cite_page():
    # the licence text itself is not carried: it is byte-identical to a mirrored data file
    assert _pyproject()["project"]["license"]["text"] == "Apache-2.0"
    assert "https://www.apache.org/licenses/LICENSE-2.0" in (ROOT / "book" / "cite.md").read_text()


def test_citation_file_is_valid_and_matches_the_package():
    done = _check_jsonschema("vendor.citation-file-format", [ROOT / "CITATION.cff"])
    assert done.returncode == 0, done.stdout + done.stderr
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["version"] == _pyproject()["project"]["version"]
    assert cff["license"] == "Apache-2.0"
    assert len(cff["references"]) == 4


def _bib_keys() -> dict[str, str]:
    """key -> entry text of references.bib."""
    text = (ROOT / "references.bib").read_text()
    return {m.group(1): m.group(0) for m in re.finditer(r"@\w+\{([^,\s]+),.*?\n\}", text, re.DOTALL)}


def _cited_keys(text: str) -> set[str]:
    return {key.strip() for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", text) for key in group.split(",")}


def _all_prose() -> dict[str, str]:
    prose = {str(p.relative_to(ROOT)): p.read_text() for p in PAGES}
    for nb_path in NOTEBOOKS:
        nb = nbformat.read(nb_path, as_version=4)
        prose[str(nb_path.relative_to(ROOT))] = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return prose


def test_every_bibliography_entry_is_complete():
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "references.bib")).entries
    assert len(entries) >= 30
    for key, entry in entries.items():
        assert entry.persons.get("author"), f"{key}: no author"
        assert entry.fields.get("title") and re.fullmatch(r"\d{4}", entry.fields.get("year", "")), key
        venue = ("journal", "booktitle", "howpublished", "eprint", "url", "doi")
        assert any(entry.fields.get(f) for f in venue), f"{key}: no venue, link or identifier"


def test_every_cited_key_is_in_references_bib_and_the_four_papers_are_cited():
    keys = _bib_keys()
    cited = set()
    for name, text in _all_prose().items():
        missing = _cited_keys(text) - set(keys)
        assert not missing, f"{name} cites {sorted(missing)}, not in references.bib"
        cited |= _cited_keys(text)
    four = {"gehman2020realtoxicityprompts", "piedras2022critical", "morabito2023debiasing", "hosseini2023empirical"}
    assert four <= cited


def test_config_serves_mathjax_with_the_book_and_leaves_the_repository_address_to_the_build():
    """The committed _config.yml names no repository (a fork publishes links to itself): the build writes the
    address in (toxlib.book_build.repository), or switches the buttons off where there is none."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "sphinx-mathjax-offline" in config["sphinx"]["extra_extensions"]
    assert "mathjax_path" not in config["sphinx"].get("config", {}), "mathjax_path would override the local copy"
    assert not config.get("repository", {}).get("url")
    assert config["html"]["use_repository_button"] is True and config["html"]["use_issues_button"] is True


# ---------------------------------------------------------------- committed outputs


def _output_text(output) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    data = output.get("data", {})
    return "\n".join(str(data.get(kind, "")) for kind in ("text/plain", "text/html", "text/markdown"))


def scan_notebook(nb) -> list[str]:
    """Problems in an executed notebook's outputs and metadata: warnings, absolute paths, third-party loading bars,
    absolute papermill paths. Returns one line per problem."""
    problems = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            text = _output_text(output)
            for name, pattern in (("warning", WARNING), ("absolute path", ABSOLUTE_PATH), ("loading bar", LOADING_BAR)):
                found = pattern.search(text)
                if found:
                    start = max(found.start() - 40, 0)
                    problems.append(f"cell {index}: {name}: {text[start:found.end() + 40]!r}")
    papermill = nb.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):
        value = str(papermill.get(key) or "")
        if value.startswith("/") or re.match(r"[A-Za-z]:\\", value):
            problems.append(f"metadata papermill.{key} is absolute: {value}")
    return problems


def test_the_scan_finds_what_it_looks_for():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x")]
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="/home/me/.venv/lib/python3.11/site-packages/tqdm/auto.py:"
                               "21: TqdmWarning: IProgress not found.\n"),
        nbformat.v4.new_output("stream", name="stderr", text="Loading weights: 100%|██████████| 272/272 [00:00<00:00]"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "PosixPath('/work/x/figure.png')"}),
    ]
    nb.metadata["papermill"] = {"input_path": "/work/x/notebooks/a.ipynb", "output_path": "notebooks/a.ipynb"}
    problems = scan_notebook(nb)
    kinds = " ".join(problems)
    assert "warning" in kinds and "absolute path" in kinds and "loading bar" in kinds
    assert "papermill.input_path" in kinds and "papermill.output_path" not in kinds
    clean = nbformat.v4.new_notebook()
    clean.cells = [nbformat.v4.new_code_cell("x")]
    clean.cells[0].outputs = [
        nbformat.v4.new_output("display_data",
                               data={"text/plain": "generate smollm2-135m: 8/8 prompt [00:03, 2.6prompt/s]"}),
        nbformat.v4.new_output("execute_result", data={"text/plain": "ShownPath('data/results/sass/table5_bars.png')"}),
    ]
    assert scan_notebook(clean) == []


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_outputs_have_no_warning_absolute_path_or_loading_bar(nb_path):
    problems = scan_notebook(nbformat.read(nb_path, as_version=4))
    assert not problems, f"{nb_path.name} (re-run it: python -m toxlib run ...):\n" + "\n".join(problems[:20])


# ---------------------------------------------------------------- Markdown tables

DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _cells(row: str) -> list[str]:
    """Cells of a GFM table row: split on every '|' not escaped by a backslash, code spans included (as GFM does:
    that is why `<|toxic|>` inside backticks breaks a row)."""
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return re.split(r"(?<!\\)\|", row)


def table_problems(markdown: str) -> list[str]:
    """Rows whose cell count differs from their table's header: one line per row."""
    problems, lines, in_fence = [], markdown.splitlines(), False
    header_cells = None
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence, header_cells = not in_fence, None
            continue
        if in_fence:
            continue
        if header_cells is None:
            if i + 1 < len(lines) and "|" in line and DELIMITER_ROW.match(lines[i + 1]):
                header_cells = len(_cells(line))
            continue
        if DELIMITER_ROW.match(line):
            continue
        if "|" not in line or not line.strip():
            header_cells = None
            continue
        n = len(_cells(line))
        if n != header_cells:
            problems.append(f"line {i + 1}: {n} cells, header has {header_cells}: {line[:90]}")
    return problems


def test_table_check_finds_a_pipe_inside_inline_code():
    good = "| a | b |\n|---|---|\n| `x \\| y` | 2 |\n"
    bad = "| a | b |\n|---|---|\n| `<|toxic|>` | 2 |\n| only one |\n"
    assert table_problems(good) == []
    assert len(table_problems(bad)) == 2


@pytest.mark.parametrize("name", sorted(_all_prose()), ids=lambda n: Path(n).stem)
def test_every_table_row_has_as_many_cells_as_its_header(name):
    problems = table_problems(_all_prose()[name])
    assert not problems, f"{name}:\n" + "\n".join(problems)


# ---------------------------------------------------------------- exercises


@pytest.mark.parametrize("nb_path", [p for p in NOTEBOOKS if p.parent.name == "notebooks"], ids=lambda p: p.stem)
def test_every_chapter_ends_with_exercises_each_with_its_solution(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    exercises = re.findall(r"^`{3,}\{exercise\}[^\n]*\n:label: (\S+)", text, re.MULTILINE)
    solutions = re.findall(r"^`{3,}\{solution\} (\S+)\n:class: dropdown", text, re.MULTILINE)
    assert 2 <= len(exercises) <= 4, f"{nb_path.name}: {len(exercises)} exercises"
    assert sorted(exercises) == sorted(solutions), f"{nb_path.name}: exercises {exercises}, solutions {solutions}"
    last_exercise = max(i for i, c in enumerate(nb.cells) if "{exercise}" in c.source)
    # only prose (the run record is a markdown cell) may follow them
    assert all(c.cell_type == "markdown" for c in nb.cells[last_exercise:]), f"{nb_path.name}: exercises not at the end"


def test_exercise_labels_are_unique_across_the_book():
    labels = re.findall(r"^:label: (\S+)", "\n".join(_all_prose().values()), re.MULTILINE)
    assert len(labels) == len(set(labels))
