"""The picture of a report page the Your model chapter shows (book/images/report-page.png): the top of a report's
index.html at 1,100 x 1,300 CSS px in Debian's Chromium (driven by Playwright, as the readers' browser test does).

    .venv/bin/python scripts/report_screenshot.py [REPORT_FOLDER] [--out book/images/report-page.png]

REPORT_FOLDER defaults to the report the book's own build wrote (the Your model page's, under the user's cache:
``<TOXLIB_CACHE_DIR>/reports/book-smollm2-135m-decide``). Run it after the README's build and commit the picture;
the build itself takes no picture, so that two builds write the same files.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from toxlib.store import paths

SIZE = {"width": 1100, "height": 1300}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=str(paths.cache_dir() / "reports" / "book-smollm2-135m-decide"))
    parser.add_argument("--out", default=str(paths.project_root() / "book" / "images" / "report-page.png"))
    args = parser.parse_args()
    page = Path(args.folder) / "index.html"
    if not page.is_file():
        sys.exit(f"no report page at {page}: build the book first (bash scripts/build_book.sh), or name a report "
                 "folder (python -m toxlib report ... --out FOLDER writes FOLDER/<name>/index.html)")
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium not found: install Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright  # optional: the [dev] extra

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport=SIZE, color_scheme="light")
        tab.goto(page.resolve().as_uri(), wait_until="load")
        tab.screenshot(path=args.out, clip={"x": 0, "y": 0, **SIZE})
        browser.close()
    print(f"wrote {args.out} from {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
