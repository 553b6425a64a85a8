"""MMDU scoring (a plugin file of the mmdu task: ``plugins: [mmdu.py]``): the judge's
seven dimensions, its verdict parser and the aggregator.

The judge (official prompt in ``tasks/mmdu/judge_prompt.txt``) ends its reply
with a Python dict literal of seven integer scores (1-10). ``mmdu_judge`` reads
it the way the authors' ``scores/prompt.py`` does - the text from the first
``{`` to the last ``}`` - but with :func:`ast.literal_eval` instead of ``eval``,
and it rejects a reply that lacks a dimension (the judge is re-asked).

The ``mmdu`` aggregator reproduces ``scores/statistic.py``: per dimension, the
sum over every validly judged turn of every dialogue, divided by the number of
those turns, times ``judge.report_factor`` (10 in mmdu.yaml: a micro average on
0-100). Beside it: the paper's macro average (per dialogue, then over
dialogues), an ``_all`` variant where failed turns count as 0, a
cluster-bootstrap stderr over dialogues, the number of judged turns (under
``n-samples``), and a per-turn-position breakdown. Failures are counted by
the generic problem counter from the samples.

Each turn record (``Sample.extra["turns"]``, written by the ``multi_turn``
protocol) has a ``status``: ``judged`` (``scores`` holds the seven values),
``judge_failure``, ``request_failure`` or ``unjudged`` (``--predict-only``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.scoring.aggregation import TaskResult, aggregator, coverage, turn_failure_kind, unscored_counts
from mmtasks.scoring.bootstrap import bootstrap_ratio_stderr
from mmtasks.scoring.verdicts import verdict_parser

if TYPE_CHECKING:
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

#: the judge's dictionary keys -> metric names in results.json, in the paper's column order
#: (the one list of MMDU's dimensions: the verdict parser, the aggregator and its ``emits`` use it)
DIMENSIONS: dict[str, str] = {
    "Creativity": "creativity",
    "Richness": "richness",
    "Visual Perception": "visual_perception",
    "Logical Coherence": "logical_coherence",
    "Answer Accuracy": "answer_accuracy",
    "Image Relationship Understanding": "image_relationship_understanding",
    "Overall Score": "overall",
}
METRICS: tuple[str, ...] = tuple(DIMENSIONS.values())
#: judge scores are 1-10; values outside are clipped to this range
SCORE_RANGE = (0, 10)


def parse_mmdu_judge(reply: str) -> dict[str, float] | None:
    """The seven scores of a judge reply, keyed by metric name; None when the reply has no
    readable dict literal or lacks a dimension (the caller re-asks, then records a failure)."""
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        data = ast.literal_eval(reply[start : end + 1])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    scores: dict[str, float] = {}
    for key, name in DIMENSIONS.items():
        value = _score(data.get(key))
        if value is None:
            return None
        scores[name] = value
    return scores


def random_verdict_space(context: Any) -> dict[str, Any]:
    """A valid verdict for the ``random`` judge: every dimension scored 1-10, as a Python dict."""
    return {"kind": "verdict", "format": "python", "fields": {key: [1, 10] for key in DIMENSIONS}}


@verdict_parser("mmdu_judge", space=random_verdict_space)
def mmdu_judge(text: str, context: Any) -> dict[str, float] | None:
    """The verdict parser ``mmdu_judge`` (the same for every turn)."""
    return parse_mmdu_judge(text)


def _score(value: Any) -> float | None:
    """A number clipped to 0-10 (integral values stay ints); anything else (a string, a
    boolean, NaN, None) is not a score."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    lo, hi = SCORE_RANGE
    clipped = min(max(value, lo), hi)
    return int(clipped) if float(clipped).is_integer() else float(clipped)


def _turns(sample: "Sample") -> list[dict[str, Any]]:
    return list(sample.extra.get("turns", []))


@aggregator("mmdu", emits=lambda config: METRICS)
def aggregate_mmdu(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    factor = task.config.judge.report_factor if task.config.judge is not None else 1.0
    result = TaskResult(n_samples=len(samples))
    # Per dialogue: score sums over validly judged turns, their count, and failed turns.
    sums: list[dict[str, float]] = []
    judged: list[int] = []
    failed: list[int] = []
    by_position: dict[int, list[dict[str, float]]] = {}  # turn index -> scores of its judged turns
    unscored = {**{k: v for k, v in unscored_counts().items() if k != "unparsed"}, "unjudged": 0}
    for s in samples:
        dialogue_sum = dict.fromkeys(METRICS, 0.0)
        n = bad = 0
        for k, turn in enumerate(_turns(s)):
            status = turn.get("status")
            if status == "judged":
                for m in METRICS:
                    dialogue_sum[m] += float(turn["scores"][m])
                n += 1
                by_position.setdefault(k, []).append(turn["scores"])
            elif status == "judge_failure":
                bad += 1
                unscored[status] += 1
            elif status == "request_failure":  # a prompt too long for the context is its own kind
                bad += 1
                unscored[turn_failure_kind(turn)] += 1
            else:
                unscored["unjudged"] += 1
        sums.append(dialogue_sum)
        judged.append(n)
        failed.append(bad)

    total = sum(judged)
    attempted = total + sum(failed)
    for m in METRICS:
        numerators = [d[m] for d in sums]
        micro = factor * sum(numerators) / total if total else None
        per_dialogue = [factor * d[m] / n for d, n in zip(sums, judged) if n]
        result.metrics[m] = micro
        result.metrics[f"{m}_stderr"] = factor * bootstrap_ratio_stderr(numerators, judged, seed=seed) if total else None
        result.metrics[f"{m}_micro"] = micro
        result.metrics[f"{m}_macro"] = sum(per_dialogue) / len(per_dialogue) if per_dialogue else None
        result.metrics[f"{m}_all"] = factor * sum(numerators) / attempted if attempted else None
        result.higher_is_better[m] = True
    result.counts = {"judged_turns": total}
    result.coverage = coverage("turns", attempted + unscored["unjudged"], {k: v for k, v in unscored.items() if k != "unjudged"},
                               unexplained=unscored["unjudged"])
    result.breakdowns = {"turn": {str(k + 1): _micro_row(v, factor) for k, v in sorted(by_position.items())}}
    return result


def _micro_row(scored: list[dict[str, float]], factor: float) -> dict[str, float | int]:
    """Every dimension's micro average over ``scored`` turns (x ``factor``), and their number."""
    row: dict[str, float | int] = {m: factor * sum(float(t[m]) for t in scored) / len(scored) for m in METRICS}
    row["n"] = len(scored)
    return row
