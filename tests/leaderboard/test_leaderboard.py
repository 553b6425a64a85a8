"""The static leaderboard: build from fixture runs, the site, the figures, and the page in Chromium.

Fixture runs (tests/fixtures/runs/, results.json written by hand in the runner's layout):
- qwen2vl7b-realbench-2025-11-26: hf:Qwen/Qwen2-VL-7B-Instruct, all 8 RealBench subtasks
- qwen2vl7b-ranking-hard-rerun-2025-11-28: same model and args, a newer realbench_ranking_hard
- qwen2vl7b-mmdu-mmrc-2025-11-27: same model, MMDU and MMRC with a judge and breakdowns
- internvl2-8b-partial-2025-11-29: two RealBench subtasks; MMRC whose rp is null
- markup-name-2025-11-29: MMDU for a model whose name is HTML with a script
- random-baseline-2025-11-25: the random baseline on retrieval and ranking only
"""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmtasks.errors import DataError
from mmtasks.leaderboard import schema as lb_schema
from mmtasks.leaderboard.build import build_leaderboard, load_runs, unused_tasks
from mmtasks.leaderboard.cli import main as leaderboard_main
from mmtasks.leaderboard.sections import discover_sections
from mmtasks.leaderboard.plot import plot_leaderboard
from mmtasks.leaderboard.results import load_run
from mmtasks.leaderboard.schema import Benchmark, Entry, Leaderboard
from mmtasks.leaderboard.site import DATA_JS, DATA_JSON, write_site
from tests.builders import serving

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "fixtures" / "runs"
QWEN = "hf:Qwen/Qwen2-VL-7B-Instruct"
INTERNVL = "vllm:OpenGVLab/InternVL2-8B"
XSS_NAME = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def fixture_runs() -> list[Path]:
    return sorted(p for p in RUNS.iterdir() if (p / "results.json").is_file())


@pytest.fixture(scope="module")
def board() -> Leaderboard:
    return build_leaderboard(load_runs(fixture_runs()), now=1764460800.0)


def bench(board: Leaderboard, bench_id: str) -> Benchmark:
    return next(b for b in board.benchmarks if b.id == bench_id)


def run_entry(board: Leaderboard, bench_id: str, model: str) -> Entry:
    matches = [e for e in bench(board, bench_id).entries if e.source == "run" and e.model == model]
    assert len(matches) == 1, f"expected one {model} entry on {bench_id}, got {len(matches)}"
    return matches[0]


# --- build --------------------------------------------------------------------------------


def test_build_reads_values_stderr_and_samples(board: Leaderboard) -> None:
    qwen = run_entry(board, "realbench", QWEN)
    assert qwen.values["retrieval_easy"].value == 15.2
    assert qwen.values["retrieval_easy"].stderr == 1.1
    assert qwen.values["retrieval_easy"].n == 556
    assert qwen.values["extraction_hard"].value == 13.9
    assert qwen.model_args == {"dtype": "bfloat16"}
    assert qwen.mmtasks_version == "0.1.0"
    # every metric of the task is kept, not only the column's
    assert qwen.metrics["realbench_retrieval_hard"]["f1"] == 2.7
    # counters are not metrics (older files still hold them among the metrics): problems has them
    assert "unparsed" not in qwen.metrics["realbench_ranking_easy"]
    assert qwen.problems["realbench_ranking_easy"] == {"request_failures": 0, "unparsed": 1}
    assert qwen.n_samples["realbench_ranking_easy"].effective == 556
    assert qwen.breakdowns["realbench_retrieval_easy"]["n_images"]["7-9"] == {"acc": 13.0, "n": 260.0}

    mmdu = run_entry(board, "mmdu", QWEN)
    assert mmdu.values["overall"].value == 40.1
    assert mmdu.values["image_relationship_understanding"].value == 38.9
    assert mmdu.judge == "openai:gpt-4o-2024-05-13"
    assert mmdu.metrics["mmdu"]["creativity_macro"] == 33.3
    assert "judge_failures" not in mmdu.metrics["mmdu"] and mmdu.problems["mmdu"] == {"judge_failures": 1}

    mmrc = run_entry(board, "mmrc", QWEN)
    assert [mmrc.values[k].value for k in ("ie", "cr", "iu", "im", "mr", "ar")] == [2.9, 3.6, 2.5, 2.2, 2.2, 1.6]
    assert (mmrc.values["ep"].value, mmrc.values["imp"].value, mmrc.values["rp"].value) == (0.54, 0.41, 31.2)


