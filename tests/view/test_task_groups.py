"""``mmtasks view``: the task list grouped by benchmark (the folder that holds each task), in
headless Chromium, and how a task's benchmark is found (registry folder, recorded group, itself)."""

from __future__ import annotations

import json
from pathlib import Path

import mmtasks
from mmtasks.view.benchmarks import BenchmarkRef, task_benchmarks
from mmtasks.view.records import load_view_run
from mmtasks.view.site import INDEX_JS, build_view
from tests.leaderboard.synthetic import BIG_CATEGORIES, big_run
from tests.leaderboard.test_leaderboard import browser  # noqa: F401  (the fixture: system Chromium through playwright)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


def test_a_tasks_benchmark_is_its_folder_else_its_recorded_group_else_itself(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    (inc / "mybench").mkdir(parents=True)
    (inc / "mybench" / "mybench.yaml").write_text("task: mybench_t\n", encoding="utf-8")  # no README: the folder's name
    found = task_benchmarks(["realbench_ranking_easy", "elsewhere_t", "lone_t", "mybench_t", "mmmu_val_art"],
                            {"elsewhere_t": {"group": ["made_elsewhere", "its_sub"]}, "lone_t": {"group": []}},
                            include_paths=[inc])
    assert found == {
        "realbench_ranking_easy": BenchmarkRef("realbench", "RealBench"),   # tasks/realbench, the card's title
        "elsewhere_t": BenchmarkRef("made_elsewhere", "made_elsewhere"),    # not in the registry: its first group
        "lone_t": BenchmarkRef("lone_t", "lone_t"),                         # nothing recorded: itself
        "mybench_t": BenchmarkRef("mybench", "mybench"),
        "mmmu_val_art": BenchmarkRef("mmmu", "MMMU (val)"),                 # one of the 30 tasks of tasks/mmmu
    }


def test_the_viewer_groups_the_task_list_by_benchmark(browser, tmp_path: Path) -> None:  # noqa: F811
    run = tmp_path / "run"
    mmtasks.evaluate(tasks="realbench_ranking_easy,muirbench,realbench_ranking_hard", model="random", data_dir=SAMPLE,
                     output_path=run, use_cache=False, allow_failures=True)
    site = tmp_path / "site"
    build_view([load_view_run(run)], site)
    text = (site / INDEX_JS).read_text()
    index = json.loads(text[text.index(",") + 1: text.rindex(")")])
    names = [t["name"] for t in index["tasks"]]
    assert [(t["benchmark"], t["benchmark_title"]) for t in index["tasks"]] == [
        {"realbench_ranking_easy": ("realbench", "RealBench"), "realbench_ranking_hard": ("realbench", "RealBench"),
         "muirbench": ("muirbench", "MUIRBench")}[n] for n in names]

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.goto((site / "index.html").as_uri())
    page.wait_for_selector("#docs tbody tr")
    groups = page.locator("#tasks details.task-group")
    first_seen = list(dict.fromkeys(t["benchmark"] for t in index["tasks"]))
    assert groups.evaluate_all("gs => gs.map(g => g.getAttribute('data-benchmark'))") == first_seen
    realbench = page.locator('#tasks details[data-benchmark="realbench"]')
    assert realbench.locator("summary .group-title").text_content() == "RealBench"
    assert sorted(realbench.locator(".task-tab").evaluate_all("bs => bs.map(b => b.firstChild.textContent)")) == [
        "realbench_ranking_easy", "realbench_ranking_hard"]
    n_docs = sum(t["n"] for t in index["tasks"] if t["benchmark"] == "realbench")
    assert realbench.locator("summary .count").text_content() == f"2 tasks, {n_docs} documents"
    assert page.locator('#tasks details[data-benchmark="muirbench"] .task-tab').count() == 1
    # a task of the group opens from it, and its button is the active one
    hard = names.index("realbench_ranking_hard")
    realbench.locator(f'.task-tab[data-task="{hard}"]').click()
    page.wait_for_function(f"location.hash === '#t={hard}'")
    assert page.locator(".task-tab.active").get_attribute("data-task") == str(hard)
    assert not problems, problems
    page.close()


def test_the_task_list_of_40_benchmarks_folds_by_benchmark(browser, tmp_path: Path) -> None:  # noqa: F811
    """A run of 40 benchmarks, 3 tasks each, that no task folder knows: grouped by the benchmark each
    task's recorded config names; every group folded but the open task's."""
    site = tmp_path / "site"
    build_view([load_view_run(big_run(tmp_path))], site)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.goto((site / "index.html").as_uri() + "#t=4")  # multi_image_2_part2
    page.wait_for_selector("#docs tbody tr")
    groups = page.locator("#tasks details.task-group")
    assert groups.count() == 40 == sum(BIG_CATEGORIES.values())
    assert page.locator("#tasks .task-tab").count() == 120
    assert groups.evaluate_all("gs => gs.filter(g => g.open).map(g => g.dataset.benchmark)") == ["multi_image_2"]
    assert page.locator('#tasks details[data-benchmark="video_3"] summary .count').text_content() == "3 tasks, 6 documents"
    # another group's task: its group opens, the earlier one stays as the reader left it
    page.locator('#tasks details[data-benchmark="documents_7"] summary').click()
    page.locator('#tasks details[data-benchmark="documents_7"] .task-tab', has_text="documents_7_part3").click()
    page.wait_for_function("location.hash === '#t=119'")
    assert page.locator(".task-tab.active").text_content() == "documents_7_part32"  # the name, then its count
    assert groups.evaluate_all("gs => gs.filter(g => g.open).map(g => g.dataset.benchmark)") == ["multi_image_2", "documents_7"]
    assert not problems, problems
    page.close()
