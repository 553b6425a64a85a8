"""Turning a task's samples into its results: metric means with bootstrap
standard errors, failure counts and breakdowns.

Aggregators are registered by name (``aggregator:`` in the task YAML); the
default, ``per_sample_mean``, averages each per-sample metric.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mmtasks.errors import ConfigError
from mmtasks.scoring.bootstrap import bootstrap_stderr

if TYPE_CHECKING:
    from mmtasks.dialogues.sample import Sample
    from mmtasks.task import Task


@dataclass
class TaskResult:
    """What results.json holds for one task."""

    metrics: dict[str, float | int | None] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, float | int | None]]] = field(default_factory=dict)
    higher_is_better: dict[str, bool] = field(default_factory=dict)
    n_samples: int = 0
    #: counted problems: request failures, unparsed answers, judge failures
    problems: dict[str, int] = field(default_factory=dict)


Aggregator = Callable[["Task", Sequence["Sample"], int], TaskResult]
_AGGREGATORS: dict[str, Aggregator] = {}


def aggregator(name: str) -> Callable[[Aggregator], Aggregator]:
    def deco(fn: Aggregator) -> Aggregator:
        _AGGREGATORS[name] = fn
        return fn

    return deco


def get_aggregator(name: str) -> Aggregator:
    try:  # judge-based benchmarks register their own aggregators
        from mmtasks.scoring import mmdu, mmrc  # noqa: F401
    except ImportError:
        pass
    if name not in _AGGREGATORS:
        raise ConfigError(f"unknown aggregator {name!r}", field="aggregator", hint=f"known: {', '.join(sorted(_AGGREGATORS))}")
    return _AGGREGATORS[name]


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def mean_and_stderr(values: Sequence[float], seed: int) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return sum(values) / len(values), bootstrap_stderr(list(values), seed=seed)


def breakdown_table(samples: Sequence["Sample"], metric_names: Sequence[str], value: Callable[["Sample", str], float | None] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """breakdown name -> group label -> {metric: mean, n: count}."""
    get = value or (lambda s, m: s.metrics.get(m))
    groups: dict[str, dict[str, list["Sample"]]] = {}
    for s in samples:
        for name, label in s.breakdown.items():
            groups.setdefault(name, {}).setdefault(label, []).append(s)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, by_label in groups.items():
        table: dict[str, dict[str, Any]] = {}
        for label in sorted(by_label, key=label_sort_key):
            members = by_label[label]
            row: dict[str, Any] = {}
            for m in metric_names:
                vals = [v for s in members if (v := get(s, m)) is not None]
                row[m] = mean(vals)
            row["n"] = len(members)
            table[label] = row
        out[name] = table
    return out


def label_sort_key(label: str) -> tuple[int, float, str]:
    """Numeric labels and buckets ("1-6", "[4,6)") in numeric order, then the rest alphabetically."""
    head = label.strip("[(").split("-")[0].split(",")[0]
    try:
        return (0, float(head), label)
    except ValueError:
        return (1, 0.0, label)


@aggregator("per_sample_mean")
def per_sample_mean(task: "Task", samples: Sequence["Sample"], seed: int) -> TaskResult:
    result = TaskResult(n_samples=len(samples))
    failures = sum(1 for s in samples if s.failures)
    unparsed = sum(1 for s in samples if s.unparsed)
    for m in task.config.metrics:
        values = [v for s in samples if (v := s.metrics.get(m.name)) is not None]
        avg, err = mean_and_stderr(values, seed)
        result.metrics[m.name] = avg
        result.metrics[f"{m.name}_stderr"] = err
        result.higher_is_better[m.name] = m.higher_is_better
        if failures:
            # failed requests counted as 0, beside the headline that excludes them
            result.metrics[f"{m.name}_all"] = sum(values) / len(samples) if samples else None
    result.metrics["unparsed"] = unparsed
    result.metrics["failures"] = failures
    result.problems = {"request_failures": failures, "unparsed": unparsed}
    result.breakdowns = breakdown_table(samples, [m.name for m in task.config.metrics])
    return result