def test_newest_run_wins_per_task_and_average_uses_it(board: Leaderboard) -> None:
    qwen = run_entry(board, "realbench", QWEN)
    # the rerun (2025-11-28) replaces ranking_hard 22.0 of the full run (2025-11-26)
    assert qwen.values["ranking_hard"].value == 25.0
    assert qwen.values["ranking_hard"].stderr == 3.1
    assert qwen.breakdowns["realbench_ranking_hard"]["n_images"]["7-9"]["acc"] == 27.0
    subtasks = [15.2, 1.5, 24.0, 25.0, 10.4, 13.9, 7.1, 6.0]
    assert qwen.values["average"].value == pytest.approx(sum(subtasks) / 8)
    assert qwen.values["average"].n == 8 * 556
    assert qwen.date == "2025-11-28T00:00:00Z"
    refs = {ref.run: ref.tasks for ref in qwen.runs}
    assert refs["qwen2vl7b-ranking-hard-rerun-2025-11-28"] == ["realbench_ranking_hard"]
    assert len(refs["qwen2vl7b-realbench-2025-11-26"]) == 7
    assert [ref.run for ref in qwen.runs][0] == "qwen2vl7b-ranking-hard-rerun-2025-11-28"


def test_newest_wins_whatever_the_argument_order(tmp_path: Path) -> None:
    runs = fixture_runs()
    forward = build_leaderboard(load_runs(runs), include_paper=False)
    backward = build_leaderboard(load_runs(list(reversed(runs))), include_paper=False)
    assert run_entry(backward, "realbench", QWEN).values["ranking_hard"].value == 25.0
    assert run_entry(forward, "realbench", QWEN).values == run_entry(backward, "realbench", QWEN).values


def test_other_model_args_make_another_entry(tmp_path: Path) -> None:
    raw = json.loads((RUNS / "qwen2vl7b-ranking-hard-rerun-2025-11-28" / "results.json").read_text())
    raw["config"]["model_args"] = {"dtype": "float16"}
    raw["date"] += 86400
    run = tmp_path / "fp16"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(raw))
    built = build_leaderboard(load_runs([*fixture_runs(), run]), include_paper=False)
    qwens = [e for e in bench(built, "realbench").entries if e.model_spec == QWEN]
    assert sorted(e.values["ranking_hard"].value for e in qwens) == [25.0, 25.0]
    assert sorted(json.dumps(e.model_args) for e in qwens) == ['{"dtype": "bfloat16"}', '{"dtype": "float16"}']
    fp16 = next(e for e in qwens if e.model_args == {"dtype": "float16"})
    assert fp16.values["retrieval_easy"].value is None  # not inherited from the bfloat16 runs


def test_missing_values_are_null_with_a_reason_never_zero(board: Leaderboard, tmp_path: Path) -> None:
    internvl = run_entry(board, "realbench", INTERNVL)
    assert internvl.values["ranking_hard"].value == 28.4
    assert internvl.values["retrieval_easy"].value is None
    assert "realbench_retrieval_easy" in (internvl.values["retrieval_easy"].missing or "")
    assert internvl.values["average"].value is None
    assert "retrieval_easy" in (internvl.values["average"].missing or "")
    rp = run_entry(board, "mmrc", INTERNVL).values["rp"]  # null in results.json
    assert rp.value is None and "rp" in (rp.missing or "")
    random_row = run_entry(board, "realbench", "random")
    assert random_row.values["ranking_easy"].value == 25.3
    assert random_row.values["reasoning_hard"].value is None

    out = tmp_path / "site"
    write_site(board, out)
    data = json.loads((out / DATA_JSON).read_text())
    realbench = next(b for b in data["benchmarks"] if b["id"] == "realbench")
    row = next(e for e in realbench["entries"] if e["model"] == INTERNVL)
    assert row["values"]["retrieval_easy"]["value"] is None
    assert row["values"]["average"]["value"] is None


