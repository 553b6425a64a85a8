"""The leaderboard's overview: models x benchmark headlines grouped by category, average rank and
coverage, the benchmarks' pages from it, the scoring-variant switch with its "why the numbers
differ" tables, and the non-official judge mark; in headless Chromium, on synthetic runs built
through the real builder (tests/leaderboard/synthetic.py).

The small case (four benchmarks, three models), by hand. Ranks per benchmark (1 = best, equal
values share the mean place):

    benchmark  category      m1    m2    m3        ranks
    mi_a       multi-image   60    50    40        m1 1, m2 2, m3 3
    mi_b       multi-image   30    30    -         m1 1.5, m2 1.5
    video_c    video         -     70    80        m3 1, m2 2      (variant peer: m2 90, m3 75 -> m2 1, m3 2)
    docs_d     documents     10    -     -         m1 1

    average rank: m1 (1 + 1.5 + 1) / 3 = 1.17, m2 (2 + 1.5 + 2) / 3 = 1.83, m3 (3 + 1) / 2 = 2.00
    with peer:    m1 1.17,                      m2 (2 + 1.5 + 1) / 3 = 1.50, m3 (3 + 2) / 2 = 2.50
    coverage: m1 3/4, m2 3/4, m3 2/4

video_c is judged, its official judge openai:gpt-4o-2024-05-13; m3's run chose openai:gpt-4o-mini.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from mmtasks.leaderboard.site import write_site
from tests.leaderboard.synthetic import BIG_CATEGORIES, OFFICIAL_JUDGE, big_board, board_from, small_case
from tests.leaderboard.test_leaderboard import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.fail(f"the browser test needs Chromium at {CHROMIUM}: apt-get install -y chromium")
    with playwright_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def open_page(browser, site: Path, problems: list[str], width: int = 1360, fragment: str = ""):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.goto((site / "index.html").as_uri() + fragment)
    return page


def texts(page, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_text_contents()]


def attrs(page, selector: str, name: str) -> list[str | None]:
    return page.locator(selector).evaluate_all(f"nodes => nodes.map(n => n.getAttribute({name!r}))")


# --- leaderboard.json: what the page reads ---------------------------------------------------------


def test_the_builder_gives_categories_model_ids_variants_and_the_judge(tmp_path: Path) -> None:
    board = board_from(tmp_path, *small_case())
    tabs = {b.id: b for b in board.benchmarks}
    assert [(b.id, b.category) for b in board.benchmarks] == [
        ("docs_d", "documents"), ("mi_a", "multi-image"), ("video_c", "video"), ("mi_b", "multi-image")]
    # one model, one id on every benchmark (the overview's row)
    ids = {(b.id, e.model): e.model_id for b in board.benchmarks for e in b.entries}
    assert ids[("mi_a", "m1")] == ids[("docs_d", "m1")] == ids[("mi_b", "m1")] != ids[("mi_a", "m2")]
    video = {e.model: e for e in tabs["video_c"].entries}
    assert [(v.name, v.description, v.source, v.tasks) for v in tabs["video_c"].variants] == [
        ("peer", "a peer's parser: unparsed counts as wrong", "peer/repo@abc123, eval.py", ["video_c"])]
    assert video["m2"].variants["peer"]["acc"].value == 90.0 and video["m2"].values["acc"].value == 70.0
    assert video["m3"].variants["peer"]["acc"].value == 75.0
    # m3 chose another judge than the task's official one; m2 ran with it
    assert (video["m3"].official_judge, video["m2"].official_judge) == (False, True)
    assert video["m3"].official_judges == {"video_c": OFFICIAL_JUDGE} and video["m3"].judge == "openai:gpt-4o-mini"
    assert all(e.official_judge and not e.official_judges and not e.variants for e in tabs["mi_a"].entries)
    assert tabs["mi_a"].variants == []


# --- the overview in Chromium: the small case by hand -------------------------------------------------


def test_the_overview_groups_ranks_covers_switches_and_marks(browser, tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_site(board_from(tmp_path, *small_case()), site)
    problems: list[str] = []
    page = open_page(browser, site, problems)
    page.wait_for_selector("#overview tbody tr")
    assert page.locator("#tab-overview").get_attribute("aria-selected") == "true"

    # grouped by category, in the categories' order, whatever the benchmarks' order
    assert texts(page, "#overview th.category") == ["Multi-image", "Video", "Documents"]
    assert attrs(page, "#overview th.category", "colspan") == ["2", "1", "1"]
    assert attrs(page, "#overview th.bench-col", "data-bench") == ["mi_a", "mi_b", "video_c", "docs_d"]
    assert attrs(page, "#tabs .nav-group", "data-category")[1:] == ["multi-image", "video", "documents"]

    # average rank and coverage, best first
    assert texts(page, "#overview tbody .model-name") == ["m1", "m2", "m3"]
    assert texts(page, "#overview tbody td.avg-rank") == ["1.17", "1.83", "2.00"]
    assert texts(page, "#overview tbody td.coverage-col") == ["3/4", "3/4", "2/4"]
    assert attrs(page, '#overview tbody td[data-bench="mi_b"]', "data-rank") == ["1.5", "1.5", None]
    assert texts(page, '#overview tbody td[data-bench="docs_d"]') == ["10.0", "\u2013", "\u2013"]

    # the non-official judge: m3's video_c value is marked, and its row
    video = page.locator('#overview tbody td[data-bench="video_c"]')
    assert [("unofficial-judge" in (c or "")) for c in attrs(page, '#overview tbody td[data-bench="video_c"]', "class")] == [
        False, False, True]
    assert video.nth(2).text_content() == "80.0\u2020"
    assert "judged by openai:gpt-4o-mini, not the official openai:gpt-4o-2024-05-13" in (video.nth(2).get_attribute("title") or "")
    assert texts(page, "#overview tbody tr .badge-judge") == ["non-official judge"]
    assert page.locator("#overview tbody tr", has_text="m3").locator(".badge-judge").count() == 1

    # why the numbers differ: video_c's peer variant, means over m2 and m3 (70, 80 -> 90, 75)
    why = page.locator('#why-table tr[data-bench="video_c"][data-variant="peer"] td')
    assert [t.strip() for t in why.all_text_contents()] == [
        "Video C", "peer", "a peer's parser: unparsed counts as wrong", "peer/repo@abc123, eval.py",
        "2", "75.00", "82.50", "+7.50"]
    assert page.locator("#why-table tbody tr").count() == 1

    # the scoring switch: video_c re-ranked by the variant, the others keep their own rule
    page.select_option("#variant-select", "peer")
    assert texts(page, "#overview tbody .model-name") == ["m1", "m2", "m3"]
    assert texts(page, "#overview tbody td.avg-rank") == ["1.17", "1.50", "2.50"]
    assert texts(page, '#overview tbody td[data-bench="video_c"] .value') == ["90.0", "75.0"]
    assert all("variant" in (c or "").split() for c in attrs(page, '#overview tbody td[data-bench="video_c"]:not(.missing)', "class"))
    assert ["no-variant" in (c or "").split() for c in attrs(page, "#overview th.bench-col", "class")] == [True, True, False, True]

    # a benchmark's page from the overview: the variant stays chosen, the judge is marked
    page.locator('#overview th[data-bench="video_c"] a').click()
    page.wait_for_selector("#board-video_c tbody tr")
    assert page.url.endswith("#video_c") and page.locator("#tab-video_c").get_attribute("aria-selected") == "true"
    assert page.locator("#variant-select").input_value() == "peer"
    assert texts(page, '#board-video_c tbody td[data-key="acc"] .value') == ["90.00", "75.00"]  # re-sorted by it
    assert texts(page, "#board-video_c tbody .model-name") == ["m2", "m3"]
    judge = page.locator("#board-video_c tbody tr", has_text="m3").locator(".badge-judge")
    assert judge.text_content() == "non-official judge"
    assert "not the official judge openai:gpt-4o-2024-05-13 (video_c)" in (judge.get_attribute("title") or "")
    # its own "why the numbers differ": each row's headline beside the variant
    assert texts(page, "#variants-video_c tbody td.num") == ["80.00", "75.00 (\u22125.00)", "70.00", "90.00 (+20.00)"]
    assert "peer/repo@abc123, eval.py" in (page.locator("#variants-video_c .variant-notes").text_content() or "")
    page.select_option("#variant-select", "")
    assert texts(page, '#board-video_c tbody td[data-key="acc"] .value') == ["80.00", "70.00"]

    # back to the overview through the navigation; a page without variants has no switch
    page.locator("#tab-mi_a").click()
    page.wait_for_selector("#board-mi_a tbody tr")
    assert page.locator("#variant-select").count() == 0 and page.locator("#variants-mi_a").count() == 0
    page.locator("#tab-overview").click()
    page.wait_for_selector("#overview tbody tr")
    assert page.url.endswith("#overview")
    assert not problems, problems
    page.close()


# --- 40 benchmarks x 20 models ----------------------------------------------------------------------


def ranks_by_hand(values: dict[str, float]) -> dict[str, float]:
    """Fractional ranking, 1 = the highest (a second implementation of the page's)."""
    out = {}
    for model, value in values.items():
        above = sum(1 for v in values.values() if v > value)
        equal = sum(1 for v in values.values() if v == value)
        out[model] = above + (equal + 1) / 2
    return out


def test_the_overview_at_40_benchmarks_and_20_models(browser, tmp_path: Path) -> None:
    board = big_board(tmp_path)
    site = tmp_path / "site"
    write_site(board, site)
    problems: list[str] = []
    page = open_page(browser, site, problems, width=1920)
    page.wait_for_selector("#overview tbody tr")

    assert page.locator("#overview th.bench-col").count() == 40 == sum(BIG_CATEGORIES.values())
    assert page.locator("#overview tbody tr").count() == 20
    labels = {"multi-image": "Multi-image", "multi-turn": "Multi-turn", "video": "Video", "single-image": "Single-image",
              "reasoning": "Reasoning", "documents": "Documents"}
    assert texts(page, "#overview th.category") == [labels[c] for c in BIG_CATEGORIES]
    assert attrs(page, "#overview th.category", "colspan") == [str(n) for n in BIG_CATEGORIES.values()]
    assert page.locator("#tabs .tab").count() == 41  # the overview and 40 pages, in 6 lines
    assert page.locator("#tabs .nav-group[data-category]").count() == 6

    # average rank and coverage against the data, computed here
    values: dict[str, dict[str, float]] = {}
    for bench in board.benchmarks:
        values[bench.id] = {e.model: e.values["acc"].value for e in bench.entries if e.values["acc"].value is not None}
    ranks: dict[str, list[float]] = {}
    for by_model in values.values():
        for model, rank in ranks_by_hand(by_model).items():
            ranks.setdefault(model, []).append(rank)
    shown = dict(zip(texts(page, "#overview tbody .model-name"), texts(page, "#overview tbody td.avg-rank")))
    assert shown == {m: f"{sum(r) / len(r):.2f}" for m, r in ranks.items()}
    covered = dict(zip(texts(page, "#overview tbody .model-name"), texts(page, "#overview tbody td.coverage-col")))
    assert covered == {m: f"{len(r)}/40" for m, r in ranks.items()}
    assert sorted(covered.values()) != ["40/40"] * 20  # some models skip benchmarks
    averages = [float(t) for t in texts(page, "#overview tbody td.avg-rank")]
    assert averages == sorted(averages)
    assert page.locator("#overview tbody tr", has_text="model-03").locator(".judge-mark").count() == 3  # the multi-turn three

    # the 40 columns fit a 1920-pixel window: no sideways scrolling (the tabs overflowed at 17)
    fit = page.evaluate("(() => { const s = document.querySelector('#overview').closest('.table-scroll');"
                        " return [s.scrollWidth, s.clientWidth, document.documentElement.scrollWidth, innerWidth]; })()")
    assert fit[0] <= fit[1] and fit[2] <= fit[3], fit
    shot = tmp_path / "overview.png"
    page.screenshot(path=str(shot), full_page=True)
    width, height = struct.unpack(">II", shot.read_bytes()[16:24])
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and width == 1920 and height > 900
    assert not problems, problems
    page.close()


def test_the_docs_show_the_screenshot_and_how_to_remake_it() -> None:
    image = ROOT / "docs" / "img" / "leaderboard-overview.png"
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = (ROOT / "docs" / "leaderboard-schema.md").read_text(encoding="utf-8")
    assert "](img/leaderboard-overview.png)" in doc and "scripts/make_leaderboard_screenshot.py" in doc
    viewer = (ROOT / "docs" / "viewer.md").read_text(encoding="utf-8")
    assert (ROOT / "docs" / "img" / "viewer-task-list.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "](img/viewer-task-list.png)" in viewer and "scripts/make_leaderboard_screenshot.py" in viewer
