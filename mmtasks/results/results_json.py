"""Writing ``results.json``: built and validated through :class:`~mmtasks.results.schema.ResultsFile`
(the one schema its readers use too), then written atomically."""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mmtasks import __version__
from mmtasks.results.files import atomic_write_text, dumps
from mmtasks.results.schema import GroupResult, ResultsFile, RunCard
from mmtasks.scheduling.stats import reply_summary
from mmtasks.scoring.aggregation import TaskResult
from mmtasks.scoring.group_aggregation import GroupScore
from mmtasks.task import Task

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def git_hash() -> str | None:
    """The commit of the mmtasks checkout this code runs from; ``None`` for an installed package
    (or one that merely sits inside some other repository)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel", "--short", "HEAD"], cwd=PACKAGE_DIR,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != PACKAGE_DIR.parent:
        return None
    return lines[1]


def config_hash(task: Task) -> str:
    """A hash of ``task``'s config as run, independent of where its files sit: the config's JSON
    with each plugin file replaced by its name and the SHA-256 of its content."""
    config = task.config.model_dump(mode="json")
    config["plugins"] = [{"name": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
                         for path in task.plugins]
    return hashlib.sha256(json.dumps(config, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def scored_count(coverage: Mapping[str, Any] | None, result: TaskResult) -> int:
    """The documents a member's figures are over (its weight in a ``by_size`` group mean): the
    coverage's scored count, else every sample."""
    scored = (coverage or {}).get("scored")
    return scored if isinstance(scored, int) and not isinstance(scored, bool) else result.n_samples


def group_results(groups: Mapping[str, list[str]], tasks: Mapping[str, Task],
                  results: Mapping[str, TaskResult],
                  variants: Mapping[str, Mapping[str, dict[str, Any]]] | None = None,
                  group_scores: Mapping[str, tuple[str, GroupScore]] | None = None) -> dict[str, GroupResult]:
    """Per group the run touches: the plain mean of its tasks' headline metrics (RealBench's
    "avg" column), only when every member was run and scored; otherwise which members are
    missing and the mean over those present, labelled partial. For each scoring variant every
    member declares: the mean of the members' headlines as the variant scores them, plain or
    weighted by each member's scored documents as the variant's ``group_mean`` says."""
    out: dict[str, GroupResult] = {}
    for group, members in groups.items():
        present = [t for t in members if t in results]
        if not present:
            continue
        values: dict[str, float] = {}
        for t in present:
            primary = tasks[t].config.primary_metric
            v = results[t].metrics.get(primary) if primary else None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                values[t] = float(v)
        missing = [t for t in members if t not in results]
        unscored = [t for t in present if t not in values]
        mean = sum(values.values()) / len(values) if values else None
        complete = not missing and not unscored
        by_variant: dict[str, float | None] = {}
        shared = [set((variants or {}).get(t, {})) for t in present]
        for name in sorted(set.intersection(*shared)) if shared else []:
            scores: list[tuple[float, float]] = []  # (headline, weight) per member
            by_size = any(v.group_mean == "by_size" for t in present for v in tasks[t].config.variants if v.name == name)
            for t in present:
                primary = tasks[t].config.primary_metric
                figures = (variants or {})[t][name]
                v = figures["metrics"].get(primary) if primary else None
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    scores.append((float(v), float(scored_count(figures.get("coverage"), results[t])) if by_size else 1.0))
            weight = sum(w for _, w in scores)
            by_variant[name] = (sum(v * w for v, w in scores) / weight
                                if complete and len(scores) == len(present) and weight else None)
        aggregated = (group_scores or {}).get(group)
        out[group] = GroupResult(
            aggregator=aggregated[0] if aggregated else None,
            metrics=aggregated[1].metrics if aggregated else {},
            counts=aggregated[1].counts if aggregated else {},
            variants=by_variant,
            average=mean if complete else None,
            n_tasks=len(present),
            tasks=present,
            missing_tasks=missing,
            unscored_tasks=unscored,
            partial_average=None if complete else mean,
        )
    return out


def build_results(
    *, tasks: Mapping[str, Task], results: Mapping[str, TaskResult], n_original: Mapping[str, int],
    groups: Mapping[str, list[str]], run_config: dict[str, Any], stats: dict[str, Any],
    matcher: Mapping[str, dict[str, Any]] | None = None,
    replies: Mapping[str, dict[str, int]] | None = None,
    generation: Mapping[str, dict[str, Any]] | None = None,
    repeats: Mapping[str, dict[str, Any]] | None = None,
    run_card: RunCard | None = None,
    variants: Mapping[str, Mapping[str, dict[str, Any]]] | None = None,
    group_scores: Mapping[str, tuple[str, GroupScore]] | None = None,
    tokens: Mapping[str, dict[str, dict[str, int]]] | None = None,
    cost: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """results.json's object, validated by :class:`ResultsFile` (a bug here fails loudly,
    before the file is written)."""
    model = ResultsFile(
        results={name: {"alias": name, **r.metrics} for name, r in results.items()},
        groups=group_results(groups, tasks, results, variants, group_scores),
        breakdowns={name: r.breakdowns for name, r in results.items() if r.breakdowns},
        problems={name: r.problems for name, r in results.items()},
        coverage={name: r.coverage for name, r in results.items() if r.coverage is not None},
        replies={name: reply_summary(row) for name, row in (replies or {}).items() if name in results},
        configs={name: tasks[name].config.model_dump(mode="json") for name in results},
        config_hashes={name: config_hash(tasks[name]) for name in results},
        versions={name: tasks[name].config.version for name in results},
        generation={name: sent for name, sent in (generation or {}).items() if name in results},
        n_samples={name: {"original": n_original.get(name, r.n_samples), "effective": r.n_samples, **r.counts}
                   for name, r in results.items()},
        higher_is_better={name: r.higher_is_better for name, r in results.items()},
        matcher=dict(matcher or {}),
        repeats=dict(repeats or {}),
        variants={name: dict(v) for name, v in (variants or {}).items() if v and name in results},
        config={**run_config, "mmtasks_version": __version__},
        run_stats=stats,
        tokens={name: t for name, t in (tokens or {}).items() if name in results},
        cost=cost,
        run_card=run_card,
        git_hash=git_hash(),
        date=time.time(),
    )
    return model.to_json()


def write_results(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(json.loads(dumps(data)), indent=2, ensure_ascii=False) + "\n")
