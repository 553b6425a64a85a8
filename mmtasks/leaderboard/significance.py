"""Which leaderboard rows are tied: adjacent ranked run rows compared document by document.

Two run rows of a section, next to each other in rank order, are compared on the section's
headline column with ``mmtasks compare``'s statistics (:mod:`mmtasks.comparison`): over the
documents both runs hold (a document a run failed scored as the task's failure rule says), the paired difference of the headline metric and its 95% bootstrap
interval (whole clusters resampled where the task declares them; a column that is the mean of
several tasks: a bootstrap stratified by task), and for a right/wrong metric of one task McNemar's
exact test. A difference that is not significant marks the upper row as tied with the one below.
Rows whose runs ran different task definitions, hold no samples or share no document get no mark.

The section's minimum detectable effect is the headline difference its documents can detect at
80% power, from its run rows' median standard error and independent errors: 2.80 * sqrt(2) * stderr.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from mmtasks.comparison.paired import minimum_detectable_effect, stratified_bootstrap
from mmtasks.errors import MmtasksError
from mmtasks.leaderboard.results import Run
from mmtasks.leaderboard.schema import Entry, Tie
from mmtasks.leaderboard.sections import Section


def _headline_tasks(section: Section) -> list[tuple[str, str]]:
    """(task, metric) pairs the headline column is made of."""
    column = section.column(section.headline)
    keys = column.mean_of or [column.key]
    out = []
    for key in keys:
        part = section.column(key)
        if part.task is not None and part.metric is not None:
            out.append((part.task, part.metric))
    return out


def tie_between(section: Section, upper: Mapping[str, Run], lower: Mapping[str, Run], below: str) -> Tie | None:
    """The paired comparison of two rows (task -> the run each row takes it from) on the
    headline, or None when it cannot be made."""
    from mmtasks.comparison.runs import compare_task, read_samples

    parts = _headline_tasks(section)
    if not parts:
        return None
    strata: list[list[float]] = []
    single = None
    documents = 0
    for task, metric in parts:
        a, b = lower.get(task), upper.get(task)
        if a is None or b is None:
            return None
        try:
            row, diffs = compare_task(task, a.results, b.results, read_samples(a.folder, task), read_samples(b.folder, task))
        except MmtasksError:  # different task definitions or documents, or no samples: no mark
            return None
        if not diffs.get(metric):
            return None
        strata.append(diffs[metric])
        single = next((m for m in row.metrics if m.metric == metric), None)
        documents += single.n if single is not None else len(diffs[metric])
    if len(parts) == 1 and single is not None:
        return Tie(below=below, difference=single.difference, low=single.low, high=single.high, documents=documents,
                   mcnemar_p=single.mcnemar_p, tied=not single.significant)
    interval = stratified_bootstrap(strata)
    significant = interval.significant and all(len(s) >= 2 for s in strata)
    return Tie(below=below, difference=interval.mean, low=interval.low, high=interval.high, documents=documents,
               tied=not significant)


def mark_ties(section: Section, entries: Sequence[Entry], task_runs: Mapping[str, Mapping[str, Run]]) -> list[Entry]:
    """``entries`` (sorted, ranked first) with each ranked run row's :class:`Tie` to the ranked run
    row below it; ``task_runs``: entry id -> task -> its run."""
    ranked = [e for e in entries if e.ranked and e.source == "run" and e.id in task_runs]
    ties: dict[str, Tie] = {}
    for upper, lower in zip(ranked, ranked[1:]):
        tie = tie_between(section, task_runs[upper.id], task_runs[lower.id], lower.id)
        if tie is not None:
            ties[upper.id] = tie
    return [e.model_copy(update={"tie": ties[e.id]}) if e.id in ties else e for e in entries]


def _headline_stderr(parts: Sequence[tuple[str, str]], runs: Mapping[str, Run]) -> float | None:
    errors = []
    for task, metric in parts:
        run = runs.get(task)
        stderr = run.results.results[task].values.get(f"{metric}_stderr") if run is not None else None
        if not isinstance(stderr, (int, float)) or not math.isfinite(stderr):
            return None
        errors.append(float(stderr))
    # a mean of T tasks: its standard error is sqrt(sum of squares) / T
    return math.sqrt(sum(e * e for e in errors)) / len(errors)


def section_mde(section: Section, entries: Sequence[Entry], task_runs: Mapping[str, Mapping[str, Run]]) -> float | None:
    """The section's minimum detectable headline difference (see the module's docstring), from
    the median headline standard error of its ranked run rows (those with a positive one: a
    model right or wrong on every document has none to tell); None without such a row."""
    parts = _headline_tasks(section)
    errors = sorted(se for e in entries if e.ranked and e.source == "run" and e.id in task_runs
                    if (se := _headline_stderr(parts, task_runs[e.id])) is not None and se > 0) if parts else []
    if not errors:
        return None
    middle = len(errors) // 2
    median = errors[middle] if len(errors) % 2 else (errors[middle - 1] + errors[middle]) / 2
    return minimum_detectable_effect(math.sqrt(2) * median)
