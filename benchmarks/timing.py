"""Timing an in-process ``mmtasks`` CLI run (imports already done, stdout silenced)."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmtasks.cli import main as mmtasks_main
from mmtasks import registry
from mmtasks.dialogues.protocols import DialogueContext

if TYPE_CHECKING:
    from mmtasks.models.base import ChatModel
    from mmtasks.core.request import Reply
    from mmtasks.task import Task


def timed_cli(argv: list[str], out: Path) -> tuple[float, dict[str, Any]]:
    """Wall seconds of ``mmtasks ARGV`` and the results.json it wrote to ``out``."""
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = mmtasks_main(argv)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"mmtasks exited with {code}")
    return elapsed, json.loads((out / "results.json").read_text(encoding="utf-8"))


def one_dialogue_at_a_time(task: "Task", data: Path, model: "ChatModel") -> tuple[int, list["Reply"]]:
    """What lmms-eval's multi-round path and VLMEvalKit do: the task's protocol driven one
    dialogue after another, one request per model call (``--predict-only``: no judge).
    Returns the number of calls and the failed replies."""
    proto = registry.protocols.get(task.config.protocol).run
    ctx = DialogueContext(predict_only=True)
    calls, failed = 0, []
    for doc in task.documents(data):
        dialogue = proto(task, doc, ctx)
        try:
            requests = next(dialogue)
            while True:
                replies = []
                for req in requests:
                    replies.extend(model.generate_all([req]))
                    calls += 1
                failed.extend(r for r in replies if not r.ok)
                requests = dialogue.send(replies)
        except StopIteration:
            pass
    return calls, failed


def compile_mmtasks() -> None:
    """Write the bytecode of the mmtasks package, as pip does when it installs the wheel.

    A fresh ``python -m mmtasks`` measured from a source checkout would otherwise compile every
    module whose ``.pyc`` is missing or stale on each start (about 25 ms for 19 modules), and
    keep doing so where ``PYTHONDONTWRITEBYTECODE`` is set; the peers' packages, installed by
    pip, start from bytecode. Call it before timing commands."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "mmtasks"), quiet=1)


def run_process(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, float, int, float]:
    """Run a command to its end: (wall seconds, peak RSS in MB, exit code, start time.monotonic())."""
    import os
    import subprocess

    start_mono = time.monotonic()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:4]}... exited with {proc.returncode}: {err[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024, proc.returncode, start_mono


def median(values: list[float]) -> float:
    import statistics

    return statistics.median(values)
