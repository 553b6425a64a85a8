"""What results.json says about the LLM answer matcher of a task (``matcher[task]``): how each
answer was read, and the task's metrics as the rule alone gives them, beside the task's own
results (with the matcher).

The metrics without the matcher come from the same aggregator run on the same samples, each
sample the matcher read taking the scores its rule's reading had (``extra["without_matcher"]``,
kept by :mod:`mmtasks.dialogues.single_turn`), so they are what a run without ``--matcher``
gives on the same replies.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, overload

from mmtasks.core.sample import Sample
from mmtasks.scoring.parsers import READ_BY


class WithoutMatcher(Sequence[Sample]):
    """``samples`` with the matcher's readings undone: a sample whose answer the matcher was
    asked about has the metrics of its rule's reading (unparsed: 0; a guess: the guess's)."""

    def __init__(self, samples: Sequence[Sample]) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...

    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        if isinstance(index, slice):
            return [undo(s) for s in self.samples[index]]
        return undo(self.samples[index])

    def __iter__(self) -> Iterator[Sample]:
        for sample in self.samples:
            yield undo(sample)


def undo(sample: Sample) -> Sample:
    """The sample as the rule alone read it (itself when the matcher was not asked)."""
    rule = sample.extra.get("without_matcher")
    if not isinstance(rule, dict) or not isinstance(rule.get("metrics"), dict):
        return sample
    before = rule.get("read_by")
    return replace(sample, metrics=dict(rule["metrics"]), read_by=before,
                   unparsed=int(before is None), guessed=int(before == "random"))


def matcher_summary(samples: Sequence[Sample], without: dict[str, Any]) -> dict[str, Any]:
    """``matcher[task]`` of results.json: ``read_by`` (answers read by each way, and ``none``),
    ``asked`` (replies shown to the matcher), ``failed`` (matcher requests that failed) and
    ``without_matcher`` (the task's metrics from the rule's readings alone)."""
    counts = dict.fromkeys((*READ_BY, "none"), 0)
    asked = failed = 0
    for sample in samples:
        if sample.failures:
            continue
        counts[sample.read_by if sample.read_by in counts else "none"] += 1
        call = sample.extra.get("matcher")
        if isinstance(call, dict):
            asked += 1
            failed += int(call.get("error") is not None)
    return {"read_by": counts, "asked": asked, "failed": failed, "without_matcher": without}
