"""The Slurm job array of docs/running-at-scale.md, run through a stub ``sbatch`` that executes
each array task in turn (with ``SLURM_ARRAY_TASK_ID`` and ``SLURM_ARRAY_TASK_COUNT`` set as Slurm
sets them), then merged as the page says: the merged run equals one process."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from mmtasks.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
PAGE = ROOT / "docs" / "running-at-scale.md"

#: a stub of Slurm's sbatch: reads the script's #SBATCH --array=A-B and runs the script once per task
STUB = '''#!{python}
import os, re, subprocess, sys
script = sys.argv[-1]
text = open(script).read()
first, last = map(int, re.search(r"^#SBATCH --array=(\\d+)-(\\d+)", text, re.M).groups())
for task in range(first, last + 1):
    env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT=str(last - first + 1),
               SLURM_ARRAY_JOB_ID="1")
    code = subprocess.run(["bash", script], env=env).returncode
    if code:
        sys.exit(code)
print("Submitted batch job 1")
'''


def documented_script() -> str:
    text = PAGE.read_text(encoding="utf-8").split("### Slurm job array", 1)[1]
    return re.search(r"```\n(#!/bin/bash\n.*?)```", text, re.S).group(1)


def test_the_documented_slurm_array_merges_to_one_process(tmp_path, monkeypatch):
    script = documented_script()
    assert "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" in script
    # the page's script, on this test's tasks, model and data, as an array of 3
    script = (script.replace("#SBATCH --array=0-7", "#SBATCH --array=0-2")
              .replace("--tasks realbench,mmdu --model qwen2-vl-7b --data-dir ~/data",
                       f"--tasks realbench_ranking_easy,mmdu --model random --judge random --limit 5 --data-dir {SAMPLE} "
                       "--no-progress --allow-failures")
              .replace("mmtasks ", f"{sys.executable} -m mmtasks ", 1))
    assert "--array=0-2" in script and "--model random" in script
    job = tmp_path / "job.sh"
    job.write_text(script)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sbatch = bin_dir / "sbatch"
    sbatch.write_text(STUB.format(python=sys.executable))
    sbatch.chmod(sbatch.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT),
               MMTASKS_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(["sbatch", str(job)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    slices = sorted((tmp_path / "runs").glob("q7b-slice-*"))
    assert [p.name for p in slices] == ["q7b-slice-0", "q7b-slice-1", "q7b-slice-2"]
    monkeypatch.chdir(tmp_path)
    assert main(["merge", "runs/q7b", *map(str, slices)]) == 0
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache2"))
    assert main(["--tasks", "realbench_ranking_easy,mmdu", "--model", "random", "--judge", "random", "--limit", "5",
                 "--data-dir", str(SAMPLE), "--no-progress", "--allow-failures", "--output-path", "single"]) == 0
    a = json.loads((tmp_path / "runs" / "q7b" / "results.json").read_text())
    b = json.loads((tmp_path / "single" / "results.json").read_text())
    assert {k: v for k, v in a.items() if k not in ("date", "run_stats")} == {k: v for k, v in b.items() if k not in ("date", "run_stats")}
    for task in ("realbench_ranking_easy", "mmdu"):
        assert (tmp_path / "runs" / "q7b" / "samples" / f"{task}.jsonl").read_bytes() == \
            (tmp_path / "single" / "samples" / f"{task}.jsonl").read_bytes()
