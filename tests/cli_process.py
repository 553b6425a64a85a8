"""Running ``python -m mmtasks`` as a real subprocess (so it can be killed) against
the loopback chat server, and reading what it left behind."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.chat_wire import ReplyFn, last_user_text

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
#: fields of results.json that differ between two runs of the same evaluation
VOLATILE_RESULT_KEYS = ("date", "run_stats")


@dataclass
class CliRun:
    """A started ``python -m mmtasks`` whose output goes to files (no pipe can fill up)."""

    process: subprocess.Popen
    stdout_path: Path
    stderr_path: Path

    def wait(self, timeout: float = 120) -> int:
        return self.process.wait(timeout=timeout)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def cli_env(base_url: str, api_key: str = "sk-test-not-a-real-key-000", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_"))}
    env.update({"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": api_key, "PYTHONPATH": str(REPO)})
    env.update(extra)
    return env


def start_cli(args: Sequence[str], env: dict[str, str], logs: Path) -> CliRun:
    """Start ``python -m mmtasks ARGS``; stdout and stderr go to ``logs/<n>.out|err``."""
    logs.mkdir(parents=True, exist_ok=True)
    n = len(list(logs.glob("*.out")))
    out, err = logs / f"{n}.out", logs / f"{n}.err"
    with out.open("w") as fo, err.open("w") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "mmtasks", *args], cwd=REPO, env=env, stdout=fo, stderr=fe)
    return CliRun(proc, out, err)


def run_cli(args: Sequence[str], env: dict[str, str], logs: Path, timeout: float = 120) -> CliRun:
    run = start_cli(args, env, logs)
    run.wait(timeout)
    return run


def wait_until(condition: Callable[[], bool], timeout: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.02)


def cache_entries(cache_dir: Path) -> int:
    """Replies committed to the response cache (0 before it exists); safe while a run writes."""
    path = cache_dir / "responses.sqlite"
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=10)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
    finally:
        conn.close()


def comparable_results(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if k not in VOLATILE_RESULT_KEYS}


def samples_files(out_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out_dir / "samples").iterdir())}


def read_samples(out_dir: Path, task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out_dir / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()]


class Gate:
    """Wraps a server reply function: delivers the first ``limit`` replies, then holds every
    further call (no reply) until :meth:`release`, after which held calls fail (their client
    is gone by then). ``delivered`` lists the prompts answered, in order."""

    def __init__(self, reply: ReplyFn, limit: int | None = None) -> None:
        self.reply = reply
        self.limit = limit
        self.delivered: list[str] = []
        self.held = 0
        self._lock = threading.Lock()
        self._released = threading.Event()

    def __call__(self, body: dict) -> str:
        with self._lock:
            if self.limit is None or len(self.delivered) < self.limit:
                self.delivered.append(last_user_text(body))
                return self.reply(body)
            self.held += 1
        self._released.wait(120)
        raise ConnectionAbortedError("held by the gate until the client was stopped")

    def release(self) -> None:
        """Fail the held calls and deliver every later call."""
        with self._lock:
            self.limit = None
        self._released.set()
