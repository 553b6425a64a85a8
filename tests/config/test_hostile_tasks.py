"""Hostile task files (issue 12): names that are paths, includes and prompt files that reach
outside the task folders, duplicate keys and alias bombs. Each is one line naming the file and
field, exit 2, before anything is written."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.config.yaml_loader import read_yaml
from mmtasks.errors import ConfigError
from tests.builders import ranking_record, write_realbench

REPO = Path(__file__).resolve().parents[2]
RANKING = REPO / "tasks" / "realbench" / "ranking_easy.yaml"
MMDU = REPO / "tasks" / "mmdu" / "mmdu.yaml"


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    write_realbench(tmp_path / "data", "ranking_easy.jsonl", [ranking_record("r-1")])
    return tmp_path / "data"


def run_task(capsys, tmp_path: Path, data: Path, yaml_text: str, *, name: str = "probe", extra: tuple[str, ...] = ()) -> tuple[int, str]:
    tasks = tmp_path / "work" / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "probe.yaml").write_text(yaml_text, encoding="utf-8")
    code = main(["--tasks", name, "--model", "random", "--include-path", str(tasks), "--data-dir", str(data),
                 "--output-path", str(tmp_path / "work" / "out" / "run"), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress", *extra])
    return code, capsys.readouterr().err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("mmtasks: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("name", ["../../x", "/abs/x", "..", ".hidden", "a/b", "a\\b", "x y"])
def test_task_names_that_are_paths_are_config_errors(capsys, tmp_path, data, name) -> None:
    code, err = run_task(capsys, tmp_path, data, f"task: '{name}'\ninclude: {RANKING}\n", name=name)
    assert code == 2
    line = error_line(err)
    assert "probe.yaml" in line and "field 'task'" in line and "not a safe name" in line
    assert not list(tmp_path.rglob("*.jsonl*")) or all("data" in p.parts for p in tmp_path.rglob("*.jsonl*"))
    assert not Path("/abs/x.jsonl").exists()


def test_group_names_that_are_paths_are_config_errors(capsys, tmp_path, data) -> None:
    code, err = run_task(capsys, tmp_path, data, f"task: probe\ngroup: ['../evil']\ninclude: {RANKING}\n")
    assert code == 2 and "field 'group'" in error_line(err) and "not a safe name" in err


def test_safe_names_still_load(capsys, tmp_path, data) -> None:
    code, err = run_task(capsys, tmp_path, data, f"task: my-task_v1.2\ngroup: [my_bench]\ninclude: {RANKING}\n", name="my-task_v1.2")
    assert code == 0, err
    assert (tmp_path / "work" / "out" / "run" / "samples" / "my-task_v1.2.jsonl").exists()


def test_include_outside_the_task_folders_is_refused(capsys, tmp_path, data) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(RANKING.read_text())
    for include in ("../../outside.yaml", str(outside)):
        code, err = run_task(capsys, tmp_path, data, f"task: probe\ninclude: {include}\n")
        assert code == 2
        assert "outside the task folders" in error_line(err) and "field 'include'" in err


def test_include_through_a_symlink_to_outside_is_refused(capsys, tmp_path, data) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(RANKING.read_text())
    (tmp_path / "work" / "tasks").mkdir(parents=True)
    (tmp_path / "work" / "tasks" / "_base.yaml").symlink_to(outside)
    code, err = run_task(capsys, tmp_path, data, "task: probe\ninclude: _base.yaml\n")
    assert code == 2 and "outside the task folders" in error_line(err)


def _judged(prompt_file: str) -> str:
    return f"task: probe\ngroup: []\ninclude: {MMDU}\njudge: {{prompt_file: '{prompt_file}'}}\n"


@pytest.mark.parametrize("prompt_file", ["/etc/passwd", "../../secret.txt", "../tasks/../../secret.txt"])
def test_judge_prompt_file_outside_the_task_folder_is_refused(capsys, tmp_path, data, prompt_file) -> None:
    (tmp_path / "secret.txt").write_text("ssh-rsa PRIVATE\n")
    code, err = run_task(capsys, tmp_path, data, _judged(prompt_file), extra=("--judge", "random"))
    assert code == 2
    line = error_line(err)
    assert "field 'judge.prompt_file'" in line and "not a file inside the task's folder or the task folders" in line
    assert "PRIVATE" not in err


def test_judge_prompt_file_symlinked_to_outside_is_refused(capsys, tmp_path, data) -> None:
    (tmp_path / "secret.txt").write_text("ssh-rsa PRIVATE\n")
    (tmp_path / "work" / "tasks").mkdir(parents=True)
    (tmp_path / "work" / "tasks" / "judge.txt").symlink_to(tmp_path / "secret.txt")
    code, err = run_task(capsys, tmp_path, data, _judged("judge.txt"), extra=("--judge", "random"))
    assert code == 2 and "not a file inside the task's folder or the task folders" in error_line(err)


# -- YAML ---------------------------------------------------------------------

def test_duplicate_keys_are_one_line_naming_file_line_and_key(tmp_path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("task: a\ndataset:\n  id_field: id\n  id_field: other\nversion: 1\n")
    with pytest.raises(ConfigError) as info:
        read_yaml(path)
    assert str(info.value) == f"{path}:4: duplicate key 'id_field' (first at line 3)"


def test_duplicate_top_level_key_through_the_cli(capsys, tmp_path, data) -> None:
    code, err = run_task(capsys, tmp_path, data, f"task: probe\ninclude: {RANKING}\ntask: other\n")
    assert code == 2 and "probe.yaml:3: duplicate key 'task'" in error_line(err)


ALIAS_BOMB = "\n".join(
    ["task: probe", "metadata:", "  a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"  {chr(ord('a') + i + 1)}: &{chr(ord('a') + i + 1)} [*{chr(ord('a') + i)}, *{chr(ord('a') + i)}, *{chr(ord('a') + i)}, "
       f"*{chr(ord('a') + i)}, *{chr(ord('a') + i)}, *{chr(ord('a') + i)}, *{chr(ord('a') + i)}, *{chr(ord('a') + i)}, *{chr(ord('a') + i)}]"
       for i in range(8)]
) + "\n"


def test_alias_bomb_fails_fast_at_load(tmp_path) -> None:
    assert len(ALIAS_BOMB) < 1000  # 9**9 = 387 million strings once expanded
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ConfigError, match="aliases expand to more than"):  # the node bound acted, not a clock
        read_yaml(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_alias_bomb_in_a_task_is_one_line_before_the_run(capsys, tmp_path, data) -> None:
    code, err = run_task(capsys, tmp_path, data, ALIAS_BOMB.replace("task: probe\n", f"task: probe\ninclude: {RANKING}\n"))
    assert code == 2 and "aliases expand to more than" in error_line(err)
    assert not (tmp_path / "work" / "out").exists()


def test_modest_anchors_and_merge_keys_still_work(tmp_path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {x: 1, y: [1, 2]}\nother:\n  <<: *b\n  y: [3]\nlist: [*b, *b]\n")
    assert read_yaml(path) == {"base": {"x": 1, "y": [1, 2]}, "other": {"x": 1, "y": [3]}, "list": [{"x": 1, "y": [1, 2]}] * 2}


def test_builtin_tasks_load_with_the_checks() -> None:
    from mmtasks.config.task_registry import TaskRegistry

    registry = TaskRegistry.discover()
    assert not registry.broken_files
    for name in registry.task_names:
        registry.load(name)


def test_a_headline_metric_without_a_direction_is_one_line(capsys, tmp_path, data) -> None:
    """``higher_is_better: null`` is for a metric that ranks nothing (POPE's yes ratio); the headline
    ranks the leaderboard's rows, so it needs a direction: refused before any model is built."""
    metrics = "metrics:\n  - {name: acc, function: choice_acc, higher_is_better: null}\n"
    code, err = run_task(capsys, tmp_path, data, f"task: probe\ninclude: {RANKING}\n{metrics}")
    assert code == 2
    line = error_line(err)
    assert "probe.yaml" in line and "metrics[0].higher_is_better" in line and "needs a direction" in line
    assert not (tmp_path / "work" / "out").exists()
    metrics += "  - {name: acc_all, function: choice_acc, primary: true}\n"
    code, err = run_task(capsys, tmp_path, data, f"task: probe\ninclude: {RANKING}\n{metrics}")
    assert code == 0, err
