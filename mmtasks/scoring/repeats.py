"""Repeats (``--repeats K``): every document of a task that samples, run K times with distinct
seeds, and what the K runs say together.

Repeat r (0-based) sends the same requests as a plain run with the generation seed ``seed + r``
(repeat 0 is the plain run, so its replies come from the same cache entries); the seed is part of
the cache key, so a resume serves every repeat's answered requests from the cache. A task that
decodes greedily runs once: its K runs would be one answer K times.

The results give, for the task's headline metric (Inspect's epochs and reducers are the model):

- ``per_repeat``: the headline of each repeat on its own, and ``sd``, their standard deviation
  (ddof 1): how far a second run would move;
- ``reducers``: per document across its repeats, then over documents: ``mean`` (the headline),
  ``majority`` (right when more than half of its repeats are, for a right/wrong metric) and
  ``any_correct`` (right when any repeat is: pass@k).

The headline's standard error resamples documents with all their repeats (a document's repeats
are one cluster), so K repeats never pose as K times the documents.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.core.request import Request
from mmtasks.core.sample import Dialogue, Sample

if TYPE_CHECKING:
    from mmtasks.scoring.aggregation import TaskResult, TaskScoring


def repeats_for(task: "TaskScoring", repeats: int) -> int:
    """How many times ``task``'s documents run: ``repeats`` (or the generation's ``n``, the replies
    drawn per call), or 1 for a task that decodes greedily."""
    generation = task.config.generation
    if generation.sampling_mode() == "greedy":
        return 1
    return generation.n if generation.n is not None and generation.n > 1 else repeats


def draws_together(task: "TaskScoring") -> bool:
    """Whether ``task``'s repeats are drawn ``n`` at a time: a generation ``n`` over 1 on a task
    that samples (a greedy task's ``n`` would be one reply ``n`` times: it is dropped)."""
    generation = task.config.generation
    return generation.n is not None and generation.n > 1 and generation.sampling_mode() != "greedy"


def _without_n(request: Request, repeat: int, seed: int) -> Request:
    if request.generation.n is not None:
        request = dataclasses.replace(request, generation=request.generation.model_copy(update={"n": None}))
    return _reseeded(request, repeat, seed)


def _reseeded(request: Request, repeat: int, seed: int) -> Request:
    if repeat == 0:
        return request
    base = request.generation.seed if request.generation.seed is not None else seed
    return dataclasses.replace(request, generation=request.generation.model_copy(update={"seed": base + repeat}))


def repeated(dialogue: Dialogue, repeat: int, seed: int) -> Dialogue:
    """``dialogue`` with every request it yields sent with the seed of ``repeat``; its sample
    records the repeat."""
    try:
        requests = next(dialogue)
        while True:
            replies = yield [_reseeded(r, repeat, seed) for r in requests]
            requests = dialogue.send(replies)
    except StopIteration as stop:
        sample: Sample = stop.value
    sample.repeat = repeat
    return sample


def _right_wrong(values: Iterable[float]) -> bool:
    seen = set(values)
    return bool(seen) and (seen <= {0.0, 1.0} or seen <= {0.0, 100.0})


def summarize(task: "TaskScoring", samples: Sequence[Sample], k: int,
              aggregate_one: Callable[[Sequence[Sample]], "TaskResult"]) -> dict[str, Any] | None:
    """results.json's ``repeats[task]``: the headline per repeat, their spread, and the reducers
    (None for a task run once)."""
    metric = task.config.primary_metric
    if k < 2 or metric is None:
        return None
    per_repeat: list[float | None] = []
    for r in range(k):
        value = aggregate_one([s for s in samples if s.repeat == r]).metrics.get(metric)
        per_repeat.append(float(value) if isinstance(value, (int, float)) else None)
    by_doc: dict[str, list[float]] = {}
    for s in samples:
        value = s.metrics.get(metric)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            by_doc.setdefault(s.doc_id, []).append(float(value))
    values = [v for vs in by_doc.values() for v in vs]
    top = 100.0 if values and max(values) > 1.0 else 1.0
    reducers: dict[str, float | None] = {
        "mean": statistics.fmean(statistics.fmean(vs) for vs in by_doc.values()) if by_doc else None}
    if _right_wrong(values):
        reducers["majority"] = statistics.fmean(top if sum(v > 0 for v in vs) * 2 > len(vs) else 0.0
                                                for vs in by_doc.values())
        reducers["any_correct"] = statistics.fmean(top if any(v > 0 for v in vs) else 0.0 for vs in by_doc.values())
    known = [v for v in per_repeat if v is not None]
    return {"k": k, "metric": metric, "per_repeat": per_repeat,
            "mean": statistics.fmean(known) if known else None,
            "sd": statistics.stdev(known) if len(known) >= 2 else None, "reducers": reducers}


def drawn(dialogue: Dialogue, repeat: int, seed: int, together: bool) -> Dialogue:
    """``dialogue`` of a task whose generation sets ``n``: with ``together``, its first requests
    that ask for ``n`` replies are answered by reply ``repeat`` of one call drawing them all
    (:attr:`Request.choice`; the same prompt and seed for every repeat, so the backend sends it
    once); every later request (a multi-turn dialogue's next turns, which differ per repeat) and,
    without ``together``, every request is the repeat's own, without ``n`` and with the repeat's
    seed, as :func:`repeated` sends it. Its sample records the repeat."""
    try:
        requests = next(dialogue)
        first = [dataclasses.replace(r, choice=repeat) if together and r.generation.n is not None and r.generation.n > 1
                 else _without_n(r, repeat, seed) for r in requests]
        replies = yield first
        while True:
            requests = dialogue.send(replies)
            replies = yield [_without_n(r, repeat, seed) for r in requests]
    except StopIteration as stop:
        sample: Sample = stop.value
    sample.repeat = repeat
    return sample