def test_tasks_outside_the_columns_are_reported(tmp_path: Path) -> None:
    raw = json.loads((RUNS / "random-baseline-2025-11-25" / "results.json").read_text())
    raw["results"]["realbench_unanswerable"] = {"acc": 3.0}
    run = tmp_path / "with-unanswerable"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(raw))
    assert unused_tasks(load_runs([run])) == {"with-unanswerable": ["realbench_unanswerable"]}


def test_breakdown_buckets_in_natural_order(board: Leaderboard) -> None:
    charts = {(b.id, c.id): c.buckets for b in board.benchmarks for c in b.charts}
    assert charts[("realbench", "by_image_count")] == ["1-6", "7-9", "10-18"]
    assert charts[("mmdu", "by_turn")] == [str(t) for t in range(1, 16)]
    assert charts[("mmrc", "by_length")] == ["[4,6)", "[6,9)", "[9,12)", "[12,15)", "[15,18)", "[18,22]"]
    assert charts[("mmrc", "by_updates")] == ["1", "2", "3", "4"]


def test_paper_rows_are_marked_and_cited(board: Leaderboard) -> None:
    realbench = bench(board, "realbench")
    gpt4o = next(e for e in realbench.entries if e.source == "paper" and e.model == "GPT-4o")
    assert gpt4o.values["average"].value == 40.68
    assert gpt4o.values["retrieval_easy"].value == 65.33
    assert gpt4o.citation is not None and "Table 1" in gpt4o.citation.text and "2509.17421" in gpt4o.citation.text
    assert realbench.citation is not None
    assert all(e.source == "run" for e in realbench.entries[:3])  # runs first, then the paper
    notes = [e for e in bench(board, "mmrc").entries if e.strategy == "notetaking"]
    assert [e.model for e in notes] == ["GPT-4o", "MiniCPM-8B", "LLaVA-V1.5-7B"]
    assert notes[0].values["ie"].value == 4.51
    assert notes[0].values["cr"].value is None and notes[0].values["cr"].missing == "not reported by the paper"
    assert len({e.id for e in bench(board, "mmrc").entries}) == len(bench(board, "mmrc").entries)

    without = build_leaderboard(load_runs(fixture_runs()), include_paper=False)
    assert all(e.source == "run" for b in without.benchmarks for e in b.entries)
    assert all(b.citation is None for b in without.benchmarks)


def test_paper_numbers_are_self_consistent() -> None:
    """Catches typos in the papers' rows of each leaderboard.yaml: the papers' averages are means of their columns."""
    tables = {section.id: section.papers for section in discover_sections() if section.papers is not None}
    for row in tables["realbench"].rows:
        parts = [v for k, v in row.values.items() if k != "average"]
        assert len(parts) == 8 and sum(parts) / 8 == pytest.approx(row.values["average"], abs=0.011), row.model
    for row in tables["mmrc"].rows:
        if "overall" in row.values:
            abilities = [row.values[k] for k in ("ie", "cr", "iu", "im", "mr", "ar")]
            assert sum(abilities) / 6 == pytest.approx(row.values["overall"], abs=0.011), row.model
    assert len(tables["mmdu"].rows) == 7 and tables["mmdu"].rows[0].values["overall"] == 70.2


# --- reading results.json ---------------------------------------------------------------------


def _write_run(tmp_path: Path, raw: object, name: str = "bad-run") -> Path:
    run = tmp_path / name
    run.mkdir()
    (run / "results.json").write_text(raw if isinstance(raw, str) else json.dumps(raw))
    return run


def test_malformed_results_json_names_file_and_field(tmp_path: Path) -> None:
    raw = json.loads((RUNS / "markup-name-2025-11-29" / "results.json").read_text())
    raw["results"]["mmdu"]["overall"] = [35.2]
    run = _write_run(tmp_path, raw)
    with pytest.raises(DataError) as err:
        load_run(run)
    assert str(run / "results.json") in str(err.value)
    assert err.value.field == "results.mmdu.overall"
    assert "expected a number" in str(err.value)

    del raw["config"]["model"]
    raw["results"]["mmdu"]["overall"] = 35.2
    run = _write_run(tmp_path, raw, "no-model")
    with pytest.raises(DataError) as err:
        load_run(run)
    assert err.value.field == "config.model"
    assert "no-model" in str(err.value)


