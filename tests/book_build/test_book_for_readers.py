"""The book as a reader meets it, in a real browser (Debian's chromium driven by Playwright) on a laptop (1,366 x 900)
and a phone (390 x 844): every page of the HTML built from the committed notebooks.

On a phone no page is wider than the window (``WIDER_THAN_A_PHONE`` lists the exceptions, each with its reason) and
no table cell breaks a number, an interval's bound or a verdict across lines (``TOKEN_PATTERN``).

On every page and at both widths: no console error; the in-page contents (the right-hand column, or the article
header's contents button and the drawer it opens) is there and its links move the page; on a phone the menu button
opens the book's navigation. On a laptop no table's content is wider than its box (``WIDE_ON_PURPOSE`` lists the
exceptions, each with its reason), no table cell reads as code (a True / False flag, a tuple or a snake_case name
as a header), each chapter's findings box starts on the first screen, in at most about 130 words, and a click on the
exercise's name in a solution's title opens the solution. No output holds an element a
generated text could have made (``OUTPUT_TAGS`` lists those the book's own tables, figures and tabs use).
Screenshots of three chapters at both widths go to ``SCREENS`` for a reviewer. In light and dark mode every text the
theme shows on a laptop reaches WCAG AA contrast (4.5:1) against the colour drawn under it; screenshots of the landing
page, the scorecard and a chapter in dark mode at both widths go to ``SCREENS`` too.

A second check builds a one-chapter book whose generated texts are ``HOSTILE`` (a ``<script>``, an ``<h1>``,
``<bos>``, markdown and math) through the book's own table, tabs, figure and claims functions, executed in a real
kernel, and finds them shown as text in every place, with nothing run.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import nbformat
import pytest

from toxlib.book_build.book import build_html, stage_sources, toc_files
from toxlib.chapters import model_chapters
from toxlib.publish import scorecard
from toxlib.store import paths

ROOT = paths.project_root()
pytestmark = pytest.mark.slow

LAPTOP, PHONE = (1366, 900), (390, 844)
#: where the test leaves its screenshots (committed, so a reviewer can look without building)
SCREENS = ROOT / "book" / "_static" / "screens"
SCREENSHOTS = ("rtp_detox", "debias_consistency", "safety_score")
#: (page, start of a table's caption): tables allowed to scroll sideways at 1,366 pixels, and why
WIDE_ON_PURPOSE = {}
#: the elements a chapter's outputs may hold: what toxlib.publish's tables, figures, tabs and the book's prose make
OUTPUT_TAGS = {"DIV", "SPAN", "P", "A", "BR", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "STYLE", "FIGURE",
               "FIGCAPTION", "IMG", "INPUT", "LABEL", "PRE", "CODE", "UL", "OL", "LI", "STRONG", "EM", "B", "I"}
#: a findings box holds at most this many words (its generated part is ``scorecard.FINDINGS_WORDS``)
FINDINGS_BOX_WORDS = 130
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"]
#: pages allowed to be wider than a phone's window, and why
WIDER_THAN_A_PHONE = {"book/bibliography": "the theme's hidden contents column, parked right of the window, adds "
                                           "about 23 px; no rule of the book's stylesheets reaches it"}
#: a number, an interval's bound or a verdict: a token no table cell may break across lines
TOKEN_PATTERN = r"^[\[(]?[−+-]?\d[\d,.]*%?[\]),;*]*$|^(holds|fails|undecided)\*?$"
#: WCAG 2's AA contrast for normal text
AA_CONTRAST = 4.5
#: pages drawn in dark mode for a reviewer, at both widths
DARK_SCREENSHOTS = ("book/intro", "book/scorecard", "notebooks/safety_score")
#: the repository address the test build links its buttons to
TEST_REPOSITORY = "https://github.com/example/toxicity-companion"


def _chromium() -> str:
    found = os.environ.get("TOXLIB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("Debian's chromium is needed for the browser check: apt-get install chromium "
                    "(scripts/run_tests.sh does it when run as root), or set TOXLIB_CHROMIUM")
    return found


def _build_committed(work: Path) -> Path:
    """The HTML of the checkout's committed notebooks (nothing executed) under ``work``, its buttons linking to
    ``TEST_REPOSITORY``."""
    before = os.environ.get("TOXLIB_REPOSITORY_URL")
    os.environ["TOXLIB_REPOSITORY_URL"] = TEST_REPOSITORY
    try:
        return build_html(stage_sources(ROOT, work / "src"), work, paths.results_dir())
    finally:
        if before is None:
            os.environ.pop("TOXLIB_REPOSITORY_URL", None)
        else:
            os.environ["TOXLIB_REPOSITORY_URL"] = before


@functools.cache
def _server(folder: str) -> str:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_port}"


@pytest.fixture(scope="session")
def committed_book(tmp_path_factory) -> Path:
    """The HTML of the committed notebooks (nothing executed), with the repository buttons on."""
    return _build_committed(tmp_path_factory.mktemp("committed-book"))


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _open(browser, url: str, size: tuple[int, int], theme: str | None = None):
    """A new page at ``size`` with its console errors and uncaught exceptions collected in ``page.errors``; with a
    ``theme`` ("light" or "dark"), the theme's switch set to it and the browser preferring it."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]}, color_scheme=theme or "no-preference")
    if theme:
        page.add_init_script(f"localStorage.setItem('theme', '{theme}'); localStorage.setItem('mode', '{theme}');")
    page.errors = []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(url, wait_until="load")
    return page


