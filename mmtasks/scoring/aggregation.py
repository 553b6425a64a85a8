"""Turning a task's samples into its results: metric means with bootstrap
standard errors, failure counts and breakdowns.

Aggregators are registered by name (``aggregator:`` in the task YAML) with the
:func:`aggregator` decorator, which also declares the metrics each reports; the
default, ``per_sample_mean``, averages each per-sample metric (those with a
``function``).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mmtasks import registry
from mmtasks.scoring.bootstrap import bootstrap_stderr

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
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


AggregatorFn = Callable[["Task", Iterable["Sample"], int], TaskResult]


@dataclass(frozen=True)
class AggregatorSpec:
    """A registered aggregator."""

    name: str
    #: ``(task, samples, seed) -> TaskResult``
    fn: AggregatorFn
    #: the metric names it reports for a task config; the YAML's ``metrics:`` are checked
    #: against them when the task loads
    emits: Callable[["TaskConfig"], Collection[str]]


def aggregator(name: str, *, emits: Callable[["TaskConfig"], Collection[str]]) -> Callable[[AggregatorFn], AggregatorFn]:
    """Register the decorated function as aggregator ``name`` (an :class:`AggregatorSpec` in
    ``mmtasks.registry.aggregators``); the function itself is returned unchanged."""

    def deco(fn: AggregatorFn) -> AggregatorFn:
        registry.aggregators.register(name, AggregatorSpec(name=name, fn=fn, emits=emits))
        return fn

    return deco


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def mean_and_stderr(values: Sequence[float], seed: int) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return sum(values) / len(values), bootstrap_stderr(list(values), seed=seed)


class _Values:
    """A group's per-metric values in sample order (8 bytes a value) and its member count."""

    def __init__(self, metric_names: Sequence[str]) -> None:
        self.n = 0
        self.values = {m: array("d") for m in metric_names}

    def add(self, sample: "Sample", get: Callable[["Sample", str], float | None]) -> None:
        self.n += 1
        for m, values in self.values.items():
            v = get(sample, m)
            if v is not None:
                values.append(v)


def _metric(sample: "Sample", name: str) -> float | None:
    return sample.metrics.get(name)


def _add_to_groups(groups: dict[str, dict[str, _Values]], sample: "Sample", metric_names: Sequence[str], get: Callable[["Sample", str], float | None]) -> None:
    for name, label in sample.breakdown.items():
        by_label = groups.setdefault(name, {})
        group = by_label.get(label)
        if group is None:
            group = by_label[label] = _Values(metric_names)
        group.add(sample, get)


def _table(groups: dict[str, dict[str, _Values]], metric_names: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, by_label in groups.items():
        table: dict[str, dict[str, Any]] = {}
        for label in sorted(by_label, key=label_sort_key):
            group = by_label[label]
            row: dict[str, Any] = {m: mean(group.values[m]) for m in metric_names}
            row["n"] = group.n
            table[label] = row
        out[name] = table
    return out


def breakdown_table(samples: Iterable["Sample"], metric_names: Sequence[str], value: Callable[["Sample", str], float | None] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """breakdown name -> group label -> {metric: mean, n: count}, in one pass over ``samples``."""
    groups: dict[str, dict[str, _Values]] = {}
    for s in samples:
        _add_to_groups(groups, s, metric_names, value or _metric)
    return _table(groups, metric_names)


def label_sort_key(label: str) -> tuple[int, float, str]:
    """Numeric labels and buckets ("1-6", "[4,6)") in numeric order, then the rest alphabetically."""
    head = label.strip("[(").split("-")[0].split(",")[0]
    try:
        return (0, float(head), label)
    except ValueError:
        return (1, 0.0, label)


def _metrics_with_function(config: "TaskConfig") -> list[str]:
    return [m.name for m in config.metrics if m.function]


@aggregator("per_sample_mean", emits=_metrics_with_function)
def per_sample_mean(task: "Task", samples: Iterable["Sample"], seed: int) -> TaskResult:
    """Means of each metric with bootstrap stderr, counts of failures and unparsed answers, and
    breakdowns, in one pass over ``samples`` (which may be read back from disk as they come)."""
    names = [m.name for m in task.config.metrics]
    overall = _Values(names)
    groups: dict[str, dict[str, _Values]] = {}
    failures = unparsed = 0
    for s in samples:
        overall.add(s, _metric)
        _add_to_groups(groups, s, names, _metric)
        failures += 1 if s.failures else 0
        unparsed += 1 if s.unparsed else 0
    result = TaskResult(n_samples=overall.n)
    for m in task.config.metrics:
        values = overall.values[m.name]
        avg, err = mean_and_stderr(values, seed)
        result.metrics[m.name] = avg
        result.metrics[f"{m.name}_stderr"] = err
        result.higher_is_better[m.name] = m.higher_is_better
        if failures:
            # failed requests counted as 0, beside the headline that excludes them
            result.metrics[f"{m.name}_all"] = sum(values) / overall.n if overall.n else None
    result.metrics["unparsed"] = unparsed
    result.metrics["failures"] = failures
    result.problems = {"request_failures": failures, "unparsed": unparsed}
    result.breakdowns = _table(groups, names)
    return result
