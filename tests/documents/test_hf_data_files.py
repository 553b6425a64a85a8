"""``dataset.hf.data_files`` read from the places the docs say (issue 40, "frictions"): a relative
path resolves against ``--data-dir`` when given, else the task's folder (before: the working
directory, unsaid); a missing file is one line naming it and the key (before: "check the name
and your network, or ... use local data with --data-dir", with --data-dir given); and
``--no-progress`` silences ``datasets``' own "Generating train split" bar."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmtasks.cli import main

datasets = pytest.importorskip("datasets")

REPO = Path(__file__).resolve().parents[2]

TASK = """\
task: pq
dataset:
  hf: {{path: parquet, data_files: {files}, split: train}}
  images_field: null
prompt: {{user: "{{{{ doc.q }}}} A or B?"}}
target: "field:answer"
answer: {{parser: choice, parser_args: {{letters: [A, B]}}}}
metrics: [{{name: acc, function: choice_acc}}]
"""


def _setup(root: Path, files: str, parquet_in: str) -> tuple[Path, Path]:
    tasks, data = root / "tasks", root / "data"
    tasks.mkdir(parents=True)
    data.mkdir(parents=True)
    (tasks / "pq.yaml").write_text(TASK.format(files=files), encoding="utf-8")
    target = {"data": data, "tasks": tasks}[parquet_in] / "qs.parquet"
    datasets.Dataset.from_dict({"id": ["a", "b"], "q": ["x", "y"], "answer": ["A", "B"]}).to_parquet(str(target))
    return tasks, data


def _run(tasks: Path, out: Path, *extra: str) -> int:
    return main(["--tasks", "pq", "--include-path", str(tasks), "--model", "random", "--output-path", str(out),
                 "--no-cache", "--no-progress", *extra])


def test_a_relative_path_resolves_against_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks, data = _setup(tmp_path, "qs.parquet", "data")
    monkeypatch.chdir(tmp_path)  # the working directory holds no qs.parquet
    assert _run(tasks, tmp_path / "out", "--data-dir", str(data)) == 0
    assert (tmp_path / "out" / "samples" / "pq.jsonl").read_text().count("\n") == 2


def test_without_a_data_dir_against_the_tasks_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks, _ = _setup(tmp_path, "[qs.parquet]", "tasks")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MMTASKS_DATA_DIR", raising=False)
    assert _run(tasks, tmp_path / "out") == 0


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks, data = _setup(tmp_path, "{train: missing.parquet}", "data")
    assert _run(tasks, tmp_path / "out", "--data-dir", str(data)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert str(data / "missing.parquet") in err[0] and "dataset.hf.data_files" in err[0]
    assert "network" not in err[0]


def test_a_path_climbing_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks, data = _setup(tmp_path, "../tasks/qs.parquet", "tasks")
    assert _run(tasks, tmp_path / "out", "--data-dir", str(data)) == 2
    assert "leaves the data root" in capsys.readouterr().err


def test_no_progress_silences_the_datasets_bars(tmp_path: Path) -> None:
    tasks, data = _setup(tmp_path, "qs.parquet", "data")
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"), "PYTHONPATH": str(REPO)}
    for name in ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "pq", "--include-path", str(tasks), "--data-dir",
                           str(data), "--model", "random", "--output-path", str(tmp_path / "out"), "--no-cache",
                           "--no-progress"], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Generating" not in proc.stderr and "examples/s" not in proc.stderr, proc.stderr


def test_a_hub_datasets_data_files_are_paths_in_its_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``path: org/name`` with ``data_files``: the files are the repository's, left to ``datasets``
    (never looked for under --data-dir or the task folder)."""
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.documents.dataset import _read_hf
    from mmtasks.errors import DataError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    config = TaskConfig.model_validate({"task": "t", "dataset": {"hf": {"path": "some-org/some-set", "split": "test",
                                        "data_files": "data/test-00000.parquet"}}, "prompt": {"user": "x"}})
    with pytest.raises(DataError) as caught:
        next(_read_hf(config, tmp_path, tmp_path / "t.yaml"))
    assert "data file not found" not in caught.value.message and caught.value.field == "dataset.hf"
