"""The whole book in smoke mode: every notebook executes, results follow the contract, the HTML builds, and a
real browser (Debian's chromium driven by Playwright) finds no missing image, failed local request, request to another
host (MathJax is served with the book), empty table, table row with fewer cells than its header, or chapter without its
notebook download button."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import threading
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from toxlib.book_build.book import build_book, execution_order, toc_files, toc_notebooks
from toxlib.common.errors import BookBuildError
from toxlib.publish import claims as results_contract
from toxlib.store import paths

ROOT = paths.project_root()
pytestmark = pytest.mark.slow


#: refreshed by the readers' browser test (tests/book_build/test_book_for_readers.py) for a reviewer, maybe while the
#: smoke book builds on another pytest worker; no build writes there
SCREENS = ROOT / "book" / "_static" / "screens"


def _tree_digest(*folders: Path) -> dict[str, str]:
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders if folder.exists() for p in sorted(folder.rglob("*"))
            if p.is_file() and SCREENS not in p.parents}


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory):
    before = _tree_digest(ROOT / "notebooks", ROOT / "book", ROOT / "data" / "results")
    work = tmp_path_factory.mktemp("smoke-book")
    # A cache of its own, removed once the book is built: the Self-Debiasing chapter's three adapted models (1.5 GB
    # at float32) would otherwise sit in the worker's session cache to the end of the run, and a CI machine's disk
    # has run out with them there.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOXLIB_CACHE_DIR", str(work / "cache"))
        try:
            result = build_book(profile="smoke", workdir=work)
        finally:
            shutil.rmtree(work / "cache", ignore_errors=True)
    after = _tree_digest(ROOT / "notebooks", ROOT / "book", ROOT / "data" / "results")
    return {**result, "work": work, "source": work / "src", "committed_changed": before != after}


def test_every_notebook_runs_and_records_its_run(smoke_book):
    executed = [r["notebook"] for r in smoke_book["runs"]]
    assert executed == [p.name for p in execution_order(toc_notebooks(ROOT))]  # the aggregating pages last
    for nb_path in toc_notebooks(smoke_book["source"]):
        nb = nbformat.read(nb_path, as_version=4)
        assert nb.metadata["toxlib"]["last_run"]["smoke"] is True
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.output_type == "error"]
        assert not errors, nb_path.name


def test_smoke_run_leaves_committed_notebooks_and_results_alone(smoke_book):
    assert not smoke_book["committed_changed"]


def test_results_contract(smoke_book):
    results = smoke_book["source"] / "data" / "results"
    for stem in ("datasets", "sass"):
        claims = pd.read_csv(results / stem / "claims.csv")
        assert claims.columns.tolist() == results_contract.CLAIM_COLUMNS
        assert len(claims) >= 5
    t3 = pd.read_csv(results / "sass" / "table3.csv").set_index("system").dropna(subset=["f1_paper"])
    assert len(t3) == 4  # the paper's systems; the trivial baselines' rows have no printed values
    assert ((t3[["precision", "recall", "f1"]] - t3[["precision_paper", "recall_paper", "f1_paper"]].values)
            .abs() <= 0.01).all().all()
    scorecard = pd.read_csv(results / "scorecard" / "all_claims.csv")
    assert {"datasets", "sass"} <= set(scorecard["chapter"])
    assert (results / "datasets" / "toxigen_groups.png").stat().st_size > 1000


def test_html_has_every_page(smoke_book):
    html = smoke_book["html"]
    for page in toc_files(ROOT):
        assert (html / f"{page}.html").exists(), page
    assert (html / "index.html").exists()


def test_the_methods_page_shows_the_records_audit_history(smoke_book):
    page = (smoke_book["html"] / "book" / "methods.html").read_text()
    history = pd.read_csv(ROOT / "data" / "record" / "audits.csv", dtype=str)
    assert "identical share" in page and len(history) and all(commit in page for commit in history["commit"])


@pytest.fixture(scope="session")
def served_book(smoke_book):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(smoke_book["html"]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _chromium() -> str:
    found = os.environ.get("TOXLIB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("Debian's chromium is needed for the browser check: apt-get install chromium "
                    "(scripts/run_tests.sh does it when run as root), or set TOXLIB_CHROMIUM")
    return found


def test_every_page_renders_in_a_real_browser(smoke_book, served_book):
    from playwright.sync_api import sync_playwright

    pages = toc_files(ROOT)
    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 900})  # the reader's window
        failed: list[str] = []
        elsewhere: list[str] = []
        # Everything must come from the book itself (MathJax included): a request to another host is a failure.
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(served_book)
                   else (elsewhere.append(route.request.url), route.abort()))
        # a request the next navigation cancels (the browser's icon request, sent after "load") is not the book's
        # fault: missing files are caught by their status below and by the images check
        page.on("requestfailed", lambda r: failed.append(f"{r.url} ({r.failure})")
                if r.url.startswith(served_book) and r.failure != "net::ERR_ABORTED" else None)
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
                if r.status >= 400 and r.url.startswith(served_book) else None)
        page.goto(f"{served_book}/index.html")
        page.wait_for_url(f"**/{pages[0]}.html")  # index.html redirects to the root page
        for name in pages:
            failed.clear()
            page.goto(f"{served_book}/{name}.html", wait_until="load")
            broken = page.eval_on_selector_all(
                "img", "imgs => imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
            empty = page.eval_on_selector_all(
                "table", "ts => ts.filter(t => t.querySelectorAll('tbody tr td, tbody tr th').length === 0)"
                ".map(t => (t.querySelector('caption') || t).textContent.slice(0, 80))")
            # a row with fewer cells than its table's header (colspans counted) lost cells, e.g. to a '|' inside code
            short_rows = page.eval_on_selector_all(
                "table", """ts => ts.flatMap(t => {
                    const width = r => [...r.cells].reduce((n, c) => n + (c.colSpan || 1), 0);
                    const head = t.tHead && t.tHead.rows.length ? width(t.tHead.rows[t.tHead.rows.length - 1]) : 0;
                    return [...t.tBodies].flatMap(b => [...b.rows]).filter(r => head && width(r) < head)
                        .map(r => r.textContent.trim().slice(0, 80));
                })""")
            # at 1300 pixels the article takes the page's width, and a table wider than it scrolls in its own box
            column, cut = page.evaluate("""() => {
                const article = document.querySelector('article');
                if (!article) return [0, []];
                const right = article.getBoundingClientRect().right;
                const scrolls = e => { for (let n = e; n && n !== article; n = n.parentElement) {
                    if (['auto', 'scroll'].includes(getComputedStyle(n).overflowX)) return true; } return false; };
                return [article.getBoundingClientRect().width, [...article.querySelectorAll('table')]
                    .filter(t => t.getBoundingClientRect().right > right + 1 && !scrolls(t))
                    .map(t => (t.querySelector('caption') || t).textContent.trim().slice(0, 80))];
            }""")
            if name.startswith("notebooks/") and column < 1000:
                problems.append(f"{name}: the article is {column:.0f} px wide in a 1300-px window")
            problems += [f"{name}: table runs past the column without a scroll box {c!r}" for c in cut]
            n_images = page.eval_on_selector_all("img", "imgs => imgs.length")
            if name.startswith("notebooks/"):
                notebook_links = page.eval_on_selector_all(
                    "a[href$='.ipynb']", "as => as.map(a => a.href).filter(h => h.includes('/_sources/'))")
                if not notebook_links:
                    problems.append(f"{name}: no notebook download button")
                elif page.request.get(notebook_links[0]).status != 200:
                    problems.append(f"{name}: notebook download {notebook_links[0]} does not answer")
            # every table published by a chapter links its CSV, and the link answers
            csv_links = page.eval_on_selector_all("a.csv-link", "as => as.map(a => a.href)")
            if name.startswith("notebooks/") and not csv_links:
                problems.append(f"{name}: no table links its CSV")
            problems += [f"{name}: CSV link {u} does not answer" for u in csv_links
                         if page.request.get(u).status != 200]
            if name.startswith("notebooks/") and n_images == 0:
                problems.append(f"{name}: no figure rendered")
            problems += [f"{name}: failed request {u}" for u in failed]
            problems += [f"{name}: missing image {u}" for u in broken]
            problems += [f"{name}: empty table {t!r}" for t in empty]
            problems += [f"{name}: table row with fewer cells than its header {r!r}" for r in short_rows]
            problems += [f"{name}: request to another host {u}" for u in sorted(set(elsewhere))]
            elsewhere.clear()
            if page.title() == "" or "404" in page.title():
                problems.append(f"{name}: bad title {page.title()!r}")
        browser.close()
    assert not problems, "\n".join(problems)


def test_a_broken_reference_fails_the_build(tmp_path):
    from toxlib.book_build.book import build_html, stage_sources

    source = stage_sources(ROOT, tmp_path / "src")
    page = source / "book" / "methods.md"
    page.write_text(page.read_text() + "\nSee {doc}`no-such-page`.\n")
    with pytest.raises(BookBuildError, match="no-such-page"):
        build_html(source, tmp_path)


def test_a_rebuild_carries_an_edited_stylesheet(tmp_path):
    """Sphinx copies a static file only where none is yet; the book's build must still show an edited one."""
    from toxlib.book_build.book import build_html, stage_sources

    source = stage_sources(ROOT, tmp_path / "src")
    (source / "_toc.yml").write_text("format: jb-book\nroot: book/settings\n")
    html = build_html(source, tmp_path)
    sheet = source / "_static" / "tables.css"
    sheet.write_text(sheet.read_text() + "\n/* edited after the first build */\n")
    build_html(source, tmp_path)
    assert (html / "_static" / "tables.css").read_text() == sheet.read_text()
