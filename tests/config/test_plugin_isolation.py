"""Finding 6 of issue 23: plugins are isolated in what they can break.

- a plugin (a task folder's file or an installed package) that exits at import (``SystemExit(0)``,
  ``KeyboardInterrupt``) used to end ``mmtasks --tasks ...`` with exit 0, no output and no results:
  now it is one error naming the plugin;
- a plugin that parses ``sys.argv`` at import used to read mmtasks' command line (and print its
  own usage): now it sees only its own name;
- a plugin task naming a built-in group (``group: realbench_ranking``) used to join it silently
  and move its average (22.22 -> 25.93): now it is a load error, and the group is the owner's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer
from tests.config.test_plugins import MODEL, error_line, fake_installed_package, server, write, write_data  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"

TASK = """
    plugins: [hostile.py]
    task: hostile_task
    dataset:
      local: {dir: bench, file: test.jsonl}
      images_field: null
    prompt: {user: "{{ doc.question }}"}
    target: "field:answer"
    answer: {parser: integer}
    metrics: [{name: acc, function: exact_integer, primary: true}]
"""


def run(capsys: pytest.CaptureFixture[str], server: ChatServer, tmp_path: Path, plugin: str) -> tuple[int, str, Path]:
    inc = tmp_path / "inc"
    write(inc / "bench" / "task.yaml", TASK)
    write(inc / "bench" / "hostile.py", plugin)
    out = tmp_path / "out"
    code = main(["--tasks", "hostile_task", "--include-path", str(inc), "--model", f"openai:{MODEL}",
                 "--model-args", f"base_url={server.base_url}", "--data-dir", str(write_data(tmp_path / "data")),
                 "--output-path", str(out), "--no-cache", "--no-progress"])
    return code, capsys.readouterr().err, out


@pytest.mark.parametrize("exit_call", ["raise SystemExit(0)", "import sys; sys.exit()", "raise KeyboardInterrupt"])
def test_a_plugin_that_exits_at_import_is_an_error_naming_it(capsys, server: ChatServer, tmp_path: Path, exit_call: str) -> None:
    code, err, out = run(capsys, server, tmp_path, exit_call + "\n")
    assert code == 2  # before: 0, nothing printed, no results
    line = error_line(err)
    assert "hostile.py" in line and "plugin file failed to import" in line and "while being imported" in line
    assert server.calls == 0 and not (out / "results.json").exists()


def test_a_plugin_parsing_sys_argv_at_import_sees_only_its_own_name(capsys, server: ChatServer, tmp_path: Path) -> None:
    plugin = """
        import argparse, sys
        parser = argparse.ArgumentParser(prog="other-program")
        parser.add_argument("--verbose-other", action="store_true")
        ARGS = parser.parse_args()  # mmtasks' --tasks ... would be "unrecognized arguments" + its usage
        assert sys.argv == [__file__], sys.argv
    """
    code, err, out = run(capsys, server, tmp_path, plugin)
    assert "usage: other-program" not in err  # before: another program's usage, then exit 2
    assert code in (0, 1), err and (out / "results.json").exists()
    assert sys.argv[0] != __file__  # and the CLI's own argv is back


def test_an_installed_plugin_that_exits_at_import_is_named(tmp_path: Path) -> None:
    site = fake_installed_package(tmp_path / "site")
    write(site / "mmtasks_ep_demo" / "__init__.py", "import sys\nsys.exit(0)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    proc = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "muirbench", "--model", "random", "--data-dir", str(SAMPLE),
                           "--output-path", str(tmp_path / "out"), "--no-cache", "--no-progress"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr  # before: 0, no output, no results
    assert "the mmtasks plugin 'demo' of mmtasks-ep-demo (mmtasks_ep_demo) failed to import: it called exit" in error_line(proc.stderr)
    assert not (tmp_path / "out" / "results.json").exists()


def group_run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *include: str) -> tuple[int, str, Path]:
    out = tmp_path / f"out{len(include)}"
    code = main(["--tasks", "realbench_ranking", "--model", "random", "--data-dir", str(SAMPLE), "--output-path", str(out),
                 "--no-cache", "--no-progress", *include])
    return code, capsys.readouterr().err, out


def test_a_plugin_task_naming_a_builtin_group_is_a_load_error(capsys, tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    write(inc / "joiner.yaml", f"""
        include: {REPO / 'tasks' / 'realbench' / 'ranking_easy.yaml'}
        task: always_right
        group: [realbench_ranking]
    """)
    code, err, out = group_run(capsys, tmp_path, "--include-path", str(inc))
    assert code == 2  # before: 0, and the group's average moved (22.22 -> 25.93)
    line = error_line(err)
    assert "joiner.yaml" in line and "field 'group'" in line and "belongs to the tasks in" in line
    assert not (out / "results.json").exists()
    code = main(["--tasks", "always_right", "--include-path", str(inc), "--model", "random", "--data-dir", str(SAMPLE),
                 "--no-cache", "--no-progress", "--output-path", str(tmp_path / "x")])
    assert code == 2 and "field 'group'" in error_line(capsys.readouterr().err)


def test_a_task_inheriting_a_builtin_group_through_include_is_not_a_member(capsys, tmp_path: Path) -> None:
    code, _, plain = group_run(capsys, tmp_path)
    assert code == 0
    inc = tmp_path / "inc"
    write(inc / "copy.yaml", f"include: {REPO / 'tasks' / 'realbench' / 'ranking_easy.yaml'}\ntask: ranking_easy_copy\n")
    code, _, with_copy = group_run(capsys, tmp_path, "--include-path", str(inc))
    assert code == 0
    groups = [json.loads((o / "results.json").read_text())["groups"]["realbench_ranking"] for o in (plain, with_copy)]
    assert groups[0] == groups[1] and "ranking_easy_copy" not in groups[1]["tasks"]
