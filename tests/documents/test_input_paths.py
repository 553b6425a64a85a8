"""A task's data paths stay inside the data root: its data folder and file may be neither
absolute nor climb out with '..' (the images of its records are confined by
tests/cli/test_user_errors.py). A benchmark folder that is a symlink to another disk still works."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.builders import ranking_record, write_realbench

REPO = Path(__file__).resolve().parents[2]
RANKING = REPO / "tasks" / "realbench" / "ranking_easy.yaml"


def run(capsys: pytest.CaptureFixture[str], tmp_path: Path, data: Path, task_yaml: str) -> tuple[int, str]:
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "probe.yaml").write_text(task_yaml, encoding="utf-8")
    code = main(["--tasks", "probe", "--include-path", str(tasks), "--model", "random", "--data-dir", str(data),
                 "--output-path", str(tmp_path / "out"), "--no-cache", "--no-progress", "--predict-only"])
    return code, capsys.readouterr().err


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    write_realbench(tmp_path / "data", "ranking_easy.jsonl", [ranking_record("r-1")])
    # a JSONL file beside the data root that a task must not be able to read
    write_realbench(tmp_path, "secret.jsonl", [ranking_record("s-1")])
    return tmp_path / "data"


@pytest.mark.parametrize(("local", "field", "message"), [
    ("{dir: realbench, file: ../../realbench/secret.jsonl}", "dataset.local.file", "leaves the data folder"),
    ("{dir: .., file: realbench/secret.jsonl}", "dataset.local.dir", "leaves the data root"),
    ("{dir: realbench, file: /etc/passwd}", "dataset.local.file", "must be relative to the data folder"),
    ("{dir: /etc, file: passwd}", "dataset.local.dir", "must be relative to the data root"),
])
def test_data_file_outside_the_data_root_is_refused(capsys, tmp_path, data, local, field, message) -> None:
    code, err = run(capsys, tmp_path, data, f"task: probe\ninclude: {RANKING}\ndataset:\n  local: {local}\n")
    assert code == 2 and "Traceback" not in err
    assert message in err and f"field '{field}'" in err and "probe.yaml" in err


def test_symlinked_benchmark_folder_is_fine(capsys, tmp_path, data) -> None:
    other_disk = tmp_path / "elsewhere"
    (data / "realbench").rename(other_disk)
    (data / "realbench").symlink_to(other_disk, target_is_directory=True)
    code, err = run(capsys, tmp_path, data, f"task: probe\ninclude: {RANKING}\n")
    assert code == 0, err
    assert (tmp_path / "out" / "samples" / "probe.jsonl").read_text().count("\n") == 1
