"""Rules across tasks: a group aggregator sees every member task's samples together.

A task's aggregator sees that task alone. Some benchmarks score a question from the replies of
several tasks: MT-Bench's pairwise grading asks the judge twice, once with the model's answer
first and once second, and counts a win only when both orders agree (FastChat's
``fastchat/llm_judge/show_result.py``, ``display_result_pairwise``, commit 02d4581: "g1_winner ==
tie or g1_winner != g2_winner" is a tie). Such a rule is a group aggregator: the member tasks
name it for their group (``group_aggregators: {GROUP: NAME}`` in each member's YAML), a plugin
file registers it with :func:`group_aggregator`, and it is called once the run has scored every
member, as ``fn(group, members, seed) -> GroupScore``: ``members`` maps each member task's name
to its :class:`GroupMember` (what its aggregator got: its :class:`TaskScoring` and samples, and
the results its own aggregator made). The figures go to ``results.json``'s
``groups[group].metrics`` (and ``counts``); a run that lacks a member has none (a rule across
tasks needs all of them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mmtasks.registry import group_aggregators as _group_aggregators
from mmtasks.scoring.aggregation import TaskResult, TaskScoring

if TYPE_CHECKING:
    from mmtasks.core.sample import Sample


@dataclass(frozen=True)
class GroupMember:
    """One member task of a group, as its group aggregator sees it."""

    #: what the task's own aggregator got: its name and validated config
    task: TaskScoring
    #: the task's samples in document order (read back from the samples file as they come)
    samples: Sequence["Sample"]
    #: the results the task's own aggregator made (its metrics, coverage, problems)
    result: TaskResult


@dataclass
class GroupScore:
    """What a group aggregator reports: ``groups[group].metrics`` and ``counts`` of results.json."""

    #: metric name -> value (None: nothing to compute it from; never a made-up 0)
    metrics: dict[str, float | None] = field(default_factory=dict)
    #: counts beside the metrics (questions compared, orders that disagreed ...)
    counts: dict[str, int] = field(default_factory=dict)


#: ``(group, members, seed) -> GroupScore``
GroupAggregatorFn = Callable[[str, Mapping[str, GroupMember], int], GroupScore]


@dataclass(frozen=True)
class GroupAggregatorSpec:
    """A registered group aggregator."""

    name: str
    fn: GroupAggregatorFn


def group_aggregator(name: str) -> Callable[[GroupAggregatorFn], GroupAggregatorFn]:
    """Register ``fn(group, members, seed) -> GroupScore`` as the group aggregator ``name``."""

    def deco(fn: GroupAggregatorFn) -> GroupAggregatorFn:
        _group_aggregators.register(name, GroupAggregatorSpec(name=name, fn=fn))
        return fn

    return deco


def score_group(spec: GroupAggregatorSpec, group: str, members: Mapping[str, GroupMember], seed: int) -> GroupScore:
    """Run ``spec`` on the group's members; its metrics as floats (or None) and counts as ints."""
    score = spec.fn(group, members, seed)
    metrics = {k: None if v is None else float(v) for k, v in score.metrics.items()}
    return GroupScore(metrics=metrics, counts={k: int(v) for k, v in score.counts.items()})
