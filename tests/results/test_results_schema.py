"""The one results.json schema (mmtasks/results/schema.py), shared by the writer and the
leaderboard: real runs of the CLI on the bundled sample feed the leaderboard, a partial
group included; chance-judge rows are never ranked; coverage reaches the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from mmtasks.cli import main
from mmtasks.errors import DataError
from mmtasks.leaderboard.build import build_leaderboard, load_runs
from mmtasks.leaderboard.schema import Leaderboard
from mmtasks.results.results_json import build_results, group_results
from mmtasks.results.schema import Coverage, ResultsFile, parse_results, read_results
from mmtasks.scoring.aggregation import TaskResult

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
FIXTURES = ROOT / "tests" / "fixtures" / "runs"
REALBENCH = [f"realbench_{t}_{d}" for t in ("retrieval", "ranking", "extraction", "reasoning") for d in ("easy", "hard")]


def cli_run(out: Path, *args: str) -> dict:
    code = main(["--data-dir", str(SAMPLE), "--output-path", str(out), "--no-cache", "--no-progress", *args])
    assert code == 0
    return json.loads((out / "results.json").read_text())


def bench(board: dict, bench_id: str) -> dict:
    return next(b for b in board["benchmarks"] if b["id"] == bench_id)


# --- the design card's usage, with real run output ------------------------------------------


def test_a_run_of_part_of_a_group_builds_a_leaderboard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mmtasks --tasks realbench_ranking_hard --model random --data-dir data/sample --output-path R
    && mmtasks leaderboard build R --out S"""
    run_dir, site = tmp_path / "R", tmp_path / "S"
    res = cli_run(run_dir, "--tasks", "realbench_ranking_hard", "--model", "random")
    assert main(["leaderboard", "build", str(run_dir), "--out", str(site)]) == 0
    assert "RealBench 1 run / 6 paper" in capsys.readouterr().out

    acc = res["results"]["realbench_ranking_hard"]["acc"]
    # the group says what the run lacks, and a partial mean is not the group's average
    group = res["groups"]["realbench"]
    assert group["average"] is None and group["partial_average"] == acc
    assert group["tasks"] == ["realbench_ranking_hard"] and group["n_tasks"] == 1
    assert group["missing_tasks"] == sorted(set(REALBENCH) - {"realbench_ranking_hard"})
    assert res["groups"]["realbench_ranking"]["missing_tasks"] == ["realbench_ranking_easy"]
    # counters are in problems (and n-samples), validated by the same model the reader uses
    problems = res["problems"]["realbench_ranking_hard"]
    assert set(problems) >= {"request_failures", "unparsed"} and not any(problems.values())
    assert res["n-samples"]["realbench_ranking_hard"] == {"original": 9, "effective": 9}
    assert read_results(run_dir / "results.json").to_json() == res

    board = json.loads((site / "leaderboard.json").read_text())
    Leaderboard.model_validate(board)
    assert (site / "index.html").is_file() and (site / "leaderboard.js").is_file()
    realbench = bench(board, "realbench")
    [row] = [e for e in realbench["entries"] if e["source"] == "run"]
    assert row["model"] == "random" and row["ranked"] and not row["chance_judge"]
    cell = row["values"]["ranking_hard"]
    assert cell["value"] == acc and cell["stderr"] == res["results"]["realbench_ranking_hard"]["acc_stderr"]
    assert cell["n"] == 9
    # the benchmark's score needs all 8 subtasks: missing, with the reason, never the partial mean
    assert row["values"]["average"]["value"] is None
    assert "needs all of 8 columns" in row["values"]["average"]["missing"]
    assert row["values"]["ranking_easy"]["value"] is None
    assert "realbench_ranking_easy is in no run" in row["values"]["ranking_easy"]["missing"]
    assert row["problems"] == res["problems"]
    # acc_all: every document counted (none failed here, so it equals acc)
    assert row["metrics"]["realbench_ranking_hard"] == {"acc": acc, "acc_stderr": cell["stderr"], "acc_all": acc}
    assert all(not b["entries"] or all(e["source"] == "paper" for e in b["entries"])
               for b in board["benchmarks"] if b["id"] != "realbench")