VISIBLE_JS = """s => [...document.querySelectorAll(s)].some(e => {
    const r = e.getBoundingClientRect(), st = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none'; })"""


def _visible(page, selector: str) -> bool:
    return page.evaluate(VISIBLE_JS, selector)


def _settles(page, js: str, arg, timeout_ms: int = 2000) -> bool:
    """Whether the page function ``js(arg)`` becomes true within ``timeout_ms``: a click's effect (a drawer
    opening, a smooth scroll) is waited for as long as it takes, not for a fixed pause."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(js, arg=arg, timeout=timeout_ms)
        return True
    except PlaywrightTimeout:
        return False


def _contents_work(page) -> str | None:
    """Reach the page's contents (the right-hand column, or the contents button's drawer), follow its last link,
    and say what failed (None when it works)."""
    column = "#pst-secondary-sidebar nav.page-toc a.nav-link"
    if not _visible(page, column):
        button = ".bd-header-article button.secondary-toggle"
        if not _visible(page, button):
            return "neither the page's contents nor its contents button is visible"
        page.click(button)
        column = "#pst-secondary-sidebar-modal nav.page-toc a.nav-link"
        if not _settles(page, VISIBLE_JS, column):
            return "the contents button opens no visible contents"
    links = page.locator(column)
    target = links.nth(links.count() - 1)
    anchor = target.get_attribute("href")
    target.click()
    place_js = """id => { const e = document.getElementById(decodeURIComponent(id));
        return e ? e.getBoundingClientRect().top : null; }"""
    bottom = page.viewport_size["height"] - 40
    _settles(page, f"""id => {{ const top = ({place_js})(id); return top !== null && top >= -5 && top < {bottom}; }}""",
             anchor.lstrip("#"))
    place = page.evaluate(place_js, anchor.lstrip("#"))
    if place is None or not -5 <= place < bottom:
        return f"the contents link {anchor} does not bring its section into view (top at {place})"
    return None


def _menu_works(page) -> str | None:
    """On a phone: the menu button opens the book's navigation, with a link to every chapter, and Escape closes it."""
    button = ".bd-header-article button.primary-toggle"
    if not _visible(page, button):
        return "no visible menu button"
    page.click(button)
    links = "#pst-primary-sidebar-modal nav.bd-links a.reference"
    if not _settles(page, VISIBLE_JS, links):
        return "the menu button opens no visible navigation"
    page.keyboard.press("Escape")
    if not _settles(page, f"s => !({VISIBLE_JS})(s)", links):
        return "the navigation the menu button opened does not close with Escape"
    return None


