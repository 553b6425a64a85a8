"""Reports (``reports/*.yaml``): a model card's report table as one ``--tasks`` name, expanding to the
rows mmtasks has; rows not in mmtasks yet are left out and named in one line, never an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.config import task_registry
from mmtasks.config.reports import REPORT_PREFIX, load_reports
from mmtasks.config.task_registry import TaskRegistry
from mmtasks.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"

MINE = """\
report: report_mine
title: "My-Model technical report, Table 3"
source: {url: "https://example.org/my-model", table: "Table 3 (column My-Model-7B)"}
rows:
  - {row: RealBench ranking, tasks: [realbench_ranking]}
  - {row: MUIRBench, tasks: [muirbench]}
  - {row: Not-Yet-Bench, tasks: [not_yet_bench]}
  - {row: CC-OCR, tasks: []}
  - {row: MUIRBench again, tasks: [muirbench]}
"""


@pytest.fixture()
def reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    monkeypatch.setattr(task_registry, "builtin_reports_dir", lambda: folder)
    return folder


def test_a_report_runs_the_rows_mmtasks_has_and_names_the_others(reports: Path) -> None:
    (reports / "report_mine.yaml").write_text(MINE, encoding="utf-8")
    registry = TaskRegistry.discover()
    # the group expands, duplicates once, the row not in mmtasks and the uncovered row left out
    assert registry.resolve(["report_mine"]) == ["realbench_ranking_easy", "realbench_ranking_hard", "muirbench"]
    assert registry.report_note("report_mine") == (
        "report report_mine: 1 of its rows is not in mmtasks yet and left out: Not-Yet-Bench (not_yet_bench)"
        " (listed in report_mine.yaml)")
    assert registry.report_note("muirbench") is None
    assert registry.resolve(["muirbench", "report_mine"]) == ["muirbench", "realbench_ranking_easy", "realbench_ranking_hard"]


def test_check_on_a_report_checks_its_rows_and_names_the_missing_in_one_line(reports: Path, capsys) -> None:
    (reports / "report_mine.yaml").write_text(MINE, encoding="utf-8")
    assert main(["check", "--tasks", "report_mine", "--data-dir", str(SAMPLE)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("checked ") and " of 3 tasks " in out[0]
    assert [line for line in out if line.startswith("report ")] == [
        "report report_mine: 1 of its rows is not in mmtasks yet and left out: Not-Yet-Bench (not_yet_bench)"
        " (listed in report_mine.yaml)"]


def test_a_report_with_no_row_in_mmtasks_and_a_bad_file_are_one_line_errors(reports: Path) -> None:
    (reports / "report_none.yaml").write_text(MINE.replace("report_mine", "report_none").replace(
        "[realbench_ranking]", "[nope_a]").replace("[muirbench]", "[nope_b]"), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        TaskRegistry.discover().resolve(["report_none"])
    message = err.value.render()
    assert "report 'report_none': none of its rows is in mmtasks yet" in message and "report_none.yaml" in message
    assert "\n" not in message
    (reports / "report_none.yaml").unlink()
    (reports / "report_bad.yaml").write_text(MINE.replace("report_mine", "report_bad").replace("rows:", "rowz:"), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        TaskRegistry.discover()
    assert "report_bad.yaml" in err.value.render() and "rowz" in err.value.render()
    (reports / "report_bad.yaml").unlink()
    (reports / "other_name.yaml").write_text(MINE, encoding="utf-8")
    with pytest.raises(ConfigError, match="name it report_mine.yaml"):
        TaskRegistry.discover()


def test_the_builtin_reports_cite_their_card_and_name_tasks_or_groups() -> None:
    registry = TaskRegistry.discover()
    assert {"report_qwen2.5_vl", "report_internvl3"} <= set(registry.reports)
    known = {*registry.task_names, *registry.groups}
    for name, report in registry.reports.items():
        assert name.startswith(REPORT_PREFIX) and report.file == ROOT / "reports" / f"{name}.yaml"
        assert report.source.url.startswith("https://") and report.source.table
        assert name not in known  # a report's name is never a task's or a group's
        present, missing = report.split(known)
        assert present and registry.resolve([name])  # it runs today, whatever has not landed
        for row in missing:  # a row not in mmtasks yet names the one task it will be
            assert len(row.tasks) == 1, row
    qwen = registry.reports["report_qwen2.5_vl"]
    assert "3b32d7ebeab03cd225b603b53dff1cb6857e0c3f" in qwen.source.url  # the README at a commit
    # the card's rows in its order (README "Performance" table), those mmtasks covers by name
    assert [row.row for row in qwen.rows][:4] == ["MMMU", "MMMU Pro", "DocVQA", "InfoVQA"]
    assert {row.row: row.tasks for row in qwen.rows if row.tasks} == {
        "MMMU": ["mmmu_val"], "MMMU Pro": ["mmmu_pro_all"], "DocVQA": ["docvqa"], "InfoVQA": ["infovqa"],
        "MMStar": ["mmstar"], "MMBench1.1": ["mmbench"], "MathVista": ["mathvista"], "MathVision": ["mathvision_test"],
        "VideoMME": ["videomme"], "LVBench": ["lvbench"]}


def test_two_files_with_one_report_name_are_an_error(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "report_mine.yaml").write_text(MINE, encoding="utf-8")
    with pytest.raises(ConfigError, match="defined twice"):
        load_reports([tmp_path / "a", tmp_path / "b"])