def test_rows_of_the_chance_level_judge_are_never_ranked(tmp_path: Path) -> None:
    """`random` as the judge outscores paper rows (MMDU overall ~50 on the sample); its rows are
    marked and come after every ranked row, while the same run's RealBench row (no judge) is ranked."""
    run_dir = tmp_path / "demo"
    res = cli_run(run_dir, "--tasks", "realbench_ranking_hard,mmdu,mmrc", "--model", "random", "--judge", "random")
    assert res["config"]["judge"] == "random"
    parsed = read_results(run_dir / "results.json")
    assert parsed.chance_judged("mmdu") and parsed.chance_judged("mmrc")
    assert not parsed.chance_judged("realbench_ranking_hard")  # no judge in the task

    board = build_leaderboard(load_runs([run_dir]))
    for bench_id in ("mmdu", "mmrc"):
        entries = next(b for b in board.benchmarks if b.id == bench_id).entries
        chance = [e for e in entries if e.source == "run"]
        assert [(e.model, e.chance_judge, e.ranked) for e in chance] == [("random", True, False)]
        assert entries[-1] is chance[0]  # after every paper row
        assert chance[0].values["overall"].value == pytest.approx(
            res["results"][bench_id]["overall"])
    mmdu = next(b for b in board.benchmarks if b.id == "mmdu")
    paper_best = min(e.values["overall"].value for e in mmdu.entries if e.source == "paper")
    assert mmdu.entries[-1].values["overall"].value > paper_best  # it would have outranked paper rows
    realbench = next(b for b in board.benchmarks if b.id == "realbench")
    [row] = [e for e in realbench.entries if e.source == "run"]
    assert row.ranked and not row.chance_judge


    predicted = cli_run(tmp_path / "predict", "--tasks", "mmdu", "--model", "random", "--judge", "random",
                        "--predict-only", "--limit", "1")
    assert predicted["results"]["mmdu"]["overall"] is None
    assert not read_results(tmp_path / "predict" / "results.json").chance_judged("mmdu")  # no judge was called


def test_chance_judgements_never_replace_a_real_judges(tmp_path: Path) -> None:
    raw = json.loads((FIXTURES / "qwen2vl7b-mmdu-mmrc-2025-11-27" / "results.json").read_text())
    raw["config"]["judge"] = "random"
    raw["date"] += 86400  # newer: it would win the task if it were the same row
    raw["results"]["mmdu"]["overall"] = 99.0
    chance = tmp_path / "chance"
    chance.mkdir()
    (chance / "results.json").write_text(json.dumps(raw))
    board = build_leaderboard(load_runs([FIXTURES / "qwen2vl7b-mmdu-mmrc-2025-11-27", chance]), include_paper=False)
    mmdu = next(b for b in board.benchmarks if b.id == "mmdu")
    assert [(e.values["overall"].value, e.ranked, e.chance_judge, e.judge) for e in mmdu.entries] == [
        (40.1, True, False, "openai:gpt-4o-2024-05-13"),
        (99.0, False, True, "random"),
    ]


# --- the schema ---------------------------------------------------------------------------------


def _task(primary: str) -> SimpleNamespace:
    return SimpleNamespace(config=SimpleNamespace(primary_metric=primary, version=1,
                                                  model_dump=lambda mode: {"primary": primary}), plugins=())


def test_group_average_only_when_every_member_is_run_and_scored() -> None:
    tasks = {"a": _task("acc"), "b": _task("acc"), "c": _task("rouge_l")}
    results = {"a": TaskResult(metrics={"acc": 30.0}), "b": TaskResult(metrics={"acc": 50.0}),
               "c": TaskResult(metrics={"rouge_l": 10.0})}
    complete = group_results({"g": ["a", "b", "c"]}, tasks, results)["g"]
    assert (complete.average, complete.partial_average, complete.complete) == (30.0, None, True)
    partial = group_results({"g": ["a", "b", "c", "d"]}, tasks, results)["g"]
    assert (partial.average, partial.partial_average, partial.missing_tasks, partial.n_tasks) == (None, 30.0, ["d"], 3)
    results["b"] = TaskResult(metrics={"acc": None})  # nothing scored
    unscored = group_results({"g": ["a", "b", "c"]}, tasks, results)["g"]
    assert (unscored.average, unscored.partial_average, unscored.unscored_tasks) == (None, 20.0, ["b"])
    assert group_results({"other": ["x"]}, tasks, results) == {}  # a group the run does not touch


def _results(**task_result: TaskResult) -> dict:
    return build_results(tasks={name: _task("acc") for name in task_result}, results=task_result,
                         n_original={}, groups={}, run_config={"model": "random"}, stats={"waves": 1})


def test_writer_validates_through_the_schema() -> None:
    data = _results(t=TaskResult(metrics={"acc": 50.0, "acc_stderr": float("nan")}, n_samples=4,
                                 problems={"unparsed": 1}, counts={"turns": 9},
                                 coverage={"unit": "documents", "scored": 3, "total": 4, "unscored": {"unparsed": 1}}))
    assert data["results"]["t"] == {"alias": "t", "acc": 50.0, "acc_stderr": None}  # NaN is not JSON: null
    assert data["n-samples"]["t"] == {"original": 4, "effective": 4, "turns": 9}
    assert data["coverage"]["t"] == {"unit": "documents", "scored": 3, "total": 4, "percent": 75.0,
                                     "unscored": {"unparsed": 1}}
    assert ResultsFile.model_validate(data).to_json() == data

    with pytest.raises(ValueError, match="expected a number or null, got str"):
        _results(t=TaskResult(metrics={"acc": "N/A"}))
    with pytest.raises(ValueError, match="unscored counts add up to 0, expected total - scored = 1"):
        _results(t=TaskResult(metrics={"acc": 1.0}, coverage={"scored": 3, "total": 4}))
    with pytest.raises(ValueError, match="percent 80.0 is not 100"):
        Coverage(scored=3, total=4, percent=80.0, unscored={"request_failure": 1})
    assert Coverage(scored=0, total=0).percent is None