TABLES_JS = """() => [...document.querySelectorAll('article table')].map(t => {
    const box = t.closest('.tx-scroll') || t.parentElement;
    const figure = t.closest('figure');
    const caption = (figure && figure.querySelector('figcaption')) || t.querySelector('caption');
    return {caption: caption ? caption.textContent.trim() : '', content: t.scrollWidth, box: box.clientWidth,
            captionInside: !!(caption && box.contains(caption) && box.scrollWidth > box.clientWidth)};
})"""
FINDINGS_JS = """() => { const box = document.querySelector('article .admonition.findings');
    return box ? {top: box.getBoundingClientRect().top + window.scrollY, words: box.innerText.split(/\\s+/).length}
               : null; }"""
#: where each paper's verdict counts start on the landing page and the scorecard (list items that count claims)
PAPER_VERDICTS_JS = """() => [...document.querySelectorAll('article li')]
    .filter(li => /claims? holds?/.test(li.textContent))
    .map(li => li.getBoundingClientRect().top + window.scrollY)"""
#: the papers whose protocols the chapters run (each gets its verdicts on the first screen)
PAPERS = {scorecard.paper_of(stem) for stem in model_chapters()}
#: table cells that read as code: a flag as Python's True / False, a header as a Python tuple ("('auc', 'bilstm')") or a
#: snake_case name ("severe_toxicity"); a cell that shows its text as code on purpose is left out
CODE_CELLS_JS = r"""() => [...document.querySelectorAll('article td, article th')]
    .filter(c => !c.querySelector('code'))
    .map(c => [c.tagName, c.textContent.trim()])
    .filter(([tag, t]) => /^(True|False)$/.test(t) || /^\('.*',.*\)$/.test(t)
                          || (tag === 'TH' && /^[a-z0-9]+(_[a-z0-9]+)+$/.test(t)))
    .map(([tag, t]) => t)"""
#: elements of outputs and findings boxes outside ``OUTPUT_TAGS``, but for the copy buttons the theme's script adds
GENERATED_JS = """tags => [...document.querySelectorAll('article .cell_output *, article .admonition.findings *')]
    .filter(e => !tags.includes(e.tagName) && !e.closest('button.copybtn'))
    .map(e => e.tagName + ': ' + (e.outerHTML || '').slice(0, 80))"""


SOLUTION_NAME = ".toggle > .admonition-title a"


def _solution_opens(page) -> str | None:
    """A click on the exercise's name in the first solution's title ("Solution to Exercise 3") opens the solution,
    as a click on the rest of the title does, without a script error (None when it does, or there is none)."""
    if page.locator(SOLUTION_NAME).count() == 0:
        return None
    errors = len(page.errors)
    page.locator(SOLUTION_NAME).first.click()
    shut_js = "s => document.querySelector(s).closest('.toggle').classList.contains('toggle-hidden')"
    _settles(page, f"s => !({shut_js})(s)", SOLUTION_NAME, timeout_ms=1000)
    shut = page.evaluate(shut_js, SOLUTION_NAME)
    if shut or len(page.errors) > errors:
        return f"a click on the exercise's name in a solution's title leaves it shut ({page.errors[errors:][:1]})"
    return None


