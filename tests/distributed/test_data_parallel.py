"""Data parallel runs under real launchers (torchrun, accelerate launch) on the CPU (gloo):
the files rank 0 writes are those of a single-process run, other ranks stay silent, and a
failing rank stops the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmtasks.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
TASKS = "realbench_ranking_easy,realbench_extraction_hard"
#: single-turn, multi-turn (MMDU) and replay-then-probe (MMRC) dialogues, with judge calls
RANDOM_TASKS = f"{TASKS},mmdu,mmrc"
#: results.json keys that may differ between two runs of the same evaluation
RUN_SPECIFIC = {"date", "run_stats"}

pytest.importorskip("torch.distributed")


def torchrun(nproc: int, log_dir: Path | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc)]
    if log_dir is not None:  # each rank's stdout and stderr in its own file
        cmd += ["--log-dir", str(log_dir), "--redirects", "3"]
    return [*cmd, "-m", "mmtasks"]


def accelerate_launch(nproc: int) -> list[str]:
    pytest.importorskip("accelerate")
    return [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(nproc),
            "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "mmtasks"]


def launch(launcher: list[str], args: list[str], tmp_path: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               MMTASKS_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([*launcher, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def common_args(out: Path, *extra: str, tasks: str = TASKS) -> list[str]:
    return ["--tasks", tasks, "--data-dir", str(SAMPLE), "--output-path", str(out), "--no-cache", "--no-progress", *extra]


def single_process(out: Path, *extra: str, tasks: str = TASKS) -> None:
    assert main(common_args(out, *extra, tasks=tasks)) == 0


def assert_same_files(dp: Path, single: Path, world_size: int, tasks: str = TASKS) -> None:
    a = json.loads((dp / "results.json").read_text())
    b = json.loads((single / "results.json").read_text())
    assert {k: v for k, v in a.items() if k not in RUN_SPECIFIC} == {k: v for k, v in b.items() if k not in RUN_SPECIFIC}
    assert a["results"] and a["n-samples"] == b["n-samples"]
    assert a["run_stats"]["world_size"] == world_size
    assert a["run_stats"]["sent"] == b["run_stats"]["sent"]
    for task in tasks.split(","):
        assert (dp / "samples" / f"{task}.jsonl").read_bytes() == (single / "samples" / f"{task}.jsonl").read_bytes(), task
    assert sorted(p.name for p in (dp / "samples").iterdir()) == sorted(p.name for p in (single / "samples").iterdir())


def rank_logs(log_dir: Path, rank: int) -> tuple[str, str]:
    (folder,) = log_dir.glob(f"*/attempt_0/{rank}")
    return (folder / "stdout.log").read_text(), (folder / "stderr.log").read_text()


def test_hf_data_parallel_matches_a_single_process(tmp_path, tiny_llava_dir):
    """torchrun, 2 ranks: each rank loads the tiny LLaVA and serves every other document (the
    two tasks' documents interleave across ranks); rank 0 writes exactly the single-process files."""
    extra = ("--model", f"hf:{tiny_llava_dir}", "--model-args", "dtype=float32", "--limit", "5", "--allow-failures")
    proc = launch(torchrun(2, tmp_path / "logs"), common_args(tmp_path / "dp", *extra), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    single_process(tmp_path / "single", *extra)
    assert_same_files(tmp_path / "dp", tmp_path / "single", world_size=2)
    stdout0, _ = rank_logs(tmp_path / "logs", 0)
    assert "mmtasks results" in stdout0 and "results:" in stdout0
    assert rank_logs(tmp_path / "logs", 1) == ("", "")  # other ranks print nothing but errors


@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_random_data_parallel_matches_a_single_process(tmp_path, launcher):
    """Uneven shards (3 ranks under torchrun) and accelerate's launcher, over single-turn,
    multi-turn and replay-then-probe dialogues with their judge calls (``random`` as judge too)."""
    cmd = torchrun(3) if launcher == "torchrun" else accelerate_launch(2)
    extra = ("--model", "random", "--judge", "random", "--seed", "5", "--limit", "5", "--allow-failures")
    proc = launch(cmd, common_args(tmp_path / "dp", *extra, tasks=RANDOM_TASKS), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("mmtasks results") == 1  # one results table: rank 0's
    single_process(tmp_path / "single", *extra, tasks=RANDOM_TASKS)
    assert_same_files(tmp_path / "dp", tmp_path / "single", world_size=3 if launcher == "torchrun" else 2, tasks=RANDOM_TASKS)
    judged = json.loads((tmp_path / "dp" / "results.json").read_text())["run_stats"]["sent"]
    assert judged["judge"] > 0 and judged["model"] > 0


def test_a_failing_rank_stops_the_run(tmp_path):
    """A document that only rank 1 serves has a template error: rank 1 prints it and exits 2,
    rank 0 stops waiting for it, the launcher fails, no results.json is written."""
    bench = tmp_path / "tasks"
    bench.mkdir()
    first, second = [json.loads(line)["id"] for line in (SAMPLE / "realbench" / "ranking_easy.jsonl").read_text().splitlines()[:2]]
    (bench / "broken.yaml").write_text(f"""\
task: broken_on_one_doc
dataset:
  local: {{dir: realbench, file: ranking_easy.jsonl}}
prompt:
  user: |
    {{% if doc_id == "{second}" %}}{{{{ no_such_variable }}}}{{% endif %}}{{{{ image(0) }}}} Answer A, B, C or D.
target: "field:answer"
answer: {{parser: choice, retries: 0, space: {{kind: choice}}}}
metrics:
  - {{name: acc, function: choice_acc}}
""")
    args = ["--tasks", "broken_on_one_doc", "--include-path", str(bench), "--model", "random", "--limit", "4",
            "--data-dir", str(SAMPLE), "--output-path", str(tmp_path / "out"), "--no-cache", "--no-progress"]
    proc = launch(torchrun(2), args, tmp_path, timeout=600)  # the other rank must not hang (the limit is a hang guard)
    assert proc.returncode != 0
    assert f"mmtasks: error: {bench / 'broken.yaml'}, document {second!r}, field 'prompt.user'" in proc.stderr
    assert f"document {first!r}" not in proc.stderr
    assert not (tmp_path / "out" / "results.json").exists()
