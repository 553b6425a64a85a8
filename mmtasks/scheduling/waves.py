"""The wave engine: every live dialogue's pending requests go out together, one batch per model."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmtasks.cache.response_cache import request_key
from mmtasks.core.request import Reply, Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.models.base import ChatModel

if TYPE_CHECKING:
    from mmtasks.scheduling.scheduler import Scheduler


@dataclass
class _Live:
    dialogue: Dialogue
    pending: list[Request]


def run_waves(sched: "Scheduler", dialogues: Iterable[Dialogue]) -> Iterator[Sample]:
    source = iter(dialogues)
    live: list[_Live] = []
    exhausted = False
    while True:
        while not exhausted and len(live) < sched.max_live:
            dialogue = next(source, None)
            if dialogue is None:
                exhausted = True
                break
            try:
                live.append(_Live(dialogue, next(dialogue)))
            except StopIteration as stop:
                yield _finished(sched, stop.value)
        if not live:
            return
        replies = _serve(sched, [req for item in live for req in item.pending])
        sched.stats.waves += 1
        still: list[_Live] = []
        pos = 0
        for item in live:
            n = len(item.pending)
            chunk, pos = replies[pos : pos + n], pos + n
            try:
                item.pending = item.dialogue.send(chunk)
                still.append(item)
            except StopIteration as stop:
                yield _finished(sched, stop.value)
        live = still


def _finished(sched: "Scheduler", sample: Sample) -> Sample:
    if sched.on_finish is not None:
        sched.on_finish(sample)
    return sample


def _serve(sched: "Scheduler", requests: list[Request]) -> list[Reply]:
    out: list[Reply | None] = [None] * len(requests)
    # Requests are grouped by model object, not by target: when the note taker
    # (or the judge) is the model under test, its requests share the batch.
    by_model: dict[int, tuple[ChatModel, list[int]]] = {}
    for i, req in enumerate(requests):
        model = sched.models.get(req.target)
        if model is None:
            missing = out[i] = Reply.failure(f"no {req.target} model configured for this run")
            _replied(sched, req, missing)
            continue
        by_model.setdefault(id(model), (model, []))[1].append(i)
    for model, indices in by_model.values():
        _serve_model(sched, model, requests, indices, out)
    return [r if r is not None else Reply.failure("no reply") for r in out]


def _replied(sched: "Scheduler", request: Request, reply: Reply) -> None:
    if sched.on_reply is not None:
        sched.on_reply(request, reply)


def _serve_model(sched: "Scheduler", model: ChatModel, requests: list[Request], indices: list[int], out: list[Reply | None]) -> None:
    cache, stats = sched.cache, sched.stats
    use_cache = cache is not None and model.cacheable
    keys: dict[int, str] = {}
    if use_cache:
        assert cache is not None
        identity = model.identity
        keys = {i: request_key(identity, requests[i]) for i in indices}
        hits = cache.get_many(keys.values())
        for i in indices:
            if keys[i] in hits:
                cached = out[i] = model.finish_reply(requests[i], Reply.from_cache(hits[keys[i]]))
                stats.add(stats.cached, requests[i].target)
                _replied(sched, requests[i], cached)
    # Identical requests in one wave are sent once.
    todo: dict[str, list[int]] = {}
    for i in indices:
        if out[i] is None:
            todo.setdefault(keys.get(i) or f"#{i}", []).append(i)
    if not todo:
        return
    groups = list(todo.values())
    batch = [requests[g[0]] for g in groups]
    for req in batch:
        stats.add(stats.sent, req.target)
    # a model paid per wave (a batch API: ``paid_per_wave``) was paid for all of it when its replies
    # come: a watcher stopping the run (--max-cost) stops it once every reply of the wave is cached
    whole_wave = getattr(type(model), "paid_per_wave", False)
    stopped: Exception | None = None
    for j, received in model.generate(batch):
        # cached as received (reasoning field and finish reason included), split when delivered
        if received.ok and use_cache:
            assert cache is not None
            cache.put(keys[groups[j][0]], model.identity, received.to_cache())
        reply = model.finish_reply(batch[j], received)
        for i in groups[j]:
            out[i] = reply
            try:
                _replied(sched, requests[i], reply)
            except Exception as exc:
                if not whole_wave:
                    raise
                stopped = stopped or exc
        if not reply.ok:
            stats.add(stats.failed, batch[j].target)
    if stopped is not None:
        raise stopped