def _check_page(page, name: str, size: tuple[int, int]) -> list[str]:
    problems = [f"console error: {e[:160]}" for e in page.errors]
    if size == LAPTOP:
        problems += _low_contrast(page)  # as the page opens, before a click moves focus or highlights a target
        problem = _solution_opens(page)
        problems += [problem] if problem else []
    if size == PHONE:  # on the page as it opened; the menu is closed again (Escape) before the contents are tried
        wide = page.evaluate("document.documentElement.scrollWidth")
        if wide > size[0] + 1 and name not in WIDER_THAN_A_PHONE:
            problems.append(f"the page is {wide} px wide")
        problems += [f"a table cell breaks {token!r} across lines" for token in page.evaluate(BROKEN_JS, TOKEN_PATTERN)]
        problem = _menu_works(page)
        problems += [problem] if problem else []
    if page.evaluate("() => document.querySelectorAll('nav.page-toc a').length"):
        problem = _contents_work(page)
        problems += [problem] if problem else []
    elif name.startswith("notebooks/") or name == "book/scorecard":
        problems.append("a chapter without in-page contents")
    problems += [f"an output holds an element generated text could have made: {e}"
                 for e in page.evaluate(GENERATED_JS, sorted(OUTPUT_TAGS))]
    if size == LAPTOP:
        problems += [f"a table cell reads as code: {t!r}" for t in page.evaluate(CODE_CELLS_JS)]
        for table in page.evaluate(TABLES_JS):
            allowed = any(name == page_name and table["caption"].startswith(start)
                          for page_name, start in WIDE_ON_PURPOSE)
            if table["content"] > table["box"] + 1 and not allowed:
                problems.append(f"table {table['caption'][:70]!r} is {table['content']} px wide in {table['box']} px")
            if table["captionInside"]:
                problems.append(f"caption {table['caption'][:70]!r} scrolls with its table")
        if name in ("book/intro", "book/scorecard"):
            tops = page.evaluate(PAPER_VERDICTS_JS)
            if len(tops) != len(PAPERS) or max(tops, default=0) > size[1]:
                problems.append(f"{len(tops)} of the {len(PAPERS)} papers' verdicts on the first screen "
                                f"(lowest at {max(tops, default=0):.0f} px)")
        if name.startswith("notebooks/"):
            findings = page.evaluate(FINDINGS_JS)
            if findings is None:
                problems.append("no findings box")
            else:
                if findings["top"] > size[1]:
                    problems.append(f"the findings box starts at {findings['top']:.0f} px, below the first screen")
                if findings["words"] > FINDINGS_BOX_WORDS:
                    problems.append(f"the findings box has {findings['words']} words")
    return [f"{name} at {size[0]} px: {p}" for p in problems]


def test_every_page_reads_on_a_laptop_and_a_phone(committed_book, browser):
    base = _server(str(committed_book))
    problems = []
    for name in toc_files(ROOT):
        for size in (LAPTOP, PHONE):
            page = _open(browser, f"{base}/{name}.html", size)
            stem = name.split("/")[-1]
            if stem in SCREENSHOTS:  # as loaded, before the checks click anything
                SCREENS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENS / f"{stem}-{size[0]}.png"))
            problems += _check_page(page, name, size)
            page.close()
    assert not problems, "\n".join(problems)


#: the tokens matching a pattern that a table cell of the article draws on more than one line
BROKEN_JS = r"""pattern => {
  const wanted = new RegExp(pattern), broken = [];
  for (const cell of document.querySelectorAll('.bd-article td, .bd-article th')) {
    if (!cell.getBoundingClientRect().width) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const m of n.textContent.matchAll(/\S+/g)) {
        if (!wanted.test(m[0])) continue;
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


#: [ratio, element, text, colour, background] for each visible text below ``AA_CONTRAST`` against the colour drawn
#: under it (the first opaque background among its ancestors, semi-transparent ones blended over it; white if none)
CONTRAST_JS = r"""limit => {
  const parse = c => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const v = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  };
  const channel = x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
  const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let under = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) under = over(layers[i], under);
    return under;
  };
  const low = [], seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || seen.has(el)) continue;
    seen.add(el);
    const st = getComputedStyle(el), box = el.getBoundingClientRect();
    if (!box.width || !box.height || st.visibility === 'hidden' || +st.opacity === 0) continue;
    if (el.closest('.visually-hidden, .sr-only, [aria-hidden="true"], mjx-assistive-mml')) continue;
    const colour = parse(st.color);
    if (!colour) continue;
    const under = background(el), fg = luminance(over(colour, under)), bg = luminance(under);
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < limit) {
      const element = el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '');
      low.push([Math.round(ratio * 100) / 100, element, n.textContent.trim().slice(0, 40), st.color,
                'rgb(' + under.slice(0, 3).map(Math.round).join(', ') + ')']);
    }
  }
  return low;
}"""


def _low_contrast(page) -> list[str]:
    """The page's first five texts below ``AA_CONTRAST``, in words."""
    return [f"{ratio}:1 for {text!r} ({element}, {colour} on {under})"
            for ratio, element, text, colour, under in page.evaluate(CONTRAST_JS, AA_CONTRAST)[:5]]


