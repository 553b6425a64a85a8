"""The barrier-free engine: each dialogue moves on the moment its own replies are in.

One asyncio event loop, created per run and driven from :func:`run_barrier_free`
(a plain generator, so callers iterate samples as with the wave engine; the
loop runs only inside ``next()``, in a worker thread when the caller's thread
already runs an event loop of its own). Every dialogue is a *flow*: its current
round of requests is served from the cache, joined to an identical request
already in flight, or sent; when the round's last reply arrives the dialogue
is sent the replies and its next round goes out at once.

- Models with ``supports_async`` (API backends) get one ``agenerate`` call per
  request, all started at once; the backend bounds its own concurrency.
- Other models (hf, vLLM, random, replay) keep batches: a :class:`_LocalQueue`
  per model object hands everything queued for it to ``generate`` in a worker
  thread whenever the model is idle, and each reply is passed back to the loop
  as ``generate`` yields it.

Replies are cached the moment they arrive (before their dialogue moves on), so
a run stopped at any point (Ctrl-C, SIGTERM, kill -9) and started again sends
only the requests whose replies had not arrived. On Ctrl-C / SIGTERM (an
exception out of the loop) every request in flight is cancelled and the loop
closed before the exception goes on.

Admission: dialogues are pulled from their source one at a time, yielding to
the loop between them, so the first requests leave while later documents are
still being read; at most ``max_live`` dialogues are live or finished and not
yet handed to the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import logging
import queue
import signal
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mmtasks.cache.response_cache import request_key
from mmtasks.core.request import Reply, Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.models.base import ChatModel

if TYPE_CHECKING:
    from mmtasks.scheduling.scheduler import Scheduler

log = logging.getLogger(__name__)
T = TypeVar("T")

#: dialogues admitted between two yields to the event loop
_ADMIT_STEP = 4


@dataclass(eq=False)
class _Flow:
    dialogue: Dialogue
    #: the wave this round would have been in under the wave engine (for ``stats.waves``)
    depth: int
    requests: Sequence[Request] = ()
    replies: list[Reply | None] = field(default_factory=list)
    waiting: int = 0


@dataclass(frozen=True)
class _Route:
    model: ChatModel
    #: the model's identity when its replies are cached, else None
    identity: str | None
    queue: "_LocalQueue | None"


class _Engine:
    def __init__(self, sched: "Scheduler", loop: asyncio.AbstractEventLoop) -> None:
        self.sched = sched
        self.loop = loop
        self.stats = sched.stats
        self.cache = sched.cache
        self.routes: dict[str, _Route] = {}
        queues: dict[int, _LocalQueue] = {}
        for target, model in sched.models.items():
            queue = None
            if not type(model).supports_async:
                queue = queues.setdefault(id(model), _LocalQueue(model, self))
            identity = model.identity if self.cache is not None and model.cacheable else None
            self.routes[target] = _Route(model, identity, queue)
        self.queues = list(queues.values())
        #: cache key -> the reply of the identical request in flight
        self.inflight: dict[str, asyncio.Future[Reply]] = {}
        self.finished: deque[Sample] = deque()
        self.live = 0
        #: depths of the rounds on which finished dialogues ended (a new dialogue starts after one)
        self.freed: list[int] = []
        self.wake = asyncio.Event()  # a sample is ready, or the run ended
        self.room = asyncio.Event()  # a live slot was freed
        self.error: BaseException | None = None
        self.tasks: set[asyncio.Task] = set()
        #: while admission is filling the live window, local models wait for the whole burst
        self.admitting = False

    # -- admission ------------------------------------------------------------
    async def admit(self, source: Iterator[Dialogue]) -> None:
        n = 0
        self.admitting = True
        for dialogue in source:
            while self.live + len(self.finished) >= self.sched.max_live:
                self.pause_admission()
                self.room.clear()
                await self.room.wait()
                self.admitting = True
            # the first max_live dialogues start in wave 1; a later one in the wave after the
            # round on which the dialogue whose slot it takes ended (as the wave engine counts)
            depth = heapq.heappop(self.freed) + 1 if n >= self.sched.max_live and self.freed else 1
            try:
                requests = next(dialogue)
            except StopIteration as stop:
                self.finish(stop.value)
                continue
            self.live += 1
            self.submit(_Flow(dialogue, depth), requests)
            n += 1
            if n % _ADMIT_STEP == 0:
                await asyncio.sleep(0)
        self.pause_admission()
        while self.live:
            self.room.clear()
            await self.room.wait()

    def pause_admission(self) -> None:
        self.admitting = False
        for lane in self.queues:
            lane.kick()

    def finish(self, sample: Sample) -> None:
        self.finished.append(sample)
        self.wake.set()

    # -- one round of a dialogue ----------------------------------------------------
    def submit(self, flow: _Flow, requests: Sequence[Request]) -> None:
        self.stats.waves = max(self.stats.waves, flow.depth)
        flow.requests, flow.replies, flow.waiting = requests, [None] * len(requests), len(requests)
        if not requests:
            self.loop.call_soon(self.advance, flow)
            return
        keys: list[str | None] = [None] * len(requests)
        routes: list[_Route | None] = [self.routes.get(req.target) for req in requests]
        for i, (req, route) in enumerate(zip(requests, routes)):
            if route is not None and route.identity is not None:
                keys[i] = request_key(route.identity, req)
        wanted = [k for k in keys if k is not None and k not in self.inflight]
        hits = self.cache.get_many(wanted) if wanted and self.cache is not None else {}
        for i, (req, route, key) in enumerate(zip(requests, routes, keys)):
            if route is None:
                self.deliver(flow, i, Reply.failure(f"no {req.target} model configured for this run"))
            elif key is not None and key in hits:
                self.stats.add(self.stats.cached, req.target)
                self.deliver(flow, i, route.model.finish_reply(req, Reply.from_cache(hits[key])))
            else:
                future = self.inflight.get(key) if key is not None else None
                if future is None:
                    future = self.send(route, req, key)
                future.add_done_callback(functools.partial(self.deliver_future, flow, i, route=route))

    def send(self, route: _Route, request: Request, key: str | None) -> "asyncio.Future[Reply]":
        self.stats.add(self.stats.sent, request.target)
        if route.queue is not None:
            future: asyncio.Future[Reply] = route.queue.submit(request)
        else:
            future = self.spawn(route.model.agenerate(request))
        if key is not None:
            self.inflight[key] = future
        future.add_done_callback(lambda f: self.arrived(route, request, key, f))
        return future

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = self.loop.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def arrived(self, route: _Route, request: Request, key: str | None, future: "asyncio.Future[Reply]") -> None:
        """The first callback of a sent request: cache the reply before anyone uses it."""
        try:
            self._arrived(route, request, key, future)
        except BaseException as exc:
            self.fail(exc)

    def _arrived(self, route: _Route, request: Request, key: str | None, future: "asyncio.Future[Reply]") -> None:
        if key is not None:
            self.inflight.pop(key, None)
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self.fail(error)
            return
        received = future.result()
        # cached as received (reasoning field and finish reason included), split when delivered
        if received.ok and key is not None and self.cache is not None and route.identity is not None:
            self.cache.put(key, route.identity, received.to_cache())
        if not route.model.finish_reply(request, received).ok:
            self.stats.add(self.stats.failed, request.target)

    def deliver_future(self, flow: _Flow, i: int, future: "asyncio.Future[Reply]", route: "_Route") -> None:
        if future.cancelled() or future.exception() is not None or self.error is not None:
            return  # the run is failing (arrived() recorded why) or being cancelled
        try:
            self.deliver(flow, i, route.model.finish_reply(flow.requests[i], future.result()))
        except BaseException as exc:  # callbacks' exceptions would be swallowed by the loop
            self.fail(exc)

    def deliver(self, flow: _Flow, i: int, reply: Reply) -> None:
        if self.sched.on_reply is not None:
            self.sched.on_reply(flow.requests[i], reply)
        flow.replies[i] = reply
        flow.waiting -= 1
        if flow.waiting == 0:
            self.advance(flow)

    def advance(self, flow: _Flow) -> None:
        if self.error is not None:
            return
        replies = [r if r is not None else Reply.failure("no reply") for r in flow.replies]
        try:
            requests = flow.dialogue.send(replies)
        except StopIteration as stop:
            self.live -= 1
            heapq.heappush(self.freed, flow.depth)
            self.finish(stop.value)
            return
        except BaseException as exc:  # a protocol's own error ends the run, as with waves
            self.fail(exc)
            return
        flow.depth += 1
        try:
            self.submit(flow, requests)
        except BaseException as exc:  # e.g. an unreadable image while making the cache key
            self.fail(exc)

    def fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self.wake.set()


class _LocalQueue:
    """Batches for one local model: everything queued goes to ``generate`` when the model is idle."""

    def __init__(self, model: ChatModel, engine: _Engine) -> None:
        self.model = model
        self.engine = engine
        self.pending: list[tuple[Request, asyncio.Future[Reply]]] = []
        self.busy = False
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mmtasks-local-model")

    def submit(self, request: Request) -> "asyncio.Future[Reply]":
        future: asyncio.Future[Reply] = self.engine.loop.create_future()
        self.pending.append((request, future))
        if not self.busy and len(self.pending) == 1:
            # call_soon: the rest of this burst (the other dialogues' requests) joins the batch
            self.engine.loop.call_soon(self.kick)
        return future

    def kick(self) -> None:
        if self.busy or not self.pending or self.engine.error is not None or self.engine.admitting:
            return
        self.busy = True
        batch, self.pending = self.pending, []
        self.engine.spawn(self.run(batch))

    async def run(self, batch: list[tuple[Request, "asyncio.Future[Reply]"]]) -> None:
        loop = self.engine.loop
        futures = [f for _, f in batch]
        try:
            await loop.run_in_executor(self.pool, self.generate, [r for r, _ in batch], futures)
        except BaseException as exc:
            for f in futures:
                if not f.done():
                    f.cancel()
            if not isinstance(exc, asyncio.CancelledError):
                self.engine.fail(exc)
            raise
        finally:
            self.busy = False
        # replies posted by the worker thread were scheduled before this point; any missing one fails
        for f in futures:
            if not f.done():
                f.set_result(Reply.failure("backend returned no reply"))
        self.kick()

    def generate(self, requests: list[Request], futures: "list[asyncio.Future[Reply]]") -> None:
        """In the worker thread: hand each reply to the loop as the backend yields it."""
        loop = self.engine.loop
        replies = self.model.generate(requests)
        try:
            for j, reply in replies:
                loop.call_soon_threadsafe(_resolve, futures[j], reply)
                if self.stop.is_set():
                    return
        finally:
            close = getattr(replies, "close", None)
            if close is not None:
                close()

    def shutdown(self) -> None:
        self.stop.set()
        self.pool.shutdown(wait=False, cancel_futures=True)


def _resolve(future: "asyncio.Future[Reply]", reply: Reply) -> None:
    if not future.done():
        future.set_result(reply)


def run_barrier_free(sched: "Scheduler", dialogues: Iterable[Dialogue]) -> Iterator[Sample]:
    """Drive ``dialogues`` on an event loop of the run's own; yields each finished sample.

    When the calling thread already runs an event loop (a Jupyter cell, an async web app,
    playwright's sync API), a second loop cannot run in it: the run's loop then runs in a
    worker thread, one step per ``next()`` (the caller waits while it runs, so the two threads
    never run mmtasks code at once). ``on_finish`` is called in the caller's thread either way.
    """
    drive = _Drive(sched, dialogues)
    samples = drive.samples()
    if _running_loop() is not None:
        samples = _stepped_in_thread(samples, drive.interrupt)
    try:
        for sample in samples:
            if sched.on_finish is not None:
                sched.on_finish(sample)
            yield sample
    finally:
        samples.close()


class _Drive:
    """One run's loop and engine, made when :meth:`samples` starts (in the thread that runs it)."""

    def __init__(self, sched: "Scheduler", dialogues: Iterable[Dialogue]) -> None:
        self.sched = sched
        self.dialogues = dialogues
        self.lock = threading.Lock()
        self.engine: _Engine | None = None
        #: an interruption (Ctrl-C, SIGTERM) that came before the engine was made
        self.stopped: BaseException | None = None

    def samples(self) -> Generator[Sample, None, None]:
        loop = asyncio.new_event_loop()
        engine = _Engine(self.sched, loop)
        with self.lock:
            self.engine = engine
            if self.stopped is not None:
                engine.fail(self.stopped)

        def on_loop_error(loop: asyncio.AbstractEventLoop, context: dict) -> None:
            # The loop logs and swallows what a callback raises; SIGTERM's exception (a
            # BaseException raised wherever the main thread is) must stop the run instead.
            exc = context.get("exception")
            if isinstance(exc, BaseException) and not isinstance(exc, Exception):
                engine.fail(exc)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(on_loop_error)
        admission = engine.spawn(engine.admit(iter(self.dialogues)))

        def admitted(t: asyncio.Task[Any]) -> None:
            error = None if t.cancelled() else t.exception()
            if error is None:
                engine.wake.set()
            else:
                engine.fail(error)

        admission.add_done_callback(admitted)

        async def next_event() -> None:
            await engine.wake.wait()
            engine.wake.clear()

        try:
            while True:
                if not engine.finished and engine.error is None and not admission.done():
                    loop.run_until_complete(next_event())
                if engine.error is not None:
                    raise engine.error
                while engine.finished:
                    sample = engine.finished.popleft()
                    engine.room.set()
                    yield sample
                if admission.done() and not engine.finished:
                    admission.result()
                    return
        finally:
            _close(loop, engine)

    def interrupt(self, error: BaseException) -> None:
        """From another thread: stop the run with ``error`` (the caller's Ctrl-C or SIGTERM)."""
        with self.lock:
            engine = self.engine
            if engine is None:
                self.stopped = error
                return
        try:
            engine.loop.call_soon_threadsafe(engine.fail, error)
        except RuntimeError:
            pass  # the loop is closed: the run has already ended


def _stepped_in_thread(samples: Generator[Sample, None, None],
                       interrupt: Callable[[BaseException], None]) -> Generator[Sample, None, None]:
    """``samples``, each ``next()`` (and the final ``close()``) run by one worker thread while
    this thread waits. An exception raised here while waiting (Ctrl-C, the CLI's SIGTERM) is
    passed to ``interrupt``; the worker's step ends with it, closing the loop, before it goes on."""
    commands: queue.Queue[str] = queue.Queue()
    answers: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        while True:
            command = commands.get()
            try:
                if command == "close":
                    samples.close()
                    answers.put(("closed", None))
                    return
                answers.put(("sample", next(samples)))
            except StopIteration:
                answers.put(("end", None))
                return
            except BaseException as exc:  # handed to the caller's thread, raised there
                answers.put(("raised", exc))
                return

    worker = threading.Thread(target=work, name="mmtasks-scheduler", daemon=True)
    worker.start()
    ended = False  # the worker has given its last answer and returned

    def answer() -> tuple[str, Any]:
        nonlocal ended
        try:
            with _ctrl_c_raises():
                kind, value = answers.get()
        except BaseException as exc:
            interrupt(exc)
            kind, _ = answers.get()  # the step ends with ``exc`` once the loop has seen it
            ended = kind != "sample"
            raise
        ended = kind != "sample"
        return kind, value

    try:
        while True:
            commands.put("next")
            kind, value = answer()
            if kind == "raised":
                raise value
            if kind == "end":
                return
            yield value
    finally:
        if not ended:
            commands.put("close")
            kind, value = answers.get()
            worker.join()
            if kind == "raised":
                raise value
        worker.join()


@contextlib.contextmanager
def _ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt in the waiting caller's thread, whatever SIGINT handler the
    caller's event loop installed: ``asyncio.run``'s (and other runners') first Ctrl-C only cancels
    the main task, which cannot happen while that task waits here in a plain call, so the
    interrupt did nothing and the run went on with its requests in flight. The caller's handler is
    put back once the step's answer is in. Only the main thread has signal handlers; a handler
    set to ignore Ctrl-C (or the system's default) is left as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    current = signal.getsignal(signal.SIGINT)
    if not callable(current) or current is signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, current)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _close(loop: asyncio.AbstractEventLoop, engine: _Engine) -> None:
    for lane in engine.queues:
        lane.shutdown()
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        _run_to_end(loop, asyncio.gather(*pending, return_exceptions=True))
    # backends that keep per-loop connections (the openai backend) close this loop's now
    for model in {id(r.model): r.model for r in engine.routes.values() if r.queue is None}.values():
        aclose = getattr(model, "aclose", None)
        if aclose is not None:
            try:
                _run_to_end(loop, aclose())
            except Exception as exc:  # closing connections must not hide the run's outcome
                log.debug("closing %r: %s", model, exc)
    _run_to_end(loop, loop.shutdown_asyncgens())
    loop.close()


def _run_to_end(loop: asyncio.AbstractEventLoop, awaitable: Awaitable[T]) -> T:
    """``loop.run_until_complete(awaitable)``, run again when the loop stops before it is done.

    When Ctrl-C or SIGTERM is raised in one of the loop's callbacks just after a
    ``run_until_complete`` future completed, that call's ``loop.stop`` is already queued among
    the ready callbacks, and stays there: the next run of the loop (this clean-up) stops after
    its first turn ("Event loop stopped before Future completed")."""
    future = asyncio.ensure_future(awaitable, loop=loop)
    while True:
        try:
            return loop.run_until_complete(future)
        except RuntimeError:
            if future.done() or loop.is_running() or _running_loop() is not None:
                raise  # the awaitable's own error, or a loop that cannot run here at all
