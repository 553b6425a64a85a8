"""Leaderboard sections as data: each benchmark folder's ``leaderboard.yaml``.

- the built-in sections (discovery, order) and mmtasks/leaderboard naming no benchmark;
- one-line errors naming the file and the key;
- discovery through the task registry's folders: include paths and installed packages';
- real runs (random model, random judge, data/sample) of MUIRBench and LLaVA-Bench landing
  on their own tabs; a benchmark folder given only through --include-path getting its tab.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mmtasks import registry
from mmtasks.cli import main
from mmtasks.errors import ConfigError
from mmtasks.leaderboard.build import build_leaderboard, load_runs, unused_tasks
from mmtasks.leaderboard.sections import discover_sections, load_section, load_sections
from tests.builders import folder_digest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mmtasks"
SAMPLE = ROOT / "data" / "sample"
BUILTIN_TASKS = ROOT / "tasks"

SMALL = """\
id: mybench
title: My Bench
description: "A copy of a multiple-choice benchmark under another name."
category: multi-image
headline: acc
columns:
  - {key: acc, label: Acc., title: "Accuracy (0-100)", task: mybench_mc, metric: acc}
charts:
  - id: by_relation
    title: Accuracy by image relation
    dimension: image_relation
    x_label: Relation
    y_label: Accuracy (0-100)
    style: bars
    options:
      - {label: Accuracy, task: mybench_mc, metric: acc}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def cli_run(out: Path, *args: str) -> dict:
    code = main(["--data-dir", str(SAMPLE), "--output-path", str(out), "--no-cache", "--no-progress", *args])
    assert code == 0
    return json.loads((out / "results.json").read_text())


def copy_benchmark(tmp_path: Path) -> Path:
    """An include-path folder holding a copy of the MUIRBench folder whose task is renamed
    ``mybench_mc``, with its own small leaderboard.yaml (id ``mybench``)."""
    root = tmp_path / "extra"
    dest = root / "mybench"
    shutil.copytree(BUILTIN_TASKS / "muirbench", dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "muirbench.yaml").rename(dest / "mybench.yaml")
    text = "\n" + (dest / "mybench.yaml").read_text(encoding="utf-8")
    assert "\ntask: muirbench\n" in text and "\ngroup: muirbench\n" in text
    text = text.replace("\ntask: muirbench\n", "\ntask: mybench_mc\n").replace("\ngroup: muirbench\n", "\ngroup: mybench\n")
    (dest / "mybench.yaml").write_text(text, encoding="utf-8")
    write(dest / "leaderboard.yaml", SMALL)
    return root


# --- the built-in sections --------------------------------------------------------------------


def test_builtin_sections_in_their_order() -> None:
    sections = discover_sections()
    ids = [s.id for s in sections]
    assert ids[:5] == ["realbench", "mmdu", "mmrc", "muirbench", "llava_bench_wild"]
    assert [i for i in ids if i in ("mmmu", "blink", "mantis_eval", "mmiu")] == ["mmmu", "blink", "mantis_eval", "mmiu"]
    realbench = sections[0]
    assert realbench.file == (BUILTIN_TASKS / "realbench" / "leaderboard.yaml").resolve()
    assert realbench.headline == "average" and len(realbench.tasks) == 8
    assert realbench.column("average").mean_of == [c.key for c in realbench.columns[:8]]
    muir = sections[3]
    assert (muir.headline, [c.metric for c in muir.columns]) == ("acc", ["acc"])
    assert {c.dimension for c in muir.charts} >= {"task", "image_relation"}
    llava = sections[4]
    assert [(c.key, c.metric) for c in llava.columns][:4] == [
        ("conv", "relative_score_conv"), ("detail", "relative_score_detail"),
        ("complex", "relative_score_complex"), ("relative_score", "relative_score")]