def test_every_text_reaches_aa_contrast_in_dark_mode(committed_book, browser):
    """Dark mode on a laptop (light mode is checked with the rest of each page)."""
    base = _server(str(committed_book))
    problems = []
    for name in toc_files(ROOT):
        page = _open(browser, f"{base}/{name}.html", LAPTOP, "dark")
        shown = page.evaluate("document.documentElement.dataset.theme")
        assert shown == "dark", f"{name}: asked for the dark theme, the page shows {shown!r}"
        if name in DARK_SCREENSHOTS:
            SCREENS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENS / f"{name.split('/')[-1]}-{LAPTOP[0]}-dark.png"))
        problems += [f"{name}, dark: {problem}" for problem in _low_contrast(page)]
        page.close()
    for name in DARK_SCREENSHOTS:  # the laptop's were taken above
        page = _open(browser, f"{base}/{name}.html", PHONE, "dark")
        page.screenshot(path=str(SCREENS / f"{name.split('/')[-1]}-{PHONE[0]}-dark.png"))
        page.close()
    assert not problems, "\n".join(problems)


def test_chapters_link_the_scorecard_the_methods_and_their_launch_buttons(committed_book):
    for nb in sorted((committed_book / "notebooks").glob("*.html")):
        html = nb.read_text()
        assert 'href="../book/scorecard.html"' in html and 'href="../book/methods.html"' in html, nb.name
        assert f"colab.research.google.com/github/{TEST_REPOSITORY.split('github.com/')[1]}" in html, nb.name
        assert "mybinder.org/v2/gh/" in html and f'href="{TEST_REPOSITORY}"' in html, nb.name
        assert f"{TEST_REPOSITORY}/issues/new" in html, nb.name
        assert html.count("const THEBE_JS_URL") == 1, nb.name  # Thebe configured once
    scorecard = (committed_book / "book" / "scorecard.html").read_text()
    assert 'href="../notebooks/rtp_detox.html#claim-rtp_detox-0"' in scorecard
    assert ">Detoxifying generations</a>" in scorecard and ">rtp_detox</a>" not in scorecard
    detox = (committed_book / "notebooks" / "rtp_detox.html").read_text()
    assert 'id="claim-rtp_detox-0"' in detox and 'href="#claim-rtp_detox-' in detox


