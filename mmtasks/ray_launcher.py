"""``--launcher ray``: model replicas as Ray actors, fed from one queue.

The run itself stays in this process (the *driver*): it reads the tasks, drives every
dialogue through the usual scheduler, serves and writes the response cache, scores and
writes ``results.json`` and the samples - exactly as a single process does. Only the
model (``--model``) is replicated: each replica is a Ray actor that loads the model
with its own resources (``hf:`` with ``num_gpus`` GPUs, ``vllm:`` with
``tensor_parallel_size`` x ``pipeline_parallel_size``; API and baseline backends with
none), and the driver sees the replicas as one model, :class:`RayReplicas`.

Requests are not split statically (the ``k % N`` of :mod:`mmtasks.distributed`): every
request the scheduler sends goes into one queue, and each replica pulls the next batch
(up to ``--batch-size``, else the model's ``batch_size``, else 1) the moment it is free,
so a replica given long documents does not hold the others back, and the next turn of a
multi-turn dialogue goes to whichever replica is free. A replica that dies (its node
lost, ``ray.kill``, out of memory) has its requests in flight put back in the queue for
the others; every reply already received was cached by the driver the moment it
arrived, so nothing done is lost. A run whose every replica died fails its remaining
requests (one line, the same command resumes from the cache).

The judge, matcher and note taker (when another model) stay in the driver.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from mmtasks.core.request import GenerationConfig, Reply, Request
from mmtasks.errors import ConfigError, ModelError
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec, backends, load_model

if TYPE_CHECKING:
    from mmtasks.core.provenance import ModelRevision

log = logging.getLogger("mmtasks")

#: model args read by the launcher, never passed to the backend (placement, not identity)
LAUNCHER_ARGS = ("num_gpus",)
#: the name prefix of the replica actors (``mmtasks-replica-0`` ...), in the Ray namespace :data:`NAMESPACE`
ACTOR_PREFIX = "mmtasks-replica"
NAMESPACE = "mmtasks"


class RaySettings(BaseModel):
    """Where the replicas run: ``--ray-address`` (None: a local cluster started for the run
    unless this process already joined one) and ``--ray-replicas`` (None: as many as the
    cluster holds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str | None = None
    replicas: int | None = Field(default=None, ge=1)


@dataclass(frozen=True)
class Placement:
    """What one replica asks of the cluster, and the spec it loads."""

    spec: ModelSpec
    num_gpus: float
    num_cpus: float = 1.0


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--launcher ray needs Ray", field="--launcher", hint="pip install 'mmtasks[ray]'") from None
    return ray


def placement(spec: ModelSpec, cluster_gpus: float) -> Placement:
    """The resources of one replica of ``spec`` and the spec it loads (its GPUs are the only
    ones it sees: Ray sets ``CUDA_VISIBLE_DEVICES``). ``hf``: ``num_gpus`` (default 1 when the
    cluster has GPUs, else 0 and the CPU), a whole model on one GPU or spread over its GPUs with
    ``device_map=auto``; ``vllm``: its tensor x pipeline parallel size; other backends: none."""
    args = {k: v for k, v in spec.args.items() if k not in LAUNCHER_ARGS}
    if spec.backend == "hf":
        raw = spec.args.get("num_gpus", 1 if cluster_gpus >= 1 else 0)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 0:
            raise ConfigError(f"num_gpus={raw!r} is not a number of GPUs", field="--model-args")
        gpus = float(raw)
        if "device" not in args and "device_map" not in args:
            if gpus == 0:
                args["device"] = "cpu"
            elif gpus <= 1:
                args["device"] = "cuda:0"
            else:
                args["device_map"] = "auto"
    elif spec.backend == "vllm":
        if "num_gpus" in spec.args:
            raise ConfigError("vllm: a replica's GPUs are its tensor_parallel_size x pipeline_parallel_size, "
                              "not num_gpus", field="--model-args", hint="drop num_gpus")
        gpus = float(int(args.get("tensor_parallel_size", 1)) * int(args.get("pipeline_parallel_size", 1)))
    else:
        if "num_gpus" in spec.args:
            raise ConfigError(f"{spec.backend}: num_gpus places local models only", field="--model-args",
                              hint="drop num_gpus")
        gpus = 0.0
    return Placement(spec=spec.model_copy(update={"args": args}), num_gpus=gpus)


@dataclass(frozen=True)
class ReplicaState:
    """A replica's :meth:`ReplicaActor.current`: (task, document id, request position) of each
    request of the batch it is answering, and how many requests it answered."""

    answering: list[tuple[str, str, int]]
    answered: int


class ReplicaActor:
    """One model replica, run by Ray as an actor (``ray.remote(ReplicaActor)``): loads the model
    and answers batches. Threaded (``max_concurrency=2``) so :meth:`current` answers while a
    batch runs."""

    def __init__(self, spec: ModelSpec, context: ModelContext) -> None:
        self.model = load_model(spec, context)
        self.model.check_ready()
        self._lock = threading.Lock()
        self._current: list[tuple[str, str, int]] = []
        self._answered = 0

    def describe(self) -> dict[str, Any]:
        return {"identity": self.model.identity, "revision": self.model.revision(),
                "max_model_len": self.model.max_model_len}

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any] | None:
        return self.model.sent_settings(generation)

    def current(self) -> ReplicaState:
        """What this replica is doing: the batch being answered, and how many it answered."""
        with self._lock:
            return ReplicaState(answering=list(self._current), answered=self._answered)

    def generate(self, requests: Sequence[Request]) -> list[Reply]:
        """Every request's reply as the backend gave it (the driver splits reasoning and caches)."""
        with self._lock:
            self._current = [(r.task, r.doc_id, r.position) for r in requests]
        try:
            out: list[Reply | None] = [None] * len(requests)
            for i, reply in self.model.generate(requests):
                out[i] = reply
            with self._lock:
                self._answered += len(requests)
            return [r if r is not None else Reply.failure("backend returned no reply") for r in out]
        finally:
            with self._lock:
                self._current = []

    def close(self) -> None:
        self.model.close()