def test_unreadable_results_json(tmp_path: Path) -> None:
    run = _write_run(tmp_path, '{"results": {}\n  "config": {}}')
    with pytest.raises(DataError) as err:
        load_run(run)
    assert err.value.line == 2 and "not valid JSON" in str(err.value)

    empty = tmp_path / "runs"
    (empty / "run-a").mkdir(parents=True)
    (empty / "run-a" / "results.json").write_text("{}")
    with pytest.raises(DataError) as err:
        load_run(empty)
    assert "no results.json" in str(err.value) and "runs/*" in str(err.value)
    with pytest.raises(DataError, match="does not exist"):
        load_run(tmp_path / "nowhere")


# --- schema and site files ------------------------------------------------------------------


def test_schema_doc_covers_every_field() -> None:
    doc = (ROOT / "docs" / "leaderboard-schema.md").read_text()
    assert f"version {lb_schema.SCHEMA_VERSION}" in doc
    models = [lb_schema.Leaderboard, lb_schema.Benchmark, lb_schema.Column, lb_schema.Chart,
              lb_schema.ChartOption, lb_schema.Entry, lb_schema.Cell, lb_schema.RunRef,
              lb_schema.Citation, lb_schema.NSamples, lb_schema.Coverage, lb_schema.Variant]
    undocumented = [f"{m.__name__}.{name}" for m in models for name in m.model_fields if f"`{name}`" not in doc]
    assert not undocumented, f"document these in docs/leaderboard-schema.md: {undocumented}"


def test_site_files_and_data_script(board: Leaderboard, tmp_path: Path) -> None:
    out = tmp_path / "site"
    written = write_site(board, out)
    assert sorted(p.name for p in written) == sorted(["index.html", "app.js", "style.css", DATA_JSON, DATA_JS])
    data = json.loads((out / DATA_JSON).read_text())
    assert data["schema_version"] == 2 and data["generated_at"] == "2025-11-30T00:00:00Z"
    Leaderboard.model_validate(data)
    script = (out / DATA_JS).read_text()
    prefix = "window.LEADERBOARD = "
    assert script.startswith(prefix) and script.rstrip().endswith(";")
    assert json.loads(script[len(prefix):].rstrip().rstrip(";")) == data
    assert "<" not in script and ">" not in script  # no string can close a script tag
    page = (out / "index.html").read_text()
    assert '<script src="leaderboard.js"></script>' in page and "http" not in page.split("<body>")[1]


