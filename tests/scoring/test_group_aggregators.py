"""Rules across tasks (issue 40, item 12): a group aggregator sees every member task's samples, so
MT-Bench's pairwise rule with position swap ("the two orders disagree -> tie") is writable. The
pairwise shape (``tests/shapes/pairwise``): seven questions judged with the model's answer first
(``pairwise_first``) and second (``pairwise_second``); docs/authors/tasks.md shows its files and
the hand-computed win rates checked here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.report import results_table_lines

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SHAPE = ROOT / "tests" / "shapes" / "pairwise"


def _run(tmp_path: Path, tasks: str, include: Path = SHAPE / "tasks") -> dict:
    out = tmp_path / "out"
    assert main(["--tasks", tasks, "--no-progress", "--include-path", str(include), "--data-dir", str(SHAPE / "data"),
                 "--model", f"replay:{SHAPE / 'replies.jsonl'}", "--judge", f"replay:{SHAPE / 'judge_replies.jsonl'}",
                 "--output-path", str(out), "--allow-failures"]) == 0
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_pairwise_win_rates_with_position_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    results = _run(tmp_path, "pairwise")
    group = results["groups"]["pairwise"]
    # q1 model/model win; q2 baseline/baseline loss; q3 model/baseline, q5 model/tie, q6 baseline/model
    # disagree: ties; q4 tie/model: a tie; q7 no verdict in the first order: left out
    assert group["aggregator"] == "pairwise_swap"
    assert group["metrics"] == pytest.approx({"win_rate": 100 / 6, "loss_rate": 100 / 6, "tie_rate": 400 / 6,
                                              "win_rate_adjusted": 50.0})
    assert group["counts"] == {"questions": 6, "wins": 1, "losses": 1, "ties": 4, "orders_disagree": 4, "left_out": 1}
    # each order alone: the judge's verdicts from the model's side (q7's first verdict is a judge failure)
    assert results["results"]["pairwise_first"]["model"] == pytest.approx(50.0)     # q1 q3 q5 of 6
    assert results["results"]["pairwise_second"]["model"] == pytest.approx(400 / 7)  # q1 q4 q6 q7 of 7
    table = results_table_lines(results)
    assert any(line.split() == ["win_rate_adjusted", "50.00"] for line in table)


def test_a_run_without_every_member_has_no_group_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    group = _run(tmp_path, "pairwise_first")["groups"]["pairwise"]
    assert group["missing_tasks"] == ["pairwise_second"] and "metrics" not in group and "aggregator" not in group


def _copy(tmp_path: Path) -> Path:
    tasks = tmp_path / "tasks"
    shutil.copytree(SHAPE / "tasks", tasks)
    return tasks


def test_members_naming_different_aggregators_is_a_check_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = _copy(tmp_path)  # only pairwise_first names it
    base, first = tasks / "_pairwise.yaml", tasks / "pairwise_first.yaml"
    base.write_text(base.read_text().replace("group_aggregators: {pairwise: pairwise_swap}\n", ""), encoding="utf-8")
    first.write_text(first.read_text() + "group_aggregators: {pairwise: pairwise_swap}\n", encoding="utf-8")
    assert main(["check", "--tasks", "pairwise", "--include-path", str(tasks), "--data-dir", str(SHAPE / "data")]) == 2
    err = capsys.readouterr().err
    assert "group_aggregators.pairwise" in err and "different group aggregators" in err and "pairwise_second.yaml" in err


def test_an_aggregator_for_a_group_the_task_is_not_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = _copy(tmp_path)
    first = tasks / "pairwise_first.yaml"
    first.write_text(first.read_text() + "group_aggregators: {pairs: pairwise_swap}\n", encoding="utf-8")
    assert main(["check", "--tasks", "pairwise_first", "--include-path", str(tasks), "--data-dir", str(SHAPE / "data")]) == 2
    assert "'pairs', which is not one of this task's groups" in capsys.readouterr().err


def test_the_docs_show_the_tested_files() -> None:
    page = (ROOT / "docs" / "authors" / "tasks.md").read_text(encoding="utf-8")
    plugin = (SHAPE / "tasks" / "pairwise.py").read_text(encoding="utf-8")
    assert plugin[plugin.index('@group_aggregator("pairwise_swap")'):].rstrip() in page
    assert (SHAPE / "tasks" / "pairwise_first.yaml").read_text(encoding="utf-8").rstrip() in page
    assert "`win_rate_adjusted`\n(1 + 4/2)/6 = 50.00" in page