@dataclass(eq=False)
class _Item:
    request: Request
    future: asyncio.Future[Reply]


@dataclass
class _Queue:
    """The requests waiting for a replica, on one event loop."""

    loop: asyncio.AbstractEventLoop
    items: deque[_Item] = field(default_factory=deque)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    workers: list[asyncio.Task[None]] = field(default_factory=list)


class RayReplicas(ChatModel):
    """The model of a ``--launcher ray`` run: its replicas (Ray actors) seen as one model with
    the identity of ``spec`` (the cache is shared with single-process runs). Built by
    :func:`ray_replicas`, which sets :attr:`cacheable` to the backend's."""

    supports_async = True

    def __init__(self, spec: ModelSpec, context: ModelContext, settings: RaySettings) -> None:
        super().__init__(spec, context)
        ray = _ray()
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            _check_reachable(settings.address)
            try:
                ray.init(address=settings.address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.ERROR, namespace=NAMESPACE)
            except ConnectionError as exc:
                raise ConfigError(f"cannot join the Ray cluster at {settings.address}: {exc}",
                                  field="--ray-address") from None
            self._started = True
        resources = ray.cluster_resources()
        where = placement(spec, float(resources.get("GPU", 0)))
        fit = _replicas_that_fit(where, resources)
        count = settings.replicas if settings.replicas is not None else fit
        if count < 1 or count > fit:
            self._shutdown()
            raise ConfigError(
                f"{count} replica(s) of {spec.display}, each with {where.num_gpus:g} GPU(s) and "
                f"{where.num_cpus:g} CPU, do not fit the Ray cluster ({resources.get('GPU', 0):g} GPU(s), "
                f"{resources.get('CPU', 0):g} CPU(s))", field="--ray-replicas",
                hint=f"at most {fit} here" if fit else "give the cluster more resources, or lower num_gpus")
        actor_cls = ray.remote(ReplicaActor)
        self.actors: list[Any] = [
            actor_cls.options(num_gpus=where.num_gpus, num_cpus=where.num_cpus, max_concurrency=2,
                              name=f"{ACTOR_PREFIX}-{i}", namespace=NAMESPACE, max_restarts=0).remote(where.spec, context)
            for i in range(count)]
        self.alive: list[bool] = [True] * count
        #: requests put back in the queue because their replica died, per replica
        self.requeued: list[int] = [0] * count
        #: requests each replica answered
        self.answered: list[int] = [0] * count
        try:
            described = ray.get([a.describe.remote() for a in self.actors])
        except ray.exceptions.RayError as exc:
            self.close()
            raise ModelError(f"a Ray replica of {spec.display} failed to load: {_cause(exc)}",
                             field="--model") from None
        # the backend's own identity (an hf checkpoint's fingerprint, an endpoint's served model):
        # the cache keys of a single process
        self._identity: str = described[0]["identity"]
        if any(d["identity"] != self._identity for d in described):
            self.close()
            raise ModelError(f"the Ray replicas of {spec.display} load different models (their identities differ: "
                             "other weights or another server on some node)", field="--model")
        self._revision = described[0]["revision"]
        self.max_model_len = described[0]["max_model_len"]
        self._queue: _Queue | None = None
        self._pull = max(1, int(context.batch_size or spec.args.get("batch_size") or 1))
        log.info("ray: %d replica(s) of %s, %g GPU(s) each", count, spec.display, where.num_gpus)

    # -- what the run reads -----------------------------------------------
    @property
    def identity(self) -> str:
        return self._identity

    def revision(self) -> "ModelRevision | None":
        return self._revision

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any] | None:
        return self._call(lambda actor: actor.sent_settings.remote(generation))

    def _call(self, submit: Any) -> Any:
        """One call on the first live replica, moving on when it died."""
        for i, actor in enumerate(self.actors):
            if not self.alive[i]:
                continue
            try:
                return self._ray.get(submit(actor))
            except self._dead_errors() as exc:
                self._died(i, exc, 0)
        raise ModelError(f"every Ray replica of {self.spec.display} died", field="--model",
                         hint="the replies received are in the response cache: the same command resumes")

    def _dead_errors(self) -> tuple[type[BaseException], ...]:
        errors = self._ray.exceptions
        return (errors.RayActorError, errors.ActorUnavailableError)

    def _died(self, index: int, exc: BaseException, in_flight: int) -> None:
        if self.alive[index]:
            self.alive[index] = False
            log.warning("ray: replica %d of %s died (%s); its %d request(s) in flight go to the other replicas",
                        index, self.spec.display, type(exc).__name__, in_flight)
        self.requeued[index] += in_flight

    # -- answering ----------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        """A whole batch on one live replica (the wave engine's and the first-failure probe's
        path); a replica that dies hands it to the next."""
        replies: list[Reply] = self._call(lambda actor: actor.generate.remote(list(requests)))
        yield from enumerate(replies)

    async def agenerate(self, request: Request) -> Reply:
        queue = self._queue_for(asyncio.get_running_loop())
        item = _Item(request, queue.loop.create_future())
        queue.items.append(item)
        queue.ready.set()
        return await item.future

    def _queue_for(self, loop: asyncio.AbstractEventLoop) -> _Queue:
        if self._queue is None or self._queue.loop is not loop:
            self._queue = _Queue(loop)
            self._queue.workers = [loop.create_task(self._serve(i, self._queue)) for i in range(len(self.actors))
                                   if self.alive[i]]
        return self._queue

    async def _serve(self, index: int, queue: _Queue) -> None:
        """Replica ``index``'s loop: pull up to a batch of waiting requests, have the replica answer
        them, hand each reply over; when the replica dies, its batch goes back to the queue."""
        actor = self.actors[index]
        while self.alive[index]:
            while not queue.items:
                queue.ready.clear()
                await queue.ready.wait()
            batch: list[_Item] = []
            while queue.items and len(batch) < self._pull:
                item = queue.items.popleft()
                if not item.future.done():  # cancelled (Ctrl-C): nothing to send
                    batch.append(item)
            if not batch:
                continue
            try:
                replies: list[Reply] = await asyncio.wrap_future(actor.generate.remote([i.request for i in batch]).future())
            except self._dead_errors() as exc:
                self._died(index, exc, len(batch))
                queue.items.extendleft(reversed(batch))  # first in line for the others
                queue.ready.set()
                if not any(self.alive):
                    self._fail_all(queue)
                return
            except self._ray.exceptions.RayTaskError as exc:  # the backend raised: each request fails
                replies = [Reply.failure(f"Ray replica {index}: {_cause(exc)}")] * len(batch)
            self.answered[index] += len(batch)
            for item, reply in zip(batch, replies):
                if not item.future.done():
                    item.future.set_result(reply)

    def _fail_all(self, queue: _Queue) -> None:
        while queue.items:
            item = queue.items.popleft()
            if not item.future.done():
                item.future.set_result(Reply.failure(f"every Ray replica of {self.spec.display} died"))

    def close(self) -> None:
        if self._queue is not None:
            for task in self._queue.workers:
                task.cancel()
        for i, actor in enumerate(getattr(self, "actors", [])):
            if self.alive[i]:
                try:
                    self._ray.get(actor.close.remote())
                except self._ray.exceptions.RayError:
                    pass
            self._ray.kill(actor)
        self._shutdown()

    def _shutdown(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


#: seconds to wait for a TCP connection to ``--ray-address`` (Ray itself retries for minutes)
CONNECT_TIMEOUT_S = 10.0


def check_settings(settings: RaySettings) -> None:
    """What can be checked before any model is built: Ray is installed, and the cluster to join
    answers (unless this process already joined one)."""
    if not _ray().is_initialized():
        _check_reachable(settings.address)


def _check_reachable(address: str | None) -> None:
    """``--ray-address HOST:PORT`` that nothing answers: one line, at once (``auto``, ``ray://``
    and None are left to Ray)."""
    if address is None or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        raise ConfigError(f"--ray-address {address!r} is not HOST:PORT", field="--ray-address")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ConfigError(f"no Ray cluster answers at {address}: {exc.strerror or exc}", field="--ray-address",
                          hint="start one with `ray start --head` (its address is printed), or drop --ray-address "
                               "to start a local cluster for the run") from None


def _replicas_that_fit(where: Placement, resources: dict[str, float]) -> int:
    by_cpu = int(resources.get("CPU", 0) // where.num_cpus) if where.num_cpus else 1 << 30
    by_gpu = int(resources.get("GPU", 0) // where.num_gpus) if where.num_gpus else 1 << 30
    return min(by_cpu, by_gpu)


def _cause(exc: BaseException) -> str:
    """The first line of what went wrong in a replica (Ray wraps it in its own traceback text)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}".rstrip(": ")
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def ray_replicas(spec: ModelSpec, context: ModelContext, settings: RaySettings) -> RayReplicas:
    """The replicas of ``spec`` on a Ray cluster, as one model whose replies are cached when the
    backend's are."""
    backend: type[ChatModel] = backends.get(spec.backend, field="--model")
    cls = type("RayReplicas", (RayReplicas,), {"cacheable": backend.cacheable})
    return cls(spec, context, settings)
