"""LLaVA-Bench (In-the-Wild) scoring: the judge's two-score verdict and the relative score.

Loaded as a plugin file by ``llava_bench_wild.yaml`` (``plugins:``); the names it
registers are visible to the tasks that list it.

The rules are those of the LLaVA repository (github.com/haotian-liu/LLaVA):

- ``llava/eval/eval_gpt_review_bench.py``: one GPT-4 call per question shows the
  judge the caption, the question, the reference answer as "Assistant 1" and
  the model's answer as "Assistant 2", then the category's rule from
  ``llava/eval/table/rule.json``; ``parse_score`` reads the first line of the
  reply, commas turned into spaces, as exactly two numbers: the scores of
  Assistant 1 and Assistant 2.
- ``llava/eval/summarize_gpt_review.py``: per category and over all questions,
  the mean of each score; the reported number is
  ``round(mean(Assistant 2) / mean(Assistant 1) * 100, 1)``, the model's score
  relative to the reference answer's.

Our choices, where LLaVA's code does something we do not: a reply whose first
line does not hold two numbers is re-asked and then counted as a judge
failure and left out (LLaVA records ``[-1, -1]`` and averages it in); the first
line is split on any run of whitespace (LLaVA splits on single spaces, so
"8, 9" - two spaces once the comma is replaced - fails there); a score must be
a finite number from 0 to 10 (LLaVA accepts any number). The model's answer is shown to the
judge with the prompt's delimiters (``[Assistant 1]``, ``[End of Assistant 2]``, ``[System]`` ...)
defused in it, and lines of the judge's reply that quote the answer are not read (a fake score
line in the answer is never the verdict).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.registry import adapters
from mmtasks.scoring.aggregation import TaskResult, aggregator
from mmtasks.scoring.bootstrap import bootstrap_ratio_stderr
from mmtasks.scoring.verdicts import verdict_parser

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

#: verdict field -> who it scores: "Assistant 1" is the reference answer, "Assistant 2" the model
REFERENCE_SCORE = "reference_score"
MODEL_SCORE = "model_score"
#: the breakdown (task YAML ``breakdowns``) that holds each question's category
CATEGORY_BREAKDOWN = "category"
#: LLaVA-Bench's categories, in the order its papers report them
CATEGORIES = ("conv", "detail", "complex")
#: the relative score over all questions, then one per category
OVERALL = "relative_score"
SCORE_RANGE = (0.0, 10.0)

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")


@adapters.register("llava_bench_wild")
def llava_bench_wild_record(record: dict[str, Any]) -> dict[str, Any]:
    """The Hub dataset holds ``image`` as one embedded image (a ``{bytes, path}`` mapping), the
    local copy as a path; the document reader takes a path or a list, so the mapping is wrapped."""
    image = record.get("image")
    return {**record, "image": [image]} if isinstance(image, dict) else record


@verdict_parser("llava_score_pair")
def llava_score_pair(text: str, context: Mapping[str, Any]) -> dict[str, float] | None:
    """The two scores on the first line of a judge reply: Assistant 1 (the reference
    answer), then Assistant 2 (the model); None when the line holds anything else. ``text`` is
    the judge's own text (quotes of the model's answer cut, see
    :func:`mmtasks.scoring.verdicts.judge_own_text`); blank lines a cut quote leaves before it
    are skipped."""
    first_line = text.strip().split("\n", 1)[0]
    tokens = first_line.replace(",", " ").split()
    if len(tokens) != 2 or not all(_NUMBER.fullmatch(t) for t in tokens):
        return None
    scores = [float(t) for t in tokens]
    low, high = SCORE_RANGE
    if not all(math.isfinite(s) and low <= s <= high for s in scores):
        return None
    return {REFERENCE_SCORE: scores[0], MODEL_SCORE: scores[1]}


def _emits(config: "TaskConfig") -> list[str]:
    return [OVERALL, *(f"{OVERALL}_{c}" for c in CATEGORIES),
            f"{MODEL_SCORE}_mean", f"{REFERENCE_SCORE}_mean"]


def relative(model: list[float], reference: list[float]) -> float | None:
    """LLaVA's number: both means rounded to 3 decimals, then
    ``round(mean(model) / mean(reference) * 100, 1)``; None without a judged question
    (or when the reference's mean is 0)."""
    if not model:
        return None
    mean_model = round(sum(model) / len(model), 3)
    mean_reference = round(sum(reference) / len(reference), 3)
    if mean_reference == 0:
        return None
    return round(mean_model / mean_reference * 100, 1)


@aggregator("llava_relative", emits=_emits)
def llava_relative(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """The relative score overall and per category (see the module docstring), with a
    bootstrap stderr over questions; questions without a verdict (a failed request, a judge
    failure: counted as problems from the samples) are left out."""
    model: dict[str, list[float]] = {"all": []}
    reference: dict[str, list[float]] = {"all": []}
    counts: dict[str, int] = {}
    n = 0
    for s in samples:
        n += 1
        category = s.breakdown.get(CATEGORY_BREAKDOWN, "")
        counts[category] = counts.get(category, 0) + 1
        m, r = s.metrics.get(MODEL_SCORE), s.metrics.get(REFERENCE_SCORE)
        if m is None or r is None:
            continue
        for key in ("all", category):
            model.setdefault(key, []).append(float(m))
            reference.setdefault(key, []).append(float(r))

    result = TaskResult(n_samples=n)

    def put(name: str, key: str) -> None:
        mm, rr = model.get(key, []), reference.get(key, [])
        result.metrics[name] = relative(mm, rr)
        result.metrics[f"{name}_stderr"] = 100.0 * bootstrap_ratio_stderr(mm, rr, seed=seed) if mm and sum(rr) > 0 else None
        result.higher_is_better[name] = True

    put(OVERALL, "all")
    for category in CATEGORIES:
        put(f"{OVERALL}_{category}", category)
    for field, values in ((MODEL_SCORE, model["all"]), (REFERENCE_SCORE, reference["all"])):
        result.metrics[f"{field}_mean"] = round(sum(values) / len(values), 3) if values else None
        result.higher_is_better[f"{field}_mean"] = True
    result.counts = {"judged": len(model["all"])}
    result.breakdowns = {CATEGORY_BREAKDOWN: {
        category: {OVERALL: relative(model.get(category, []), reference.get(category, [])),
                   f"{MODEL_SCORE}_mean": _mean(model.get(category, [])),
                   f"{REFERENCE_SCORE}_mean": _mean(reference.get(category, [])),
                   "judged": len(model.get(category, [])), "n": counts[category]}
        for category in sorted(counts, key=lambda c: (CATEGORIES.index(c) if c in CATEGORIES else len(CATEGORIES), c))
    }}
    return result


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None
