"""Regenerate docs/img/leaderboard-overview.png (the leaderboard's overview page at 40 benchmarks x
20 models) and docs/img/viewer-task-list.png (the run viewer's task list of a run of the same 40
benchmarks, 3 tasks each, grouped by benchmark), made-up (tests/leaderboard/synthetic.py), rendered
by the system Chromium (headless, through playwright, as the browser tests do).

    PYTHONPATH=$PWD python scripts/make_leaderboard_screenshot.py [--out DIR]   # default: docs/img
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mmtasks.leaderboard.site import write_site  # noqa: E402
from mmtasks.view.records import load_view_run  # noqa: E402
from mmtasks.view.site import build_view  # noqa: E402
from tests.leaderboard.synthetic import big_board, big_run  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--font-render-hinting=none"]
#: the page's width in the screenshot: the overview's 40 columns fit in it without a scroll bar
WIDTH = 1920


def render(site: Path, out: Path, width: int = WIDTH) -> tuple[int, int]:
    """Screenshot ``site``'s overview (the whole page) into ``out``; returns the page's width and
    the width its content needs (equal when nothing scrolls sideways)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto((site / "index.html").as_uri())
            page.wait_for_selector("#overview tbody tr")
            needed = int(page.evaluate("document.querySelector('#overview').closest('.table-scroll').scrollWidth"))
            shown = int(page.evaluate("document.querySelector('#overview').closest('.table-scroll').clientWidth"))
            out.parent.mkdir(parents=True, exist_ok=True)
            # the header, the navigation, the overview and the start of "why the numbers differ"
            bottom = page.evaluate("document.querySelector('#why-differ').getBoundingClientRect().top + scrollY + 330")
            page.screenshot(path=str(out), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": bottom})
            _quantize(out)
            return shown, needed
        finally:
            browser.close()


def render_viewer(site: Path, out: Path) -> None:
    """Screenshot the viewer's header, task list and first task table (a task of the second group open)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 760})
            page.goto((site / "index.html").as_uri() + "#t=4")
            page.wait_for_selector("#docs tbody tr")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            _quantize(out)
        finally:
            browser.close()


def _quantize(path: Path) -> None:
    """256 colours (the page has few): a third of the size in the repository."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder of the two images")
    args = parser.parse_args(argv)
    board_png, viewer_png = args.out / "leaderboard-overview.png", args.out / "viewer-task-list.png"
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        write_site(big_board(Path(tmp)), site)
        shown, needed = render(site, board_png)
        view = Path(tmp) / "view"
        build_view([load_view_run(big_run(Path(tmp)))], view)
        render_viewer(view, viewer_png)
    print(f"wrote {board_png} (table {needed}px wide in {shown}px) and {viewer_png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
