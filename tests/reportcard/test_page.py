"""The report's page, opened in the real browser (Debian's chromium driven by Playwright) at a laptop's and a
phone's width: model and data text is shown as text and runs nothing, and every table stays within the column.
The CSV and JSON hold the same rows."""

from __future__ import annotations

import concurrent.futures
import json

import pandas as pd
import pytest

from toxlib.reportcard.page import paper_counts, write_report

pytestmark = pytest.mark.slow

HOSTILE = "<script>window.__ran = true</script><h1>big</h1><bos>"


def _rows(n: int = 12) -> list[dict]:
    rows = []
    for i in range(n):
        rows.append({"paper": ["RealToxicityPrompts", "SASS", "Safety score (ToxiGen)"][i % 3],
                     "chapter": "rtp_prompted", "id": f"rule_{i}:model:{HOSTILE}",
                     "claim": f"Claim {i} about {HOSTILE} with a long unbroken "
                     "word_that_goes_on_and_on_without_any_break_at_all_for_a_while",
                     "paper_value": "0.745 (GPT-2, Perspective, 100K prompts)",
                     "bundled": [{"model": "smollm2-135m", "value": "0.762 [0.747, 0.777]", "verdict": "holds"},
                                 {"model": "gemma3-270m", "value": "0.758 [0.742, 0.775]", "verdict": "fails"}],
                     "value": "0.5 [0.4, 0.6]", "ci_low": 0.4, "ci_high": 0.6, "n": 600 + i if i else pd.NA,
                     "verdict": ["holds", "fails", "undecided", "not judged"][i % 4], "outside_domain": i % 2 == 0,
                     "note": HOSTILE})
    return rows


def _context(name: str) -> dict:
    chapters = [{"stem": "rtp_prompted", "status": "ran", "wall_s": 130.0, "estimate_s": 100.0, "note": HOSTILE},
                {"stem": "sass", "status": "not applicable", "wall_s": None, "estimate_s": None,
                 "note": "a masked LM does not generate text"}]
    return {"name": name, "target_note": f"causal LM, 135M parameters, /models/{HOSTILE}", "budget": "quick",
            "budget_note": "a fraction", "when": "today", "domain": f"continuations by {name} are far",
            "domain_outside": True, "figures": [], "chapters": chapters, "start_note": "<bos> (the tokenizer's BOS)",
            "rates_note": "timed", "run_record": f"model {name}", "rates": {}, "parameters": {}, "budgets": {}}


def test_headline_counts_each_papers_verdicts_and_marks():
    counts = {h["paper"]: h for h in paper_counts(_rows())}
    assert counts["RealToxicityPrompts"]["holds"] == 1 and counts["RealToxicityPrompts"]["marked"] == 2
    assert sum(h["holds"] + h["fails"] + h["undecided"] + h["not_judged"] for h in counts.values()) == 12


def test_the_page_shows_model_text_as_text_and_fits_a_laptop_and_a_phone(tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.book_build.test_book import CHROMIUM_ARGS, _chromium

    name = "<b>mine</b>"
    page_path = write_report(tmp_path, _context(name), _rows())
    csv = pd.read_csv(tmp_path / "report.csv")
    assert len(csv) == 12 and csv["claim"].str.contains("<script>", regex=False).all()
    document = json.loads((tmp_path / "report.json").read_text())
    assert len(document["claims"]) == 12 and document["claims"][0]["note"] == HOSTILE

    def in_the_browser() -> list[str]:
        problems = []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
            for width, height in ((1366, 900), (390, 844)):
                page = browser.new_page(viewport={"width": width, "height": height})
                errors = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.goto(page_path.as_uri(), wait_until="load")
                if page.evaluate("() => window.__ran === true"):
                    problems.append(f"{width}px: a script from the data ran")
                if page.locator("h1").count() != 1:
                    problems.append(f"{width}px: text from the data became a heading")
                if HOSTILE not in page.inner_text("body") or "<b>mine</b>" not in page.inner_text("h1"):
                    problems.append(f"{width}px: the data's text is not shown as text")
                wide = page.evaluate("""() => [...document.querySelectorAll('table')].filter(
                    t => t.getBoundingClientRect().right > document.documentElement.clientWidth + 1
                         || t.scrollWidth > t.parentElement.clientWidth + 1).length""")
                if wide:
                    problems.append(f"{width}px: {wide} table(s) wider than the column")
                if page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth + 1"):
                    problems.append(f"{width}px: the page scrolls sideways")
                problems += [f"{width}px: console error {e}" for e in errors]
                page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=False)
                page.close()
            browser.close()
        return problems

    # in a thread of its own: Playwright's sync API refuses a thread where an asyncio loop runs, and an earlier
    # test's kernel client may leave one in the main thread
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        problems = pool.submit(in_the_browser).result()
    assert problems == []


def test_not_informative_claims_are_counted_per_paper_and_shown_where_a_paper_has_any(tmp_path):
    from toxlib.metrics.uncertainty import VERDICTS

    rows = _rows()
    rows[1]["verdict"] = "not informative"  # a SASS claim a constant answer would earn too
    counts = {h["paper"]: h for h in paper_counts(rows)}
    assert all(set(h) == {"paper", "marked", *(v.replace(" ", "_") for v in VERDICTS)} for h in counts.values())
    assert counts["SASS"]["not_informative"] == 1 and counts["RealToxicityPrompts"]["not_informative"] == 0
    assert sum(h[v.replace(" ", "_")] for h in counts.values() for v in VERDICTS) == 12
    page = write_report(tmp_path, _context("mine"), rows).read_text()
    headline = page[page.index('<div class="headline">'):page.index('<h2 id="claims">')]
    assert headline.count('<span class="notinformative">1 not informative</span>') == 1  # SASS only
    assert headline.count("not judged</span>") == 3  # every paper still shows its other counts
    assert '<td data-label="verdict" class="verdict notinformative">not informative</td>' in page
    assert ".notinformative { color: #8250df; }" in page
    assert pd.read_csv(tmp_path / "report.csv")["verdict"].tolist()[1] == "not informative"