def test_reader_names_the_file_and_field(tmp_path: Path) -> None:
    raw = json.loads((FIXTURES / "random-baseline-2025-11-25" / "results.json").read_text())
    raw["groups"] = {"realbench": {"average": None, "n_tasks": 4, "missing_tasks": ["x"], "tasks": ["y"]}}
    assert parse_results(raw).groups["realbench"].missing_tasks == ["x"]  # a partial group is valid
    raw["problems"]["nowhere"] = {"unparsed": 1}
    with pytest.raises(DataError) as err:
        parse_results(raw, file=tmp_path / "results.json")
    assert "problems names task(s) with no results: nowhere" in str(err.value)
    del raw["problems"]["nowhere"]
    raw["results"]["realbench_ranking_easy"]["acc"] = True
    with pytest.raises(DataError) as err:
        parse_results(raw, file=tmp_path / "results.json")
    assert err.value.field == "results.realbench_ranking_easy.acc" and str(tmp_path) in str(err.value)


def test_counters_of_older_files_load_but_are_not_metrics() -> None:
    run = read_results(FIXTURES / "qwen2vl7b-mmdu-mmrc-2025-11-27" / "results.json")
    assert run.results["mmdu"].values["judge_failures"] == 1  # still stored as written
    assert "judge_failures" not in run.metrics("mmdu") and run.metrics("mmdu")["overall"] == 40.1


def test_coverage_reaches_the_leaderboard(tmp_path: Path) -> None:
    runs = []
    for name in ("qwen2vl7b-realbench-2025-11-26", "qwen2vl7b-ranking-hard-rerun-2025-11-28"):
        raw = json.loads((FIXTURES / name / "results.json").read_text())
        raw["coverage"] = {task: {"unit": "documents", "scored": 556, "total": 556} for task in raw["results"]}
        if "realbench_retrieval_easy" in raw["results"]:
            raw["coverage"]["realbench_retrieval_easy"] = {
                "unit": "documents", "scored": 500, "total": 556,
                "unscored": {"request_failure": 50, "context_overflow": 6}}
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(raw))
        runs.append(tmp_path / name)
    board = build_leaderboard(load_runs(runs), include_paper=False)
    [entry] = next(b for b in board.benchmarks if b.id == "realbench").entries
    assert entry.values["retrieval_easy"].coverage == pytest.approx(100 * 500 / 556)
    assert entry.values["ranking_hard"].coverage == 100.0
    assert entry.values["average"].coverage == pytest.approx(100 * (500 + 7 * 556) / (8 * 556))
    assert entry.coverage["realbench_retrieval_easy"].unscored == {"request_failure": 50, "context_overflow": 6}
    # without coverage in a part, the average's coverage is unknown
    del_cov = json.loads((runs[1] / "results.json").read_text())
    del del_cov["coverage"]
    (runs[1] / "results.json").write_text(json.dumps(del_cov))
    board = build_leaderboard(load_runs(runs), include_paper=False)
    [entry] = next(b for b in board.benchmarks if b.id == "realbench").entries
    assert entry.values["average"].coverage is None and entry.values["ranking_hard"].coverage is None


def test_results_schema_doc_covers_every_key() -> None:
    doc = (ROOT / "docs" / "leaderboard-schema.md").read_text().split("## Input: `results.json`")[1]
    keys = [field.alias or name for name, field in ResultsFile.model_fields.items()]
    assert not [k for k in keys if f"`{k}`" not in doc]


def test_git_hash_is_the_checkouts_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed mmtasks that sits inside some other repository records no hash (not that repository's)."""
    import subprocess

    from mmtasks.results import results_json

    other = tmp_path / "other-repo"
    package = other / "venv" / "site-packages" / "mmtasks"
    package.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(other)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True, timeout=30)
    monkeypatch.setattr(results_json, "PACKAGE_DIR", package)
    assert results_json.git_hash() is None
    monkeypatch.setattr(results_json, "PACKAGE_DIR", other / "mmtasks")
    (other / "mmtasks").mkdir()
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert results_json.git_hash() == head  # a checkout of mmtasks: its commit