def test_cli_build_and_module_entry_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lb"
    assert leaderboard_main(["build", *map(str, fixture_runs()), "--out", str(out), "--no-paper"]) == 0
    assert "RealBench 3 run / 0 paper" in capsys.readouterr().out
    assert (out / "index.html").is_file() and (out / DATA_JS).is_file()
    assert leaderboard_main(["build", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err

    result = subprocess.run(
        [sys.executable, "-m", "mmtasks.leaderboard", "build", str(RUNS / "markup-name-2025-11-29"),
         "--out", str(tmp_path / "lb2")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "lb2" / DATA_JSON).read_text())
    assert [e["model"] for e in next(b for b in data["benchmarks"] if b["id"] == "mmdu")["entries"]][0] == XSS_NAME


# --- figures --------------------------------------------------------------------------------


def test_plot_writes_png_and_svg(board: Leaderboard, tmp_path: Path) -> None:
    written = plot_leaderboard(board, tmp_path / "fig", formats=["png", "svg"])
    stems = {p.stem for p in written}
    assert stems == {
        "realbench_bar", "realbench_radar", "realbench_by_image_count",
        "mmdu_bar", "mmdu_radar", "mmdu_by_turn",
        "mmrc_bar", "mmrc_radar", "mmrc_by_length", "mmrc_by_updates",
    }
    for path in written:
        assert path.stat().st_size > 2000, path
        head = path.read_bytes()[:200]
        assert head.startswith(b"\x89PNG") if path.suffix == ".png" else b"<svg" in path.read_bytes()[:2000]
    assert len(written) == 20


def test_plot_cli_formats(tmp_path: Path) -> None:
    runs = [str(RUNS / "qwen2vl7b-mmdu-mmrc-2025-11-27")]
    assert leaderboard_main(["plot", *runs, "--out", str(tmp_path / "f"), "--format", "svg"]) == 0
    assert sorted(p.name for p in (tmp_path / "f").iterdir() if p.name != ".mmtasks-output.json") == [
        "mmdu_bar.svg", "mmdu_by_turn.svg", "mmdu_radar.svg",
        "mmrc_bar.svg", "mmrc_by_length.svg", "mmrc_by_updates.svg", "mmrc_radar.svg",
    ]
    assert leaderboard_main(["plot", *runs, "--out", str(tmp_path / "g"), "--format", "gif"]) == 2


# --- the page in headless Chromium --------------------------------------------------------------


@pytest.fixture()
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser test needs playwright: pip install playwright (browsers are not downloaded; "
                    "it drives the system Chromium)")
    if not CHROMIUM.exists():
        pytest.fail(f"the browser test needs Chromium at {CHROMIUM}: "
                    "apt-get install -y chromium (Debian/Ubuntu); never `playwright install`")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture()
def served_site(board: Leaderboard, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    site = tmp_path / "site"
    write_site(board, site)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    with serving(server) as port:
        yield f"http://127.0.0.1:{port}/index.html", site


def _column_texts(page, key: str) -> list[str]:
    return page.locator(f'#board-realbench tbody td[data-key="{key}"]').evaluate_all(
        "cells => cells.map(c => c.querySelector('.value') ? c.querySelector('.value').textContent : c.textContent)")


def test_page_in_headless_chromium(browser, served_site, tmp_path: Path) -> None:
    url, site = served_site
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type in ("error", "warning") else None)
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.goto(url)
    page.wait_for_selector("#overview tbody tr")  # the page opens on the overview; a benchmark's name opens its page
    page.locator('#overview th[data-bench="realbench"] a').click()
    page.wait_for_selector("#board-realbench tbody tr")
    assert page.url.endswith("#realbench")

    # table values (runs, a paper row, missing values shown as a dash with a reason)
    qwen_id = run_entry_id(site, "realbench", QWEN)
    row = page.locator(f'#board-realbench tr[data-entry="{qwen_id}"]')
    assert row.locator('td[data-key="ranking_hard"] .value').text_content() == "25.00"
    assert row.locator('td[data-key="average"] .value').text_content() == "12.89"
    assert row.locator('td[data-key="retrieval_easy"] .stderr').text_content() == "\u00b11.1"
    internvl = page.locator(f'#board-realbench tr[data-entry="{run_entry_id(site, "realbench", INTERNVL)}"]')
    missing = internvl.locator('td[data-key="retrieval_easy"]')
    assert missing.text_content() == "\u2013"
    assert "no run" in (missing.get_attribute("title") or "")
    assert internvl.locator('td[data-key="average"]').text_content() == "\u2013"
    paper_gpt4o = page.locator("#board-realbench tr.paper-row", has_text="GPT-4o")
    assert paper_gpt4o.locator(".badge-paper").text_content() == "paper"
    assert paper_gpt4o.locator('td[data-key="average"] .value').text_content() == "40.68"
    assert page.locator("#board-realbench tbody tr").count() == 9

    # default sort: headline descending, missing last
    averages = _column_texts(page, "average")
    assert averages[:3] == ["46.88", "40.68", "35.54"] and averages[-2:] == ["\u2013", "\u2013"]

    # clicking a header sorts by it, clicking again reverses; missing values stay last
    header = page.locator('#board-realbench th[data-key="ranking_hard"] button')
    header.click()
    assert page.locator('#board-realbench th[data-key="ranking_hard"]').get_attribute("aria-sort") == "descending"
    values = [float(v) for v in _column_texts(page, "ranking_hard")]
    assert values == sorted(values, reverse=True) and values[0] == 32.59
    page.locator('#board-realbench th[data-key="ranking_hard"] button').click()
    assert page.locator('#board-realbench th[data-key="ranking_hard"]').get_attribute("aria-sort") == "ascending"
    values = [float(v) for v in _column_texts(page, "ranking_hard")]
    assert values == sorted(values) and values[0] == 23.61
    page.locator('#board-realbench th[data-key="extraction_easy"] button').click()
    page.locator('#board-realbench th[data-key="extraction_easy"] button').click()  # ascending
    texts = _column_texts(page, "extraction_easy")
    assert texts[-1] == "\u2013" and texts[0] == "9.30"  # random has no extraction: last, even ascending

    # hide and show the paper rows
    page.locator("#toggle-paper").uncheck()
    assert page.locator("#board-realbench tr.paper-row").count() == 0
    assert page.locator("#board-realbench tbody tr").count() == 3
    page.locator("#toggle-paper").check()
    page.locator('#board-realbench th[data-key="average"] button').click()  # back to best-first
    assert page.locator("#board-realbench tr.paper-row").count() == 6
    assert page.locator(".radar-card").count() == 9
    by_images = page.locator("#chart-realbench-by_image_count")
    assert by_images.locator("svg rect").count() == 3  # Retr. easy: only Qwen, 3 buckets
    by_images.locator("select").select_option(label="Rank. hard (acc)")
    assert by_images.locator("svg rect").count() == 4  # Qwen and InternVL, buckets 7-9 and 10-18
    realbench_shot = tmp_path / "leaderboard-realbench.png"
    page.screenshot(path=str(realbench_shot), full_page=True)

    # MMDU tab: a model name that is HTML is shown as text and never runs
    page.locator('.tab[data-bench="mmdu"]').click()
    page.wait_for_selector("#board-mmdu")
    names = page.locator("#board-mmdu .model-name").all_text_contents()
    assert XSS_NAME in names
    assert page.evaluate("window.__xss") is None
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 2  # leaderboard.js and app.js, nothing injected
    assert page.locator(".legend .model-name", has_text="window.__xss=2").count() == 1
    assert page.locator("#chart-mmdu-by_turn svg polyline").count() == 2
    assert page.url.endswith("#mmdu")
    mmdu_shot = tmp_path / "leaderboard-mmdu.png"
    page.screenshot(path=str(mmdu_shot), full_page=True)

    # MMRC: switching the chart's metric redraws it
    page.locator('.tab[data-bench="mmrc"]').click()
    chart = page.locator("#chart-mmrc-by_length")
    before = chart.locator("polyline").first.get_attribute("points")
    chart.locator("select").select_option(label="IE information extraction")
    assert chart.locator("polyline").first.get_attribute("points") != before
    assert page.locator('#board-mmrc td[data-key="rp"]', has_text="31.20%").count() == 1

    assert not problems, problems
    page.close()
    print(f"\nscreenshots: {realbench_shot} {mmdu_shot}")
    assert realbench_shot.stat().st_size > 50_000 and mmdu_shot.stat().st_size > 50_000


def test_page_opened_from_file(browser, served_site) -> None:
    """file:// cannot fetch leaderboard.json: the page reads leaderboard.js instead."""
    _, site = served_site
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.goto((site / "index.html").as_uri() + "#mmrc")
    page.wait_for_selector("#board-mmrc tbody tr")
    assert page.locator("#board-mmrc tbody tr").count() == 14
    assert page.evaluate("window.__xss") is None
    assert not problems, problems
    page.close()


def run_entry_id(site: Path, bench_id: str, model: str) -> str:
    data = json.loads((site / DATA_JSON).read_text())
    entries = next(b for b in data["benchmarks"] if b["id"] == bench_id)["entries"]
    return next(e["id"] for e in entries if e["source"] == "run" and e["model"] == model)



def test_page_marks_chance_judge_rows_and_partial_coverage(browser, tmp_path: Path) -> None:
    """A chance-judge row is badged, unranked and last whatever the sort; a task under 100%
    coverage shows its percentage under the value and a badge beside the model."""
    chance = json.loads((RUNS / "markup-name-2025-11-29" / "results.json").read_text())
    chance["config"].update(model="random", model_args={}, judge="random")
    chance["results"]["mmdu"]["overall"] = 99.0
    covered = json.loads((RUNS / "qwen2vl7b-mmdu-mmrc-2025-11-27" / "results.json").read_text())
    covered["coverage"] = {"mmdu": {"unit": "turns", "scored": 90, "total": 120,
                                    "unscored": {"request_failure": 20, "judge_failure": 10},
                                    "excluded": {"no image": 2}}}
    runs = [_write_run(tmp_path, chance, "chance"), _write_run(tmp_path, covered, "covered")]
    site = tmp_path / "site"
    write_site(build_leaderboard(load_runs(runs)), site)
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.goto((site / "index.html").as_uri() + "#mmdu")
    page.wait_for_selector("#board-mmdu tbody tr")

    rows = page.locator("#board-mmdu tbody tr")
    last = rows.nth(rows.count() - 1)
    assert "unranked-row" in (last.get_attribute("class") or "")
    assert last.locator(".badge-chance").text_content() == "chance judge"
    assert last.locator("td.rank").text_content() == "\u2013"
    assert last.locator('td[data-key="overall"] .value').text_content() == "99.0"
    ranks = [rows.nth(i).locator("td.rank").text_content() for i in range(rows.count() - 1)]
    assert ranks == [str(i) for i in range(1, rows.count())]
    assert page.locator('#board-mmdu td.best[data-key="overall"] .value').text_content() == "70.2"  # GPT-4o, paper
    # sorting ascending keeps the chance row last
    page.locator('#board-mmdu th[data-key="overall"] button').click()
    rows = page.locator("#board-mmdu tbody tr")
    assert "unranked-row" in (rows.nth(rows.count() - 1).get_attribute("class") or "")

    qwen = page.locator("#board-mmdu tr.partial-coverage")
    assert qwen.count() == 1 and qwen.locator(".badge-coverage").text_content() == "coverage 75%"
    assert "mmdu: 90 of 120 turns scored (request_failure 20, judge_failure 10); excluded: no image 2" in (
        qwen.locator(".badge-coverage").get_attribute("title") or "")
    assert qwen.locator('td[data-key="overall"] .coverage').text_content() == "75%"
    assert page.locator("#board-mmdu td .coverage").count() == 7  # every MMDU column of that row
    assert not problems, problems
    page.close()


# --- a real run's coverage ------------------------------------------------------------------


BUSINESS = ["mmmu_val_accounting", "mmmu_val_economics", "mmmu_val_finance", "mmmu_val_manage", "mmmu_val_marketing"]


def test_page_cells_name_the_record_policy_counts(browser, tmp_path: Path) -> None:
    """A run of data with irregular records (MMIU: an ``output`` of null, excluded; a gold letter
    beyond the options, scored wrong; MMMU Accounting: an option naming an image the record does
    not have, kept as text): results.json's ``coverage`` counts them by reason, and each cell's
    title names them (a computed column, those of its tasks), as the run viewer does; the
    coverage stays 100%, so no badge. Before, the titles said only the coverage percent."""
    import mmtasks
    from tests.results.test_every_reader import irregular_sample

    data = irregular_sample(tmp_path / "data")
    run = tmp_path / "run"
    mmtasks.evaluate(tasks=["mmiu", *BUSINESS], model="random", data_dir=data, output_path=run, use_cache=False)
    coverage = json.loads((run / "results.json").read_text())["coverage"]
    assert (coverage["mmiu"]["excluded"], coverage["mmiu"]["scored_wrong"], coverage["mmmu_val_accounting"]["kept_as_text"]) == (
        {"output missing": 1}, {"output beyond the options": 1}, {"image tag beyond its images": 1})
    site = tmp_path / "site"
    write_site(build_leaderboard(load_runs([run])), site)
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(str(err)))

    def title(bench: str, key: str) -> str:
        page.goto((site / "index.html").as_uri() + "#" + bench)
        page.wait_for_selector(f"#board-{bench} tbody tr.run-row")
        return page.locator(f'#board-{bench} tr.run-row td[data-key="{key}"]').get_attribute("title") or ""

    acc = title("mmiu", "acc")
    assert acc.endswith("coverage 100.0% of the data scored, excluded: output missing 1, "
                        "scored wrong: output beyond the options 1"), acc
    assert title("mmmu", "accounting").endswith("coverage 100.0% of the data scored, kept as text: image tag beyond its images 1")
    assert title("mmmu", "business").endswith("mmmu_val_accounting kept as text: image tag beyond its images 1")
    assert "kept as text" not in title("mmmu", "economics")
    assert page.locator("#board-mmmu .badge-coverage").count() == 0
    assert not problems, problems
    page.close()



def test_a_run_with_guessed_answers_builds(tmp_path: Path) -> None:
    """A reply with no readable letter is MMMU's random guess: results.json's coverage counts it
    (``guessed``), and the leaderboard reads that record as the runner writes it (it crashed with a
    pydantic traceback when its own Coverage did not know the field)."""
    from tests.folder_runs import predictions, run_mmtasks

    run = tmp_path / "run"
    replies = predictions(tmp_path / "pred.jsonl", [("mmmu_val_marketing", "validation_Marketing_1", "I am not sure")])
    proc = run_mmtasks(["--tasks", "mmmu_val_marketing", "--data-dir", str(ROOT / "data" / "sample"),
                        "--model", f"replay:{replies}", "--output-path", str(run)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # a guess is a problem: counted, shown
    assert json.loads((run / "results.json").read_text())["coverage"]["mmmu_val_marketing"]["guessed"] == 1
    out = tmp_path / "lb"
    result = subprocess.run([sys.executable, "-m", "mmtasks", "leaderboard", "build", str(run), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    entry = next(e for b in json.loads((out / DATA_JSON).read_text())["benchmarks"] if b["id"] == "mmmu"
                 for e in b["entries"] if e["source"] == "run")
    assert entry["coverage"]["mmmu_val_marketing"]["guessed"] == 1
    assert entry["problems"]["mmmu_val_marketing"]["guessed"] == 1


#: data/sample/mantis_eval: doc id -> (a right answer, a wrong one)
MANTIS = {"1": ("B", "A"), "2": ("A", "B"), "3": ("C", "A"), "4": ("A", "B"), "5": ("3", "7"), "6": ("OPEN", "shut"),
          "7": ("D", "A")}


def test_runs_differing_only_in_their_system_instruction_are_two_rows(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # issue 41, finding 3: two runs differing only in --system-instruction became one row (the
    # newer one's; run 1's score was missing) labelled "system instruction", without its text
    from mmtasks.cli import main

    predictions = tmp_path / "replies.jsonl"
    instructions = ["Answer briefly.", "Think step by step, then answer.\x1b]0;owned\x07 " + "x" * 200]
    runs = []
    for i, (instruction, right) in enumerate(zip(instructions, ({"1", "2", "3"}, set(MANTIS) - {"1"}))):
        predictions.write_text("".join(json.dumps({"task": "mantis_eval", "doc_id": doc,
                                                   "responses": [MANTIS[doc][0 if doc in right else 1]]}) + "\n"
                                       for doc in MANTIS))
        runs.append(tmp_path / f"run{i}")
        assert main(["--tasks", "mantis_eval", "--model", f"replay:{predictions}", "--data-dir",
                     str(ROOT / "data" / "sample"), "--output-path", str(runs[-1]), "--no-cache", "--no-progress",
                     "--system-instruction", instruction]) == 0
    capsys.readouterr()
    out = tmp_path / "lb"
    assert leaderboard_main(["build", *map(str, runs), "--out", str(out), "--no-paper"]) == 0
    assert "from 2 run(s)" in capsys.readouterr().out
    board = Leaderboard.model_validate(json.loads((out / DATA_JSON).read_text()))
    rows = [e for e in bench(board, "mantis_eval").entries if e.source == "run"]
    headline = bench(board, "mantis_eval").headline
    assert [e.values[headline].value for e in rows] == pytest.approx([600 / 7, 300 / 7])
    second, first = (e.model for e in rows)
    # each label shows its instruction (a long one cut, its control characters escaped) and a hash of all of it
    assert 'system instruction "Answer briefly."' in first, first
    assert 'system instruction "Think step by step, then answer.\\x1b]0;owned\\x07 xxx' in second, second
    assert "\x1b" not in second and len(second) < 160, second
    assert not any(e.official_protocol for e in rows)
