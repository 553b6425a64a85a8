"""MMIU: the options string as a list, and the authors' headline (the mean of the 52 task accuracies).

Loaded as a plugin file by ``mmiu.yaml`` (``plugins:``); the names it registers are
visible to the tasks that list it.

- ``mmiu_choices`` (a record adapter): the Hub record holds its options as one string,
  ``"A: ...\\nB: ..."``; the adapter adds ``choices``, the option texts in letter order,
  so that the generic ``choice`` parser knows each question's letters and texts (the
  record is otherwise unchanged).
- ``mmiu_task_mean`` (an aggregator): the authors' ``evaluate_correct.py``
  (github.com/OpenGVLab/MMIU) computes each task's accuracy, then "Overall" as the plain
  mean of the task accuracies (``global_accuracy_df.mean()`` over the task rows). ``acc``
  is that mean over the tasks of the run; ``acc_micro`` is the share of all questions
  answered right; the breakdowns (per task, per image relation) are the generic
  per-question ones. The stderr of ``acc`` is a bootstrap that resamples the questions
  within each task (ours).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.errors import DataError
from mmtasks.registry import adapters
from mmtasks.scoring.aggregation import TaskResult, aggregator, mean_of_means, per_sample_mean, values_by_label
from mmtasks.scoring.bootstrap import bootstrap_mean_of_means_stderr

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

#: the breakdown (task YAML ``breakdowns``) holding each question's task
TASK_BREAKDOWN = "task"
METRIC = "acc"
#: "A: text" at the start of a line (the dataset card's and InternVL's reading of ``options``)
_OPTION = re.compile(r"^\s*([A-Z])\s*:\s?(.*)$")


@adapters.register("mmiu_choices")
def mmiu_choices(record: dict[str, Any]) -> dict[str, Any]:
    """``choices``: the option texts of ``options`` ("A: x\\nB: y" -> ["x", "y"]), in letter order."""
    options = record.get("options")
    if not isinstance(options, str):
        raise DataError(f"expected the options as one string, got {type(options).__name__}", field="options")
    choices: list[str] = []
    for line in options.split("\n"):
        if not line.strip():
            continue
        match = _OPTION.match(line)
        if match is None or match.group(1) != chr(ord("A") + len(choices)):
            if choices:  # a continuation line of the previous option
                choices[-1] = f"{choices[-1]}\n{line}"
                continue
            raise DataError(f"an option must start with its letter ('A: ...'), got {line[:60]!r}", field="options")
        choices.append(match.group(2).strip())
    if not choices:
        raise DataError("no options", field="options")
    return {**record, "choices": choices}


def _emits(config: "TaskConfig") -> list[str]:
    return [METRIC]


@aggregator("mmiu_task_mean", emits=_emits)
def mmiu_task_mean(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """The generic per-question means and breakdowns, with ``acc`` replaced by the mean of
    the per-task accuracies (the authors' Overall) and the per-question mean kept as
    ``acc_micro``."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    by_task = values_by_label(samples, METRIC, TASK_BREAKDOWN)
    result.metrics[f"{METRIC}_micro"] = result.metrics.get(METRIC)
    result.metrics[METRIC] = mean_of_means(by_task)  # the authors' Overall
    result.metrics[f"{METRIC}_all"] = mean_of_means(values_by_label(samples, METRIC, TASK_BREAKDOWN, unscored=0.0))
    result.metrics[f"{METRIC}_stderr"] = bootstrap_mean_of_means_stderr(by_task, seed)
    result.counts = {**result.counts, "tasks": len(by_task)}
    return result
