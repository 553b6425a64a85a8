"""results.json in lm-evaluation-harness's layout (``results``, ``groups``, ``configs``,
``versions``, ``n-samples``, ``higher_is_better``, ``config``, ``git_hash``, ``date``),
plus ``breakdowns`` and ``problems``. ``results[task][metric]`` is a number."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from mmtasks import __version__
from mmtasks.results.files import atomic_write_text, dumps
from mmtasks.scoring.aggregation import TaskResult
from mmtasks.task import Task


def git_hash() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def group_results(groups: dict[str, list[str]], tasks: dict[str, Task], results: dict[str, TaskResult]) -> dict[str, dict[str, Any]]:
    """Per group: the plain mean of its tasks' headline metrics (RealBench's "avg" column)."""
    out: dict[str, dict[str, Any]] = {}
    for group, members in groups.items():
        present = [t for t in members if t in results]
        if not present:
            continue
        values = []
        for t in present:
            primary = tasks[t].config.primary_metric
            v = results[t].metrics.get(primary) if primary else None
            if isinstance(v, (int, float)):
                values.append(float(v))
        row: dict[str, Any] = {"average": sum(values) / len(values) if values else None, "n_tasks": len(present)}
        missing = [t for t in members if t not in results]
        if missing:
            row["missing_tasks"] = missing
        out[group] = row
    return out


def build_results(
    *, tasks: dict[str, Task], results: dict[str, TaskResult], n_original: dict[str, int],
    groups: dict[str, list[str]], run_config: dict[str, Any], stats: dict[str, Any],
) -> dict[str, Any]:
    return {
        "results": {name: {"alias": name, **r.metrics} for name, r in results.items()},
        "groups": group_results(groups, tasks, results),
        "breakdowns": {name: r.breakdowns for name, r in results.items() if r.breakdowns},
        "problems": {name: r.problems for name, r in results.items()},
        "configs": {name: tasks[name].config.model_dump(mode="json") for name in results},
        "versions": {name: tasks[name].config.version for name in results},
        "n-samples": {name: {"original": n_original.get(name, r.n_samples), "effective": r.n_samples, **r.counts} for name, r in results.items()},
        "higher_is_better": {name: r.higher_is_better for name, r in results.items()},
        "config": {**run_config, "mmtasks_version": __version__},
        "run_stats": stats,
        "git_hash": git_hash(),
        "date": time.time(),
    }


def write_results(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(json.loads(dumps(data)), indent=2, ensure_ascii=False) + "\n")
