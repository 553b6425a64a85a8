"""``per_turn_mean``: the default aggregator of ``multi_turn`` tasks, whose unit is the turn.

It reads the turn records the ``multi_turn`` protocol writes
(``Sample.extra["turns"]``). A turn's value of a metric is

- for a metric function (``metrics[].function``, ``aggregation: mean``): the
  function's score of the turn's parsed answer against the turn's reference
  (``record["metrics"]``), for every turn whose request succeeded;
- for a judge field (named in ``judge.metrics``): the verdict's field times
  ``judge.report_factor``, for every validly judged turn.

Per metric: the headline (and ``_micro``) is the mean over the turns that have a
value; ``_macro`` the mean over dialogues of their own means; ``_stderr`` a
cluster bootstrap over dialogues; ``_all`` counts the turns that should have a
value but failed (request failures, context overflows; judge failures for a
judge field) as 0 - it is None while some turn lacks a value for no counted
reason (``--predict-only`` leaves the judge unasked). ``coverage`` counts turns:
a turn is scored when some metric has a value for it (or it kept an answer for a
corpus metric); turns answered by a random guess are counted as ``guessed``. Breakdowns: ``turn`` (by position) and the task's own, each a
mean over the group's turns with ``n`` its number of scored turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mmtasks.scoring.aggregation import (TaskResult, TaskScoring, aggregator, coverage, function_and_judge_metrics,
                                         label_sort_key, turn_failure_kind, unscored_counts)
from mmtasks.scoring.bootstrap import bootstrap_ratio_stderr
from mmtasks.scoring.verdicts import is_number

if TYPE_CHECKING:
    from mmtasks.core.sample import Sample


@dataclass
class _Sums:
    """Sums and counts of one metric over a group of turns."""

    total: float = 0.0
    n: int = 0
    failed: int = 0

    def add(self, value: float) -> None:
        self.total += value
        self.n += 1

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None


@dataclass
class _Group:
    metrics: dict[str, _Sums] = field(default_factory=dict)
    scored: int = 0

    def add(self, values: dict[str, float], scored: bool) -> None:
        for name, value in values.items():
            self.metrics.setdefault(name, _Sums()).add(value)
        self.scored += int(scored)

    def row(self, names: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = {m: (self.metrics[m].mean if m in self.metrics else None) for m in names}
        out["n"] = self.scored
        return out


def turn_values(task: TaskScoring, record: dict[str, Any], function_metrics: Sequence[str], judge_metrics: Sequence[str],
                factor: float) -> dict[str, float]:
    """A turn's value of each metric that has one (see the module docstring)."""
    out: dict[str, float] = {}
    if record.get("status") == "request_failure":
        return out
    scores = record.get("metrics") or {}
    for m in function_metrics:
        if is_number(scores.get(m)):
            out[m] = float(scores[m])
    verdict = record.get("scores") if record.get("status") == "judged" else None
    for m in judge_metrics:
        if verdict is not None and is_number(verdict.get(m)) and m not in out:
            out[m] = factor * float(verdict[m])
    return out


@aggregator("per_turn_mean", emits=function_and_judge_metrics)  # metric functions per turn
def per_turn_mean(task: TaskScoring, samples: Sequence["Sample"], seed: int) -> TaskResult:
    cfg = task.config
    names = [m.name for m in cfg.metrics if m.name not in task.corpus_metrics]
    function_metrics = [m.name for m in cfg.metrics if m.function and m.name not in task.corpus_metrics]
    judge = cfg.judge
    judge_metrics = [n for n in (judge.metrics or []) if n not in function_metrics] if judge is not None else []
    factor = judge.report_factor if judge is not None else 1.0
    has_corpus = bool(task.corpus_metrics)

    overall = {m: _Sums() for m in names}
    unexplained_by_metric = dict.fromkeys(names, 0)
    numerators: dict[str, list[float]] = {m: [] for m in names}
    denominators: dict[str, list[float]] = {m: [] for m in names}
    macro: dict[str, list[float]] = {m: [] for m in names}
    by_turn: dict[str, _Group] = {}
    groups: dict[str, dict[str, _Group]] = {}
    unscored = unscored_counts()
    total_turns = unexplained = guessed = unparsed = 0
    for s in samples:
        dialogue = {m: _Sums() for m in names}
        for k, record in enumerate(s.extra.get("turns", [])):
            total_turns += 1
            guessed += int(bool(record.get("guessed")))
            status = record.get("status")
            values = turn_values(task, record, function_metrics, judge_metrics, factor)
            failed = status == "request_failure"
            for m in names:
                if m in values:
                    dialogue[m].add(values[m])
                elif failed or (status == "judge_failure" and m in judge_metrics):
                    dialogue[m].failed += 1
                elif m in judge_metrics and status != "judged":
                    unexplained_by_metric[m] += 1
            scored = bool(values) or (has_corpus and not failed)
            if failed:
                unscored[turn_failure_kind(record)] += 1
            elif not scored and names:
                if status == "judge_failure":
                    unscored["judge_failure"] += 1
                elif record.get("unparsed"):  # answer.unparsed: unscored leaves an unread reply unscored
                    unscored["unparsed"] += 1
                else:
                    unexplained += 1
            elif record.get("unparsed"):  # scored (as wrong), though no answer was read
                unparsed += 1
            by_turn.setdefault(str(k + 1), _Group()).add(values, scored)
            for name, label in s.breakdown.items():
                groups.setdefault(name, {}).setdefault(label, _Group()).add(values, scored)
        for m in names:
            d = dialogue[m]
            overall[m].total += d.total
            overall[m].n += d.n
            overall[m].failed += d.failed
            numerators[m].append(d.total)
            denominators[m].append(float(d.n))
            if d.n:
                macro[m].append(d.total / d.n)

    result = TaskResult(n_samples=len(samples))
    result.counts = {"turns": total_turns}
    result.coverage = coverage("turns", total_turns, unscored, unexplained, guessed, unparsed) if (names or has_corpus) else None
    for metric in cfg.metrics:
        if metric.name in task.corpus_metrics:
            continue
        o = overall[metric.name]
        micro = o.mean
        result.metrics[metric.name] = micro
        result.metrics[f"{metric.name}_micro"] = micro
        result.metrics[f"{metric.name}_macro"] = sum(macro[metric.name]) / len(macro[metric.name]) if macro[metric.name] else None
        result.metrics[f"{metric.name}_stderr"] = (bootstrap_ratio_stderr(numerators[metric.name], denominators[metric.name],
                                                                          seed=seed) if o.n else None)
        attempted = o.n + o.failed
        result.metrics[f"{metric.name}_all"] = (o.total / attempted if attempted and not unexplained_by_metric[metric.name]
                                                else None)
        result.higher_is_better[metric.name] = metric.higher_is_better
    result.breakdowns = {"turn": {label: g.row(names) for label, g in sorted(by_turn.items(), key=lambda kv: int(kv[0]))}}
    for name, by_label in groups.items():
        result.breakdowns[name] = {label: by_label[label].row(names) for label in sorted(by_label, key=label_sort_key)}
    return result
