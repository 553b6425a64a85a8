"""The scheduler: steps every live dialogue together.

Each wave gathers the pending requests of all live dialogues, serves what the
cache already holds, sends the rest to the right model (the model under test,
the judge or the note taker) as one batch, caches each reply the moment it
arrives, and feeds the replies back. Turn k of every dialogue goes out in the
same wave, so the number of waves grows with the number of turns, not with
dialogues x turns. Dialogues are pulled lazily from their source and at most
``max_live`` are in flight, so memory stays flat however large the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from mmtasks.cache.response_cache import ResponseCache, request_key
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.models.base import ChatModel
from mmtasks.core.request import Reply, Request, Target


@dataclass
class SchedulerStats:
    waves: int = 0
    sent: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)

    def add(self, bucket: dict[str, int], target: str, n: int = 1) -> None:
        bucket[target] = bucket.get(target, 0) + n


@dataclass
class _Live:
    dialogue: Dialogue
    pending: list[Request]


@dataclass
class Scheduler:
    models: dict[Target, ChatModel]
    cache: ResponseCache | None = None
    max_live: int = 1024
    #: called once per finished dialogue (progress bars)
    on_finish: Callable[[Sample], None] | None = None
    #: called once per request answered, from the cache or by a model, failures included
    #: (progress: multi-turn and judged tasks count turns, probes and judge calls)
    on_reply: Callable[[Request, Reply], None] | None = None
    stats: SchedulerStats = field(default_factory=SchedulerStats)

    def run(self, dialogues: Iterable[Dialogue]) -> Iterator[Sample]:
        source = iter(dialogues)
        live: list[_Live] = []
        exhausted = False
        while True:
            while not exhausted and len(live) < self.max_live:
                dialogue = next(source, None)
                if dialogue is None:
                    exhausted = True
                    break
                try:
                    live.append(_Live(dialogue, next(dialogue)))
                except StopIteration as stop:
                    yield self._finished(stop.value)
            if not live:
                return
            replies = self._serve([req for item in live for req in item.pending])
            self.stats.waves += 1
            still: list[_Live] = []
            pos = 0
            for item in live:
                n = len(item.pending)
                chunk, pos = replies[pos : pos + n], pos + n
                try:
                    item.pending = item.dialogue.send(chunk)
                    still.append(item)
                except StopIteration as stop:
                    yield self._finished(stop.value)
            live = still

    def _finished(self, sample: Sample) -> Sample:
        if self.on_finish is not None:
            self.on_finish(sample)
        return sample

    def _serve(self, requests: list[Request]) -> list[Reply]:
        out: list[Reply | None] = [None] * len(requests)
        # Requests are grouped by model object, not by target: when the note taker
        # (or the judge) is the model under test, its requests share the batch.
        by_model: dict[int, tuple[ChatModel, list[int]]] = {}
        for i, req in enumerate(requests):
            model = self.models.get(req.target)
            if model is None:
                out[i] = Reply.failure(f"no {req.target} model configured for this run")
                continue
            by_model.setdefault(id(model), (model, []))[1].append(i)
        for model, indices in by_model.values():
            self._serve_model(model, requests, indices, out)
        return [r if r is not None else Reply.failure("no reply") for r in out]

    def _serve_model(self, model: ChatModel, requests: list[Request], indices: list[int], out: list[Reply | None]) -> None:
        use_cache = self.cache is not None and model.cacheable
        keys: dict[int, str] = {}
        if use_cache:
            assert self.cache is not None
            keys = {i: request_key(model.identity, requests[i]) for i in indices}
            hits = self.cache.get_many(keys.values())
            for i in indices:
                if keys[i] in hits:
                    out[i] = Reply(text=hits[keys[i]], cached=True)
                    self.stats.add(self.stats.cached, requests[i].target)
                    if self.on_reply is not None:
                        self.on_reply(requests[i], out[i])
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
            self.stats.add(self.stats.sent, req.target)
        for j, reply in model.generate(batch):
            for i in groups[j]:
                out[i] = reply
                if self.on_reply is not None:
                    self.on_reply(requests[i], reply)
            if not reply.ok:
                self.stats.add(self.stats.failed, batch[j].target)
            elif use_cache and reply.text is not None:
                assert self.cache is not None
                self.cache.put(keys[groups[j][0]], model.identity, reply.text)
