"""The category-macro shape's aggregator (a plugin file), written as the README's recipe says:
``per_sample_mean`` for the generic means and breakdowns, then the mean of the category means
of ``rouge_l`` as ``rouge_l_macro``. It sets no ``rouge_l_macro_all``: no sample has a
``rouge_l_macro``, so ``per_sample_mean`` reports none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mmtasks.plugin import aggregator
from mmtasks.scoring.aggregation import TaskResult, mean_of_means, per_sample_mean, values_by_label

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring


def _emits(config: "TaskConfig") -> list[str]:
    return ["rouge_l", "rouge_l_macro"]


@aggregator("category_macro", emits=_emits)
def category_macro(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    result.metrics["rouge_l_macro"] = mean_of_means(values_by_label(samples, "rouge_l", "category"))
    return result
