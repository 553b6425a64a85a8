"""``mmtasks run-set``: 2 models x 3 tasks, the process killed after the first model and started
again, gives one leaderboard of both (the finished model is not run again); a model that fails
to load is retried and reported."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manifest(tmp_path: Path) -> Path:
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there: the model cannot load
    path = tmp_path / "set.yaml"
    path.write_text(f"""\
output: runs
tasks: [realbench_ranking_easy, realbench_extraction_hard, mmdu]
options: {{data_dir: {SAMPLE}, judge: random, limit: 3, allow_failures: true}}
retries: 1
backoff_s: 0
models:
  - name: first
    model: random
  - name: unreachable
    model: openai:test-model
    model_args: "base_url={dead},max_retries=0,timeout=5"
  - name: second
    model: random
    options: {{seed: 7}}
""")
    return path


def start(path: Path, tmp_path: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MMTASKS_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.Popen([sys.executable, "-m", "mmtasks", "run-set", str(path)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_killed_set_resumes_into_one_leaderboard(tmp_path):
    path = manifest(tmp_path)
    state = tmp_path / "runs" / "run-set.json"
    proc = start(path, tmp_path)
    try:
        for _ in range(6000):  # a hang guard only: the loop ends when the first model is done
            if state.is_file() and json.loads(state.read_text())["models"].get("first", {}).get("status") == "done":
                break
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert json.loads(state.read_text())["models"]["first"]["status"] == "done"
    again = start(path, tmp_path)
    out, err = again.communicate(timeout=600)
    assert again.returncode == 1, err[-3000:]  # one model failed
    models = json.loads(state.read_text())["models"]
    assert models["first"]["attempts"] == 1  # done before the kill: not run again
    assert models["second"]["status"] == "done"
    assert models["unreachable"]["status"] == "failed" and models["unreachable"]["attempts"] >= 2  # retried
    assert "is not usable" in models["unreachable"]["error"]
    assert "unreachable (" in out and "attempt(s)): " in out and "run-set: 1 of 3 model(s) failed:" in out
    table = [line.split() for line in out.splitlines()]
    assert ["model", "status", "attempts", "tasks", "/", "error"] in table  # the status table
    assert ["first", "done", "1", "realbench_ranking_easy", "3", "docs,", "realbench_extraction_hard", "3", "docs,",
            "mmdu", "3", "docs"] in table
    board = json.loads((tmp_path / "runs" / "leaderboard" / "leaderboard.json").read_text())
    rows = {bench["id"]: sorted(e["run_name"] for e in bench["entries"] if e["source"] == "run") for bench in board["benchmarks"]}
    assert rows["realbench"] == rows["mmdu"] == ["first", "second"]  # one leaderboard: both models, one row each
    assert (tmp_path / "runs" / "first" / "results.json").is_file() and (tmp_path / "runs" / "second" / "results.json").is_file()