def test_the_scorecards_claims_come_paper_by_paper_under_a_header_that_stays_in_view(committed_book, browser):
    """The scorecard's table of every claim is grouped by paper (each paper's name once, in the book's order, the
    book's own checks last) and, on a laptop, its header row stays in view down its rows, under the theme's bar of
    buttons (which is stuck to the top of the window too) and not hidden by it."""
    base = _server(str(committed_book))
    page = _open(browser, f"{base}/book/scorecard.html", LAPTOP)
    papers = page.eval_on_selector_all(".tx-claims .tx-paper", "els => els.map(e => e.textContent)")
    assert papers == [*dict.fromkeys(scorecard.paper_of(stem) for stem in model_chapters()), scorecard.OWN_CHECKS]
    seen = page.evaluate("""() => {
        const box = document.querySelector('.tx-claims'), th = box.querySelector('thead th');
        const height = box.getBoundingClientRect().height, seen = [];
        for (const f of [0.25, 0.5, 0.75]) {
            window.scrollTo(0, window.scrollY + box.getBoundingClientRect().top + height * f);
            const r = th.getBoundingClientRect();
            const bar = document.querySelector('.bd-header-article').getBoundingClientRect().bottom;
            const top = document.elementFromPoint(r.left + r.width / 2, r.top + 2);
            seen.push({top: r.top, bar: bar, visible: th.contains(top)});  // on screen, below the bar, uncovered
        }
        return seen;
    }""")
    page.close()
    assert all(s["bar"] - 1 <= s["top"] < s["bar"] + 30 and s["visible"] for s in seen), seen

def test_a_figure_on_a_phone_keeps_three_quarters_of_its_width_and_scrolls_in_its_box(committed_book, browser):
    """Squeezed to a 390 px phone a figure showed its labels at 7-9 px; it keeps at least 480 px (its box scrolls
    sideways, the page does not)."""
    base = _server(str(committed_book))
    from toxlib.chapters import chapters

    with_figures = 0
    for name in [str(Path(c.page).with_suffix("")) for c in chapters()]:  # every chapter's page, the report's too
        page = _open(browser, f"{base}/{name}.html", PHONE)
        shown = page.evaluate("""() => [...document.querySelectorAll('img.tx-figure-img')].map(i => ({
            natural: i.naturalWidth, width: i.getBoundingClientRect().width,
            scrolls: getComputedStyle(i.parentElement).overflowX === 'auto'}))""")
        wide = page.evaluate("document.documentElement.scrollWidth")
        page.close()
        with_figures += bool(shown)
        for img in shown:
            assert img["width"] >= min(480, img["natural"]) - 1 and img["scrolls"], (name, img)
        assert wide <= PHONE[0], (name, wide)
    assert with_figures >= 5  # the chapters with figures, and the report card's page

def test_figures_and_exercises_are_numbered_per_chapter(committed_book):
    """Chapter k's figures read "Fig. k.1", "Fig. k.2", ... and its exercises "Exercise k.1", ... (not the book's
    running count, which made a chapter of two exercises show "Exercise 16" and "17")."""
    import re

    chapters = [f for f in toc_files(ROOT) if f.startswith("notebooks/")]
    numbered = 0
    for k, stem in enumerate(chapters, start=1):
        html = (committed_book / f"{stem}.html").read_text()
        assert f'<span class="section-number">{k}. </span>' in html, stem
        for label in ("Fig.", "Exercise"):
            found = sorted({int(n) for c, n in re.findall(rf"{label} (\d+)\.(\d+)", html) if int(c) == k})
            assert not re.search(rf"{label} \d+(?![.\d])", html), f"{stem}: a {label} numbered across the book"
            assert found == list(range(1, len(found) + 1)), (stem, label, found)
            numbered += len(found)
    assert numbered > 2 * len(chapters)


# ------------------------------------------------------------------ generated text is text

#: generated texts that would run, render or vanish if inserted as markup
HOSTILE = ["<script>window.__pwned = 1</script>", "<h1>You don't have to be a moron</h1>", "<bos>",
           "$x^2$ **bold** [link](https://example.org) {glue:text}`k` &lt;"]

