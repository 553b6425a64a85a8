"""Bad inputs give one clear line naming the file/document/field and a non-zero exit, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.builders import ranking_record, write_image, write_realbench


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("mmtasks: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    write_realbench(tmp_path / "data", "ranking_easy.jsonl", [ranking_record("r-1"), ranking_record("r-2")])
    return tmp_path / "data"


def base_args(data: Path, tmp_path: Path) -> list[str]:
    return ["--model", "random", "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]


def test_unknown_task_suggests(capsys, data, tmp_path):
    code, err = run_cli(capsys, "--tasks", "realbench_rankin_easy", *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "unknown task or group 'realbench_rankin_easy'" in line and "did you mean 'realbench_ranking_easy'" in line


def test_unknown_backend(capsys, data, tmp_path):
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path), "--model", "hff:Qwen/Qwen2-VL-7B")
    assert code == 2
    assert "unknown model backend 'hff'" in error_line(err) and "did you mean 'hf'" in err


def test_unknown_model_name(capsys, data, tmp_path):
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path), "--model", "qwen2-vl-7")
    assert code == 2
    assert "unknown model 'qwen2-vl-7'" in error_line(err)


def test_missing_data_dir(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("MMTASKS_DATA_DIR", raising=False)
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", "--model", "random", "--no-progress")
    assert code == 2
    line = error_line(err)
    assert "--data-dir" in line and "realbench/ranking_easy.jsonl" in line


def test_missing_data_file_says_where_it_looked(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_hard", *base_args(tmp_path / "empty", tmp_path))
    assert code == 2
    line = error_line(err)
    assert str(tmp_path / "empty" / "realbench" / "ranking_hard.jsonl") in line and "sample" in line


def test_malformed_jsonl_line(capsys, data, tmp_path):
    path = data / "realbench" / "ranking_easy.jsonl"
    path.write_text(path.read_text() + '{"id": "r-3", "images": [\n', encoding="utf-8")
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path))
    assert code == 2
    assert f"{path}:3: malformed JSON line" in error_line(err)


def test_wrong_schema_names_document_and_field(capsys, data, tmp_path):
    rec = ranking_record("r-bad")
    rec["options"] = ["A", "B"]
    write_realbench(data, "ranking_easy.jsonl", [ranking_record("r-1"), rec])
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "document 'r-bad'" in line and "field 'options'" in line and "expected dict" in line


def test_missing_image(capsys, data, tmp_path):
    (data / "realbench" / "images" / "r-2" / "2.jpg").unlink()
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "document 'r-2'" in line and "image not found" in line and "r-2/2.jpg" in line


def test_corrupt_image(capsys, data, tmp_path):
    (data / "realbench" / "images" / "r-1" / "3.jpg").write_bytes(b"this is not a jpeg")
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "document 'r-1'" in line and "not a readable image" in line


@pytest.mark.parametrize("bad", ["../outside.jpg", "images/../../outside.jpg", "/etc/passwd"])
def test_image_path_leaving_data_root(capsys, data, tmp_path, bad):
    write_image(data / "outside.jpg")
    rec = ranking_record("r-evil")
    rec["images"] = ["images/r-1/1.jpg", bad]
    write_realbench(data, "ranking_easy.jsonl", [ranking_record("r-1"), rec])
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "document 'r-evil'" in line and ("leaves the data root" in line or "is absolute" in line)


def _task_dir(tmp_path: Path, body: str, name: str = "mytask.yaml") -> Path:
    d = tmp_path / "tasks_extra"
    d.mkdir(exist_ok=True)
    (d / name).write_text(body, encoding="utf-8")
    return d


GOOD_TASK = """\
task: my_ranking
include: {base}
dataset:
  local: {{dir: realbench, file: ranking_easy.jsonl}}