def test_the_leaderboard_package_names_no_benchmark() -> None:
    """The generic layer holds no benchmark's name: each is in its own folder's leaderboard.yaml."""
    names = set()
    for section in discover_sections():
        names |= {section.id.lower(), section.title.lower(), section.file.parent.name.lower()}
    names |= {p.name.lower() for p in BUILTIN_TASKS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    found = []
    for path in sorted((PACKAGE / "leaderboard").rglob("*")):
        if path.is_file() and path.suffix in {".py", ".js", ".html", ".css", ".yaml"}:
            text = path.read_text(encoding="utf-8").lower()
            found += [f"{path.relative_to(ROOT)}: {name}" for name in sorted(names)
                      if re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", text)]
    assert not found


def test_tasks_registry_does_not_take_a_section_for_a_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert "leaderboard.yaml" not in out and "warning" not in out


# --- errors: one line, the file and the key ------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (("label: Acc.,", "lable: Acc.,"), "columns.0.lable", "unknown key (did you mean 'label'?)"),
        (("headline: acc", "headline: acc\nbreakdowns: []"), "breakdowns", "unknown key"),
        (("headline: acc", "headline: accuracy"), "headline", "'accuracy' is not a column key"),
        (("task: mybench_mc, metric: acc}\ncharts", "task: mybench_mx, metric: acc}\ncharts"), "columns.0.task",
         "unknown task 'mybench_mx' (did you mean 'mybench_mc'?)"),
        (("task: mybench_mc, metric: acc}\n", "task: mybench_mc}\n"), "columns.0",
         "a column needs a task and a metric"),
        (("style: bars", "style: pie"), "charts.0.style", "Input should be 'line' or 'bars'"),
        (("      - {label: Accuracy, task: mybench_mc, metric: acc}", "      - {label: Accuracy, task: nope, metric: acc}"),
         "charts.0.options.0.task", "unknown task 'nope'"),
        (("title: My Bench\n", ""), "title", "required key is missing"),
        (("category: multi-image\n", ""), "category",
         "missing key 'category' (one of: multi-image, multi-turn, video, single-image, reasoning, documents)"),
        (("category: multi-image", "category: charts"), "category", "Input should be 'multi-image'"),
    ],
)
def test_section_errors_name_the_file_and_the_key(tmp_path: Path, change: tuple[str, str], field: str, words: str) -> None:
    old, new = change
    assert old in SMALL
    path = write(tmp_path / "leaderboard.yaml", SMALL.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load_section(path, known_tasks={"mybench_mc"})
    message = str(err.value)
    assert err.value.field == field and str(path) in message and words in message, message
    assert "\n" not in message


def test_computed_columns_and_paper_rows_are_checked(tmp_path: Path) -> None:
    mean = SMALL.replace("charts:", "  - {key: avg, label: Avg., title: Mean, mean_of: [acc, acc2]}\ncharts:")
    with pytest.raises(ConfigError) as err:
        load_section(write(tmp_path / "a" / "leaderboard.yaml", mean))
    assert err.value.field == "columns.1.mean_of.1" and "'acc2' is not a column filled by a task" in str(err.value)

    twice = SMALL.replace("charts:", "  - {key: acc, label: A, title: A, task: mybench_mc, metric: f1}\ncharts:")
    with pytest.raises(ConfigError, match="column key 'acc' is used twice") as err:
        load_section(write(tmp_path / "b" / "leaderboard.yaml", twice))
    assert err.value.field == "columns.1.key"

    papers = SMALL + "papers:\n  citation: Someone, Table 1\n  rows:\n    - {model: M, values: {acc: 50.0, acc_hard: 1.0}}\n"
    with pytest.raises(ConfigError) as err:
        load_section(write(tmp_path / "c" / "leaderboard.yaml", papers))
    assert err.value.field == "papers.rows.0.values" and "unknown column(s) acc_hard" in str(err.value)

    # a printed value outside its column's scale (a 0-2800 sum on the default 0-100)
    beyond = SMALL + "papers:\n  citation: Someone, Table 1\n  rows:\n    - {model: M, values: {acc: 1510.7}}\n"
    with pytest.raises(ConfigError) as err:
        load_section(write(tmp_path / "e" / "leaderboard.yaml", beyond))
    assert err.value.field == "papers.rows.0.values.acc" and "1510.7 is outside column 'acc''s scale 0-100" in str(err.value)
    assert load_section(write(tmp_path / "f" / "leaderboard.yaml", beyond.replace("metric: acc}", "metric: acc, scale_max: 2800}", 1)))

    with pytest.raises(ConfigError) as err:
        load_section(write(tmp_path / "d" / "leaderboard.yaml", SMALL + "  - [oops\n"))
    assert "malformed YAML" in str(err.value) and err.value.line is not None


def test_two_sections_with_one_id_are_an_error(tmp_path: Path) -> None:
    first = write(tmp_path / "one" / "a" / "leaderboard.yaml", SMALL)
    second = write(tmp_path / "two" / "b" / "leaderboard.yaml", SMALL)
    with pytest.raises(ConfigError) as err:
        load_sections([tmp_path / "one", tmp_path / "two"])
    assert err.value.file == str(second.resolve()) and str(first.resolve()) in str(err.value)
    assert err.value.field == "id"
    # the same folder twice (an include path inside another) is one section
    assert [s.id for s in load_sections([tmp_path / "one", tmp_path / "one" / "a"])] == ["mybench"]


def test_the_cli_reports_a_bad_section_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = copy_benchmark(tmp_path)
    bad = SMALL.replace("headline: acc", "headline: accc")
    write(extra / "mybench" / "leaderboard.yaml", bad)
    code = main(["leaderboard", "build", "--include-path", str(extra), "--out", str(tmp_path / "S")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"mmtasks: error: {(extra / 'mybench' / 'leaderboard.yaml').resolve()}, field 'headline': 'accc' is not a column key "
        "(did you mean 'acc'?)"]


# --- discovery -------------------------------------------------------------------------------------


def test_discovery_order_builtin_then_installed_packages_then_include_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def folder(name: str, order: str = "") -> Path:
        root = tmp_path / name
        write(root / name / f"{name}.yaml", f"task: {name}_t\n")
        write(root / name / "leaderboard.yaml", SMALL.replace("mybench_mc", f"{name}_t").replace("id: mybench", f"id: {name}")
              + order)
        return root

    installed = registry.Registry("task folder", field="--include-path")
    installed.register("pkg", folder("pkg"))
    monkeypatch.setattr(registry, "task_folders", installed)
    zeta, alpha, early = folder("zeta"), folder("alpha"), folder("early", "order: 15\n")
    ids = [s.id for s in discover_sections([zeta, alpha, early])]
    # with an order: ascending (between the built-ins); without: built-in, installed, include paths as given
    # (the built-ins from their files: a benchmark folder landing does not change this test)
    builtin = load_sections([BUILTIN_TASKS])
    ordered = [s for s in builtin if s.order is not None]
    assert ids == ([s.id for s in ordered if (s.order or 0) <= 15] + ["early"] + [s.id for s in ordered if (s.order or 0) > 15]
                   + [s.id for s in builtin if s.order is None] + ["pkg", "zeta", "alpha"])
    assert ids[:3] == ["realbench", "early", "mmdu"]  # realbench 10, early 15, mmdu 20


def test_a_tab_needs_a_row() -> None:
    """No run of its tasks and no paper rows: no tab (an empty tab would say nothing)."""
    assert build_leaderboard([], include_paper=False).benchmarks == []
    with_papers = [s.id for s in discover_sections() if s.papers is not None and s.papers.rows]
    assert [b.id for b in build_leaderboard([]).benchmarks] == with_papers  # their papers' rows
    assert {"realbench", "mmdu", "mmrc", "mmmu", "blink"} <= set(with_papers) and "muirbench" not in with_papers


# --- real runs of the new benchmarks land on their own tabs ----------------------------------


def test_muirbench_and_llava_bench_runs_land_on_their_own_tabs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, site = tmp_path / "R", tmp_path / "S"
    res = cli_run(run_dir, "--tasks", "muirbench,llava_bench_wild", "--model", "random", "--judge", "random")
    capsys.readouterr()
    assert main(["leaderboard", "build", str(run_dir), "--out", str(site)]) == 0
    captured = capsys.readouterr()
    assert "not on the leaderboard" not in captured.err
    assert "MUIRBench 1 run / 0 paper" in captured.out and "LLaVA-Bench (In-the-Wild) 1 run / 0 paper" in captured.out
    board = json.loads((site / "leaderboard.json").read_text())
    tabs = {b["id"]: b for b in board["benchmarks"]}
    shown = [s.id for s in discover_sections() if s.id in ("muirbench", "llava_bench_wild") or (s.papers and s.papers.rows)]
    assert list(tabs) == shown and shown[:5] == ["realbench", "mmdu", "mmrc", "muirbench", "llava_bench_wild"]  # + tabs with paper rows

    # MUIRBench uses no judge: the row is ranked, whatever --judge said
    [muir] = tabs["muirbench"]["entries"]
    assert (muir["model"], muir["ranked"], muir["chance_judge"]) == ("random", True, False)
    acc = res["results"]["muirbench"]["acc"]
    coverage = res.get("coverage", {}).get("muirbench", {}).get("percent")
    assert muir["values"]["acc"] == {"value": acc, "stderr": res["results"]["muirbench"]["acc_stderr"],
                                     "n": 9, "missing": None, "coverage": coverage}
    charts = {c["id"]: c for c in tabs["muirbench"]["charts"]}
    assert charts["by_task"]["buckets"] == sorted(res["breakdowns"]["muirbench"]["task"])
    assert charts["by_image_relation"]["buckets"] == sorted(res["breakdowns"]["muirbench"]["image_relation"])
    assert muir["breakdowns"]["muirbench"]["task"] == {
        task: {k: float(v) for k, v in bucket.items()} for task, bucket in res["breakdowns"]["muirbench"]["task"].items()}

    # LLaVA-Bench is judged: the random judge's row is marked and never ranked
    [llava] = tabs["llava_bench_wild"]["entries"]
    assert (llava["ranked"], llava["chance_judge"], llava["judge"]) == (False, True, "random")
    scores = res["results"]["llava_bench_wild"]
    assert {k: llava["values"][k]["value"] for k in ("relative_score", "conv", "detail", "complex",
                                                    "model_score", "reference_score")} == {
        "relative_score": scores["relative_score"], "conv": scores["relative_score_conv"],
        "detail": scores["relative_score_detail"], "complex": scores["relative_score_complex"],
        "model_score": scores["model_score_mean"], "reference_score": scores["reference_score_mean"]}
    [by_category] = tabs["llava_bench_wild"]["charts"]
    assert by_category["buckets"] == ["conv", "detail", "complex"]  # bucket_order, not alphabetical
    assert tabs["llava_bench_wild"]["headline"] == "relative_score"


# --- a benchmark folder given only through --include-path -------------------------------------


def test_an_include_path_benchmark_gets_its_tab_without_a_package_edit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = folder_digest(PACKAGE)
    extra = copy_benchmark(tmp_path)
    run_dir, site = tmp_path / "R", tmp_path / "S"
    res = cli_run(run_dir, "--tasks", "mybench_mc", "--model", "random", "--include-path", str(extra))
    capsys.readouterr()

    # without the include path, the task is on no tab
    assert main(["leaderboard", "build", str(run_dir), "--out", str(tmp_path / "plain")]) == 0
    assert "run R: tasks without a leaderboard.yaml, shown in the automatic tab 'Other tasks': mybench_mc" in capsys.readouterr().err
    assert unused_tasks(load_runs([run_dir])) == {"R": ["mybench_mc"]}

    assert main(["leaderboard", "build", str(run_dir), "--include-path", str(extra), "--out", str(site),
                 "--no-paper"]) == 0
    captured = capsys.readouterr()
    assert "not on the leaderboard" not in captured.err
    assert "My Bench 1 run / 0 paper" in captured.out
    board = json.loads((site / "leaderboard.json").read_text())
    [tab] = board["benchmarks"]  # --no-paper: the tabs without rows are left out
    assert (tab["id"], tab["title"], tab["headline"]) == ("mybench", "My Bench", "acc")
    assert [(c["key"], c["label"], c["task"], c["metric"]) for c in tab["columns"]] == [("acc", "Acc.", "mybench_mc", "acc")]
    [row] = tab["entries"]
    assert row["values"]["acc"]["value"] == res["results"]["mybench_mc"]["acc"] and row["ranked"]
    assert tab["charts"][0]["buckets"] == sorted(res["breakdowns"]["mybench_mc"]["image_relation"])
    assert "window.LEADERBOARD" in (site / "leaderboard.js").read_text()

    # the plots read the same sections
    pytest.importorskip("matplotlib")
    assert main(["leaderboard", "plot", str(run_dir), "--include-path", str(extra), "--out", str(tmp_path / "fig"),
                 "--format", "svg"]) == 0
    assert (tmp_path / "fig" / "mybench_bar.svg").is_file() and (tmp_path / "fig" / "mybench_by_relation.svg").is_file()
    assert folder_digest(PACKAGE) == before


def test_a_task_without_leaderboard_yaml_gets_the_automatic_tab(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every run shows on the leaderboard: a task no leaderboard.yaml names gets a column of the
    automatic "Other tasks" tab (its primary metric); a run with no score at all is nothing to show."""
    extra = copy_benchmark(tmp_path)
    run_dir = tmp_path / "R"
    res = cli_run(run_dir, "--tasks", "mybench_mc", "--model", "random", "--include-path", str(extra), "--limit", "1")
    capsys.readouterr()
    assert main(["leaderboard", "build", str(run_dir), "--no-paper", "--out", str(tmp_path / "S")]) == 0
    board = json.loads((tmp_path / "S" / "leaderboard.json").read_text())
    [tab] = board["benchmarks"]
    assert (tab["id"], tab["title"], tab["headline"]) == ("other-tasks", "Other tasks", "mybench_mc.acc")
    assert [(c["key"], c["label"], c["task"], c["metric"]) for c in tab["columns"]] == [
        ("mybench_mc.acc", "mybench_mc", "mybench_mc", "acc")]
    [row] = tab["entries"]
    assert row["values"]["mybench_mc.acc"]["value"] == res["results"]["mybench_mc"]["acc"]
    # a run whose task has no score has no value to show: still one line
    predicted = tmp_path / "P"
    shutil.copytree(run_dir, predicted)
    raw = json.loads((predicted / "results.json").read_text())
    raw["results"]["mybench_mc"] = {"alias": "mybench_mc", "acc": None}
    (predicted / "results.json").write_text(json.dumps(raw))
    assert main(["leaderboard", "build", str(predicted), "--no-paper", "--out", str(tmp_path / "S2")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("mmtasks: error: nothing to show: no run holds a task of a benchmark on the leaderboard, "
                              "and --no-paper set")
    assert not (tmp_path / "S2" / "leaderboard.json").exists()


# --- the documented format -------------------------------------------------------------------


def test_the_documented_examples_are_valid_sections(tmp_path: Path) -> None:
    guide = (ROOT / "docs" / "authors" / "tasks.md").read_text(encoding="utf-8")
    doc = (ROOT / "docs" / "leaderboard-schema.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", guide + doc, re.S) if "\nheadline:" in b]
    assert len(blocks) == 2
    for i, block in enumerate(blocks):
        section = load_section(write(tmp_path / str(i) / "leaderboard.yaml", block),
                               known_tasks={"colour_count", "colour_compare"})
        assert section.id == "my_bench" and section.papers is not None and section.papers.rows


def test_the_schema_doc_covers_every_key_of_leaderboard_yaml() -> None:
    from mmtasks.leaderboard.sections import ChartSpec, PaperRow, PaperTable, Section

    doc = (ROOT / "docs" / "leaderboard-schema.md").read_text(encoding="utf-8")
    keys = [f"{m.__name__}.{name}" for m in (Section, ChartSpec, PaperTable, PaperRow) for name in m.model_fields
            if f"`{name}`" not in doc]
    assert not keys, f"document these in docs/leaderboard-schema.md: {keys}"


# --- the page: a tab without paper rows or radar, long bucket names ----------------------------


def test_the_page_shows_a_new_benchmarks_tab(tmp_path: Path) -> None:
    """A MUIRBench run on the page (file://): its tab, no stray text where a citation or a
    radar would be, and its task names as tilted bucket labels."""
    from tests.leaderboard.test_leaderboard import CHROMIUM, CHROMIUM_ARGS

    playwright_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.fail(f"the browser test needs Chromium at {CHROMIUM}: apt-get install -y chromium")
    run_dir, site = tmp_path / "R", tmp_path / "S"
    res = cli_run(run_dir, "--tasks", "muirbench", "--model", "random")
    assert main(["leaderboard", "build", str(run_dir), "--out", str(site)]) == 0
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            problems: list[str] = []
            page.on("pageerror", lambda err: problems.append(str(err)))
            page.goto((site / "index.html").as_uri() + "#muirbench")
            page.wait_for_selector("#board-muirbench tbody tr")
            assert page.locator("#tab-muirbench").get_attribute("aria-selected") == "true"
            value = page.locator('#board-muirbench td[data-key="acc"] .value').text_content()
            assert value == f"{res['results']['muirbench']['acc']:.2f}"
            panel_text = page.locator("#panel").evaluate(
                "p => Array.from(p.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join('')")
            assert panel_text == ""  # no "null" where the citation and the radar would be
            assert page.locator("#panel .radar-card").count() == 0
            ticks = page.locator("#chart-muirbench-by_task text.tick[transform]")
            assert ticks.count() == len(res["breakdowns"]["muirbench"]["task"])  # tilted: the names are long
            assert page.locator("#chart-muirbench-by_options text.tick[transform]").count() == 0
            assert not problems
        finally:
            browser.close()


def test_a_column_without_direction_marks_no_best_value(tmp_path: Path) -> None:
    """POPE's yes-ratio column (``higher_is_better: null``: 50% is ideal, neither end) gets no "best"
    cell on the page, where its F1 column does; a headline needs a direction."""
    from tests.leaderboard.test_leaderboard import CHROMIUM, CHROMIUM_ARGS

    section = next(s for s in discover_sections() if s.id == "pope")
    assert section.column("adv_yes").higher_is_better is None
    no_direction = SMALL.replace("metric: acc}", "metric: acc, higher_is_better: null}", 1)
    with pytest.raises(ConfigError) as err:
        load_section(write(tmp_path / "x" / "leaderboard.yaml", no_direction))
    assert err.value.field == "columns.0.higher_is_better" and "the headline needs a direction" in str(err.value)

    playwright_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.fail(f"the browser test needs Chromium at {CHROMIUM}: apt-get install -y chromium")
    runs = [tmp_path / "A", tmp_path / "B"]
    for run_dir, name in zip(runs, ("one", "two")):
        cli_run(run_dir, "--tasks", "pope", "--model", "random", "--run-name", name)
    site = tmp_path / "S"
    assert main(["leaderboard", "build", *map(str, runs), "--out", str(site), "--no-paper"]) == 0
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto((site / "index.html").as_uri() + "#pope")
            page.wait_for_selector("#board-pope tbody tr")
            assert page.locator('#board-pope td[data-key="adv_yes"] .value').count() == 2
            assert page.locator('#board-pope td.best[data-key="adversarial"]').count() >= 1
            assert page.locator('#board-pope td.best[data-key="adv_yes"]').count() == 0
        finally:
            browser.close()
