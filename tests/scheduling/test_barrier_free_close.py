"""Closing the barrier-free engine's loop after Ctrl-C landed inside one of its callbacks."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from mmtasks.scheduling.barrier_free import _close


def test_close_after_an_interrupt_inside_a_loop_callback() -> None:
    # The engine's wake-up future had just completed, so run_until_complete's stop callback was
    # already queued among the loop's ready callbacks, when Ctrl-C was raised in a callback queued
    # before it. The stop stayed queued, and the clean-up's first turn of the loop ran it: the loop
    # stopped before the cancelled requests had unwound, "Event loop stopped before Future
    # completed", a traceback and exit 1 where the user gets the resume hint and 130 (seen once in
    # tests/cache/test_resume.py[ctrl-c] from a clean clone).
    loop = asyncio.new_event_loop()
    waiting: asyncio.Future[None] = loop.create_future()

    async def slow_to_stop() -> None:  # a request that takes a few loop turns to unwind
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            for _ in range(5):
                await asyncio.sleep(0)
            raise

    def interrupt() -> None:
        raise KeyboardInterrupt

    def wake_then_interrupt() -> None:
        loop.call_soon(interrupt)  # queued before the stop callback that the result queues
        waiting.set_result(None)

    others = [loop.create_task(slow_to_stop()) for _ in range(3)]
    loop.call_soon(wake_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        loop.run_until_complete(waiting)
    _close(loop, SimpleNamespace(queues=[], routes={}))  # type: ignore[arg-type]
    assert loop.is_closed() and all(t.cancelled() for t in others)