"""


def test_malformed_yaml(capsys, data, tmp_path):
    d = _task_dir(tmp_path, "task: broken\ndataset: [unclosed\n")
    code, err = run_cli(capsys, "--tasks", "broken", "--include-path", str(d), *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "mytask.yaml" in line and "malformed YAML" in line


def test_unknown_key(capsys, data, tmp_path):
    d = _task_dir(tmp_path, "task: typo_task\ndataset: {local: {dir: realbench, file: ranking_easy.jsonl}}\nmetrix: [acc]\n")
    code, err = run_cli(capsys, "--tasks", "typo_task", "--include-path", str(d), *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "mytask.yaml" in line and "field 'metrix'" in line and "unknown key" in line


def test_unknown_nested_key(capsys, data, tmp_path):
    d = _task_dir(tmp_path, "task: typo_task\ndataset: {local: {dir: realbench, file: ranking_easy.jsonl, fiel: x}}\n")
    code, err = run_cli(capsys, "--tasks", "typo_task", "--include-path", str(d), *base_args(data, tmp_path))
    assert code == 2
    assert "field 'dataset.local.fiel'" in error_line(err)


def test_undefined_template_variable(capsys, data, tmp_path):
    d = _task_dir(tmp_path, (
        "task: tmpl_task\ndataset: {local: {dir: realbench, file: ranking_easy.jsonl}}\n"
        "prompt: {user: 'Question: {{ doc.text }} {{ instrution }}'}\n"
        "answer: {parser: choice}\nmetrics: [{name: acc, function: choice_acc}]\n"
    ))
    code, err = run_cli(capsys, "--tasks", "tmpl_task", "--include-path", str(d), *base_args(data, tmp_path))
    assert code == 2
    line = error_line(err)
    assert "mytask.yaml" in line and "document 'r-1'" in line and "field 'prompt.user'" in line and "'instrution' is undefined" in line


def test_sandbox_blocks_unsafe_template(capsys, data, tmp_path):
    d = _task_dir(tmp_path, (
        "task: evil_task\ndataset: {local: {dir: realbench, file: ranking_easy.jsonl}}\n"
        "prompt: {user: \"{{ doc.__class__.__mro__[1].__subclasses__() }}\"}\n"
        "answer: {parser: choice}\nmetrics: [{name: acc, function: choice_acc}]\n"
    ))
    code, err = run_cli(capsys, "--tasks", "evil_task", "--include-path", str(d), *base_args(data, tmp_path))
    assert code == 2
    assert "field 'prompt.user'" in error_line(err)


def test_yaml_is_loaded_safely(capsys, data, tmp_path):
    d = _task_dir(tmp_path, "task: !!python/object/apply:os.system ['echo pwned']\ndataset: {}\n")
    code, err = run_cli(capsys, "--tasks", "mytask", "--include-path", str(d), *base_args(data, tmp_path))
    assert code == 2
    assert "malformed YAML" in err and "pwned" not in err


def test_bad_model_args(capsys, data, tmp_path):
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path), "--model-args", "dtype")
    assert code == 2
    assert "key=value" in error_line(err)


def test_hf_weights_missing_is_one_line(capsys, data, tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, err = run_cli(capsys, "--tasks", "realbench_ranking_easy", *base_args(data, tmp_path), "--model", "hf:Qwen/Qwen2-VL-72B-Instruct-does-not-exist")
    assert code == 2
    assert "Qwen2-VL-72B-Instruct-does-not-exist" in error_line(err)


def test_verbose_shows_traceback(data, tmp_path):
    from mmtasks.errors import ConfigError

    with pytest.raises(ConfigError):
        main(["--tasks", "nope", *base_args(data, tmp_path), "--verbose"])


def test_missing_data_hint_comes_from_the_task_yaml(capsys, tmp_path):
    """How to get the data is each benchmark's own word (``dataset.get_data``), not the generic layer's."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "mine.yaml").write_text(
        "task: mine\ndataset:\n  local: {dir: mine, file: test.jsonl}\n"
        "  get_data: fetch test.jsonl from the lab share\nmetrics:\n  - {name: acc, function: exact_integer}\n",
        encoding="utf-8")
    (tmp_path / "empty").mkdir()
    code, err = run_cli(capsys, "--tasks", "mine", "--include-path", str(tasks), *base_args(tmp_path / "empty", tmp_path))
    assert code == 2
    line = error_line(err)
    assert "data file not found for task 'mine'" in line and "(fetch test.jsonl from the lab share)" in line