HOSTILE_CODE = f"""
import matplotlib
matplotlib.use("Agg")
import pandas as pd
from toxlib.publish import claims, plots, results, scorecard, tabs
HOSTILE = {HOSTILE!r}
text = " ".join(HOSTILE)
table = pd.DataFrame({{"model": HOSTILE, "continuation": [text] * 4, "toxicity": [0.9, 0.8, 0.7, 0.6]}})
results.publish("hostile", "generations", table, "Continuations by " + text)
with tabs.tabbed(HOSTILE[:2], "tabs " + text):
    results.publish("hostile", "first", table, "First " + HOSTILE[1])
    results.publish("hostile", "second", table, "Second " + HOSTILE[0])
fig = plots.grouped_bars(table, "model", {{"toxicity": "toxicity of " + HOSTILE[2]}}, "Bars of " + text, "toxicity")
results.publish_figure("hostile", "bars", fig)
scorecard.publish_claims("hostile", [claims.claim(text, HOSTILE[2], 0.4, interval=(0.3, 0.5), threshold=0.5,
                                                  kind="our models", note=text, rule="hostile",
                                                  subject="model:" + HOSTILE[0])], "Claims of " + text)
"""
HOSTILE_MARKDOWN = [
    "# Generated text",
    "````{admonition} What this run finds\n:class: tip findings\n\n```{glue:md} hostile-findings\n:format: myst\n```\n"
    "````",
    "```{glue:figure} hostile-fig-bars\n:name: fig-hostile-bars\n\n{glue:text}`hostile-fig-bars-caption`.\n```",
    "(hostile-claims)=\n## Claims",
]


@pytest.fixture(scope="session")
def hostile_book(tmp_path_factory) -> Path:
    """A one-chapter book whose outputs a kernel made from ``HOSTILE`` with toxlib.publish's functions."""
    from nbclient import NotebookClient

    work = tmp_path_factory.mktemp("hostile-book")
    source = stage_sources(ROOT, work / "src")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN[0]),
                                         nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN[1]),
                                         nbformat.v4.new_code_cell(HOSTILE_CODE),
                                         nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN[2]),
                                         nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN[3])],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    results = work / "results"
    env = {**os.environ, "TOXLIB_RESULTS_DIR": str(results), "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    before = dict(os.environ)
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(before)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    nbformat.write(nb, source / "notebooks" / "hostile.ipynb")
    (source / "_toc.yml").write_text("format: jb-book\nroot: notebooks/hostile\n")
    return build_html(source, work, results)


def test_generated_text_is_shown_as_text_and_runs_nothing(hostile_book, browser):
    page = _open(browser, f"{_server(str(hostile_book))}/notebooks/hostile.html", LAPTOP)
    article = "article.bd-article"
    assert page.evaluate("() => window.__pwned") is None, "a generated <script> ran"
    assert page.evaluate(f"() => document.querySelectorAll('{article} h1').length") == 1  # the page's own title
    assert page.evaluate("() => document.querySelectorAll('bos').length") == 0
    assert page.evaluate("""() => [...document.querySelectorAll('script')]
        .filter(s => s.textContent.includes('__pwned')).length""") == 0
    assert page.evaluate(f"() => document.querySelectorAll('{article} .math, {article} mjx-container').length") == 0
    assert page.evaluate(GENERATED_JS, sorted(OUTPUT_TAGS)) == []
    places = {
        "table cells": f"{article} .tx-scroll td",
        "table headers and captions": f"{article} figure.tx-table figcaption",
        "tab labels": f"{article} .sd-tab-set > label",
        "the findings box": f"{article} .admonition.findings",
        "the claims table": f"{article} table#T_claims-hostile",
        "the figure's caption": f"{article} figure figcaption",
    }
    for where, selector in places.items():
        shown = page.evaluate(f"() => [...document.querySelectorAll('{selector}')].map(e => e.textContent).join(' ')")
        for text in (HOSTILE[:2] if where == "tab labels" else HOSTILE[:3]):
            assert text in shown, f"{where} do not show {text!r} as text"
    assert "$x^2$ **bold** [link](https://example.org)" in page.evaluate(
        f"() => document.querySelector('{article} .admonition.findings').textContent")
    alt = page.evaluate(f"() => document.querySelector('{article} figure img').alt")
    assert "<bos>" in alt and "Bars of" in alt, alt  # the alternative text names the figure's own labels
    assert page.errors == []
