"""The scheduler: drives every live dialogue and routes its requests to the right model.

Two engines, one contract (same samples, same cache, same stats):

- **waves** (:mod:`mmtasks.scheduling.waves`), when every model is local (hf,
  vLLM, random, replay): the pending requests of all live dialogues go out
  together, one batch per model; turn k of every dialogue is in the same wave,
  so the number of waves grows with the number of turns, not with dialogues x
  turns, and local backends get full batches.
- **barrier-free** (:mod:`mmtasks.scheduling.barrier_free`), when a model
  serves requests one at a time concurrently (``ChatModel.supports_async``: API
  backends): a dialogue's next request (next turn, judge call) goes out the
  moment its reply arrives, so a slow reply holds back only its own dialogue.
  Local models in the same run (a local model judged by an API judge) still
  get batches: whatever is queued for them when they are idle.

Both serve the response cache first and cache each reply the moment it
arrives, send identical requests once, route by ``Request.target`` (model,
judge, note taker), turn a missing model into a failed reply, pull dialogues
lazily from their source and keep at most ``max_live`` of them in flight (so
memory stays flat however large the benchmark).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from mmtasks.cache.response_cache import ResponseCache
from mmtasks.core.request import Reply, Request, Target
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.models.base import ChatModel
from mmtasks.scheduling.stats import SchedulerStats

__all__ = ["Scheduler", "SchedulerStats"]


@dataclass
class Scheduler:
    models: dict[Target, ChatModel]
    cache: ResponseCache | None = None
    max_live: int = 1024
    #: called once per finished dialogue, just before it is yielded (progress bars, sample writers)
    on_finish: Callable[[Sample], None] | None = None
    #: called once per request answered, from the cache or by a model, failures included
    #: (progress: multi-turn and judged tasks count turns, probes and judge calls)
    on_reply: Callable[[Request, Reply], None] | None = None
    stats: SchedulerStats = field(default_factory=SchedulerStats)
    #: None: barrier-free when some model ``supports_async``, waves otherwise; True/False forces it
    #: (False: waves for every backend, through ``generate``)
    barrier_free: bool | None = None

    @property
    def uses_barrier_free(self) -> bool:
        if self.barrier_free is not None:
            return self.barrier_free
        return any(type(m).supports_async for m in self.models.values())

    def run(self, dialogues: Iterable[Dialogue]) -> Iterator[Sample]:
        """Drive ``dialogues`` to their end; yields each finished sample (in finishing order)."""
        if self.uses_barrier_free:
            from mmtasks.scheduling.barrier_free import run_barrier_free

            return run_barrier_free(self, dialogues)
        from mmtasks.scheduling.waves import run_waves

        return run_waves(self, dialogues)
