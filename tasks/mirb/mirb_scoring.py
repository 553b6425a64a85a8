"""MIRB scoring: the authors' answer reading, correctness and averages.

Loaded as a plugin file by ``mirb.yaml`` (``plugins:``). Reimplemented from the authors' code,
github.com/ys-zong/MIRB at commit ``04c35b9``:

- ``mirb_prediction`` (parser): ``evals/eval.py``'s reading of a prediction. The reply is
  stripped (and stripped of newlines), then cut at its first newline, or where there is none at
  position 0 or later, at its first period (only a cut at a position above 0 is made: a reply
  starting with "." stays whole). For the subsets ``count``, ``visual_chain`` and ``3d_scene``
  the first run of digits is taken, else the cut text as a number word ("three", "third" -> 3,
  ``word_to_num``), else "".
- ``mirb_correct`` (metric), by subset as ``eval_scores`` picks the rule:
  ``exact_match`` (count, codeu, food, image_jigsaw, arxiv, visual_chain, plot_code, 3d_scene):
  the prediction equals the answer, ignoring case; ``exact_yes_no`` (analogy, attribute): a gold
  "yes" needs "yes" in the prediction, a gold "no" needs no "yes" in it; ``exact_in_match``
  (sightseeing): yes/no answers as ``exact_yes_no``, others the answer inside the prediction,
  ignoring case.
- ``mirb_mean`` (aggregator): ``evaluate.py`` scores each subset (accuracy x100);
  ``results_summary.py`` averages the subsets of each category (Knowledge: food, sightseeing;
  Reasoning: codeu, plot_code, analogy, 3d_scene; Perception: image_jigsaw, count, attribute;
  Multi-Hop: visual_chain, arxiv) and the four categories (the README's Average). ``acc`` is that
  Average, ``knowledge`` ... ``multi_hop`` the category means, ``acc_micro`` the share of all
  questions right (lmms-eval's ``mirb_score``). A category with no subset in the run has no
  mean and the Average is over the categories present (ours: the authors' script needs all 11).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mmtasks.plugin import metric, parser
from mmtasks.scoring.aggregation import TaskResult, aggregator, mean, mean_of_means, per_sample_mean, values_by_label

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

CATEGORIES = {
    "knowledge": ["food", "sightseeing"],
    "reasoning": ["codeu", "plot_code", "analogy", "3d_scene"],
    "perception": ["image_jigsaw", "count", "attribute"],
    "multi_hop": ["visual_chain", "arxiv"],
}
NUMBER_SUBSETS = {"count", "visual_chain", "3d_scene"}
YES_NO_SUBSETS = {"analogy", "attribute"}
IN_MATCH_SUBSETS = {"sightseeing"}
WORD_TO_NUM = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "first": "1", "second": "2", "third": "3", "fourth": "4",
    "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10",
}
METRIC = "acc"
SUBSET_BREAKDOWN = "subset"


def cut(reply: str) -> str:
    """The reply up to its first newline, else its first period (evals/eval.py)."""
    prediction = reply.strip().strip("\n")
    index = prediction.find("\n")
    if index <= 0:
        index = prediction.find(".")
    return prediction[:index] if index > 0 else prediction


@parser("mirb_prediction", target="raw")  # the authors compare the gold as written
def mirb_prediction(text: str, doc: Mapping[str, Any]) -> str:
    """The prediction as the authors compare it (never unparsed: no number reads as "")."""
    prediction = cut(text)
    if doc.get("subset") in NUMBER_SUBSETS:
        match = re.search(r"\d+", prediction)
        return match.group() if match else WORD_TO_NUM.get(prediction.lower(), "")
    return prediction


def _yes_no(prediction: str, gold: str) -> bool:
    said_yes = "yes" in prediction.lower()
    return said_yes if gold.lower() == "yes" else (gold.lower() == "no" and not said_yes)


@metric("mirb_correct")
def mirb_correct(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """100 when the prediction is right by the subset's rule (see the module docstring), else 0."""
    prediction, gold, subset = "" if parsed is None else str(parsed), str(target), doc.get("subset")
    if subset in YES_NO_SUBSETS:
        right = _yes_no(prediction, gold)
    elif subset in IN_MATCH_SUBSETS:
        right = _yes_no(prediction, gold) if gold.lower() in ("yes", "no") else gold.lower() in prediction.lower()
    else:
        right = prediction.lower() == gold.lower()
    return 100.0 if right else 0.0


def _emits(config: "TaskConfig") -> list[str]:
    return [METRIC, *CATEGORIES]


def category_means(by_subset: Mapping[str, Sequence[float]]) -> dict[str, float | None]:
    """Each category's mean of its subsets' accuracies (subsets without questions left out)."""
    return {c: mean_of_means({s: by_subset.get(s, []) for s in subsets}) for c, subsets in CATEGORIES.items()}


def average(by_subset: Mapping[str, Sequence[float]]) -> float | None:
    """The authors' Average: the mean of the category means."""
    return mean([v for v in category_means(by_subset).values() if v is not None])


@aggregator("mirb_mean", emits=_emits)
def mirb_mean(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """The generic means and breakdowns, with ``acc`` the authors' Average, the four category
    means, and the per-question mean as ``acc_micro``."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    by_subset = values_by_label(samples, METRIC, SUBSET_BREAKDOWN)
    result.metrics[f"{METRIC}_micro"] = result.metrics.get(METRIC)
    result.metrics[METRIC] = average(by_subset)
    result.metrics[f"{METRIC}_stderr"] = _stderr(by_subset, seed)
    for name, value in category_means(by_subset).items():
        result.metrics[name] = value
        result.metrics[f"{name}_stderr"] = None
        result.metrics[f"{name}_all"] = None
        result.higher_is_better[name] = True
    result.metrics[f"{METRIC}_all"] = None
    return result


def _stderr(by_subset: Mapping[str, Sequence[float]], seed: int, n_boot: int = 1000) -> float | None:
    """Bootstrap stderr of the Average, resampling the questions within each subset (ours)."""
    arrays = {s: np.asarray(v, dtype=float) for s, v in by_subset.items() if v}
    if sum(len(a) for a in arrays.values()) < 2:
        return None
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        resampled = {s: a[rng.integers(0, len(a), size=len(a))].tolist() for s, a in arrays.items()}
        boots.append(average(resampled))
    return float(np.std([b for b in boots if b is not None], ddof=1))
