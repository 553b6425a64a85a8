"""How the ``hf`` backend feeds its model: batches prepared one ahead, and what the model did.

The model must never wait for the harness. While ``generate`` runs on batch k
(in the thread that called :meth:`~mmtasks.models.hf.HFModel.generate`), one
worker thread prepares batch k+1: its images decoded, the processor's resize and
patching, tokenisation, padding, the copy to the model's device
(:func:`prepared_ahead`). :class:`BatchStats` records what that bought: the
model's busy and idle time (idle: from the end of one ``generate`` to the start
of the next, over the model's life) and the share of padding in the batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

B = TypeVar("B")
P = TypeVar("P")


@dataclass
class BatchStats:
    """What the model did over its life (all ``generate`` calls of all waves)."""

    #: ``model.generate`` calls and the rows they generated for
    batches: int = 0
    rows: int = 0
    #: prompt tokens in those batches (image tokens included), and the slots they took once
    #: padded to each batch's longest prompt (rows x longest)
    prompt_tokens: int = 0
    padded_slots: int = 0
    #: seconds inside ``model.generate``
    generate_s: float = 0.0
    #: seconds from the end of one ``model.generate`` to the start of the next
    idle_s: float = 0.0
    #: of the idle time, seconds the model's thread waited for a batch still being prepared
    waited_for_prepare_s: float = 0.0
    #: seconds the worker spent preparing batches (images, processor, device copy)
    prepare_s: float = 0.0
    #: perf_counter() at the start of the first ``model.generate`` and the end of the last
    first_start: float | None = None
    last_end: float | None = None

    @property
    def padded_share(self) -> float:
        """Padding tokens over all the slots of the batches (0 when nothing was generated)."""
        return (self.padded_slots - self.prompt_tokens) / self.padded_slots if self.padded_slots else 0.0

    @property
    def idle_share(self) -> float:
        """Idle time over the span from the first ``generate``'s start to the last one's end."""
        if self.first_start is None or self.last_end is None or self.last_end <= self.first_start:
            return 0.0
        return self.idle_s / (self.last_end - self.first_start)

    def count_batch(self, lengths: list[int]) -> None:
        """A batch generated for: the unpadded prompt length of each row."""
        self.batches += 1
        self.rows += len(lengths)
        self.prompt_tokens += sum(lengths)
        self.padded_slots += len(lengths) * max(lengths, default=0)

    @contextmanager
    def generating(self) -> Iterator[None]:
        """Around one ``model.generate`` call: its busy time, and the idle gap before it."""
        start = time.perf_counter()
        if self.last_end is not None:
            self.idle_s += start - self.last_end
        if self.first_start is None:
            self.first_start = start
        try:
            yield
        finally:
            self.last_end = time.perf_counter()
            self.generate_s += self.last_end - start

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(padded_share=round(self.padded_share, 4), idle_share=round(self.idle_share, 4))
        return out


def prepared_ahead(batches: Iterator[B], prepare: Callable[[B], P], pool: ThreadPoolExecutor,
                   stats: BatchStats | None = None) -> Iterator[P]:
    """``prepare(batch)`` for each batch, in order, each one prepared in ``pool`` while the
    consumer works on the one before.

    The next batch is taken from ``batches`` (and its preparation submitted) *before* the
    current one is handed out, so preparing batch k+1 overlaps whatever the consumer does
    with batch k. ``batches`` is read lazily, one ahead: a generator may size each batch
    from state the consumer changes (the batch size halved after an out-of-memory error).
    Closing this generator early waits for the preparation in flight (the preparer may use
    objects that are not thread-safe, such as a tokenizer, which the caller uses next).
    """
    future: Future[P] | None = None
    current = next(batches, None)
    if current is not None:
        future = pool.submit(prepare, current)
    try:
        while future is not None:
            start = time.perf_counter()
            done = future.done()
            prepared = future.result()  # a preparer's own exception is the caller's
            if stats is not None and not done:
                stats.waited_for_prepare_s += time.perf_counter() - start
            upcoming = next(batches, None)
            future = pool.submit(prepare, upcoming) if upcoming is not None else None
            yield prepared
    finally:
        if future is not None and not future.cancel():
            wait([future])
