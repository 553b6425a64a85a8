"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint, through the
``openai`` SDK (``openai.AsyncOpenAI``).

One request: :meth:`OpenAIModel.agenerate`, called from any asyncio event loop. The backend
keeps, per running loop, ``concurrency`` slots, each an SDK client over an
``AsyncClient`` of the SDK's own HTTP library (``httpx2`` for openai 3.x, ``httpx`` before; see
:mod:`mmtasks.models.openai_http`) holding one connection: a request takes a free slot (or waits for
one), so at most ``concurrency`` are in flight and each has a connection of its own. A wave: :meth:`OpenAIModel.generate`
runs the same code on a loop of its own (a background thread) and yields each reply the
moment it arrives. A request's images are encoded and its body serialised in one job of a
thread pool, each distinct image once per run (the encoder caches by content hash); a request
whose images need no decoding and are small is built on the loop itself.

Failures. The SDK retries connection errors, timeouts, 408, 409, 429 and 5xx (its backoff,
Retry-After honoured) up to ``max_retries`` times; the transport under it
(:mod:`mmtasks.models.openai_transport`) bounds each attempt by a total ``deadline`` and
``max_response_bytes``, and turns a malformed 200 answer into a retried transport error.
Whatever still fails is a counted failure, ``Reply.failure(reason)``, whose reason is one of:

- ``failed after N attempts: HTTP 503: <server message>`` (and 408, 409, 429, 5xx),
- ``failed after N attempts: timed out after Ts`` / ``...: no complete answer within the Ds deadline``,
- ``failed after N attempts: connection error (<cause>)``,
- ``failed after N attempts: invalid response: <why>`` / ``...: the answer is larger than max_response_bytes=M``,
- ``context_overflow: HTTP 400: <server message>`` (the prompt does not fit the context),
- ``HTTP 400: <server message>`` (and other 4xx: not retried),
- ``the reply has no content (finish_reason=...)`` (no content and no reasoning; with reasoning, or at the
  token limit, the reply is ``truncated``: :mod:`mmtasks.core.reasoning`).

Keys. The key is read from the variable ``api_key_env`` names. Unnamed, it is
$OPENAI_API_KEY, and that key is sent only where it is for: the OpenAI API (https), the
$OPENAI_BASE_URL set beside it, or a host listed in $MMTASKS_OPENAI_KEY_HOSTS; any other
``base_url`` gets the placeholder ``EMPTY`` (what keyless local servers accept), and a 401 from
it says how to pair the key (``api_key_env=OPENAI_API_KEY``).

A rejected key (401/403), an unknown model or endpoint (404) or an exhausted quota concern
every request, so they raise :class:`ModelError` and stop the run. Secrets never appear in
messages: the key is registered for redaction, and a ``base_url`` carrying credentials
(``http://TOKEN@host/v1``) is refused (the SDK sends the key as a bearer token; the HTTP client would
turn the user info into Basic auth replacing it).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import os
import queue
import ssl
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import openai

from mmtasks.core.provenance import ModelRevision
from mmtasks.core.conversation import Image, VideoRun, video_runs
from mmtasks.core.reasoning import LENGTH
from mmtasks.core.request import OPTIONAL_SETTINGS, FailureKind, GenerationConfig, Reply, Request
from mmtasks.errors import ConfigError, DataError, ModelError, ModelNotFound
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec
from mmtasks.models.drawn import DrawnCalls, wants_choice
from mmtasks.models.image_encoding import ImageEncoder, ImageEncoding
from mmtasks.models.openai_args import (
    DEFAULT_BASE_URL, DEFAULT_KEY_HOSTS, KEY_HOSTS_ENV, effective_deadline, key_goes_to, parse_openai_args, pool_urls,
)
from mmtasks.models.openai_http import http
from mmtasks.models.openai_payload import (
    CONTEXT_OVERFLOW, BadResponse, chat_messages, video_io_kwargs, check_chat_completion, choice_count, completion_parts, completion_text, error_code,
    error_detail, finish_reason, generation_params, is_context_overflow, request_body, request_settings,
)
from mmtasks.models.openai_transport import (
    ATTEMPTS, AttemptCounter, DeadlineExceeded, GuardedTransport, MalformedResponse, ResponseTooLarge, environment_proxy,
)
from mmtasks.secrets import redact, register_secret, register_url_secrets, safe_url, url_userinfo

log = logging.getLogger(__name__)
T = TypeVar("T")

# The SDK logs every request's options (with base64 images) at DEBUG: keep its retry notes
# (INFO) under --verbose, not the bodies, unless the user asks with OPENAI_LOG.
_sdk_log = logging.getLogger("openai")
if not os.environ.get("OPENAI_LOG") and _sdk_log.level == logging.NOTSET:
    _sdk_log.setLevel(logging.INFO)

_JSON: openai.RequestOptions = {"headers": {"Content-Type": "application/json"}}
#: statuses the SDK retries (its _should_retry), so their failures say how many attempts were made
_RETRIED_STATUSES = frozenset({408, 409, 429})


@dataclass
class _LoopState:
    """What belongs to one event loop: up to ``size`` slots, each an SDK client over an
    ``AsyncClient`` holding one connection (made when first needed), and a semaphore
    bounding the requests being prepared. A slot per connection, not one pool of ``size``
    connections: httpcore's pool spends time growing with the square of its connections on
    every request, which dominated at 64-way concurrency (benchmarks/judge_throughput.py:
    9.3x the ideal time with one pool of 64, 1.2-1.4x with 64 slots)."""

    make: Callable[[], openai.AsyncOpenAI]
    size: int
    #: requests being prepared or in flight: bounds the bodies (with base64 images) held at once
    prepared: asyncio.Semaphore
    idle: asyncio.Queue[openai.AsyncOpenAI] = field(default_factory=asyncio.Queue)
    clients: list[openai.AsyncOpenAI] = field(default_factory=list)

    async def acquire(self) -> openai.AsyncOpenAI:
        if self.idle.empty() and len(self.clients) < self.size:
            client = self.make()
            self.clients.append(client)
            return client
        return await self.idle.get()

    def release(self, client: openai.AsyncOpenAI) -> None:
        self.idle.put_nowait(client)

    async def aclose(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)


class OpenAIModel(ChatModel):
    """Chat completions through the ``openai`` SDK; see the module docstring."""

    supports_async = True
    #: every setting goes in the body (the server refuses one it does not read, naming it), but
    #: ``thinking_budget`` (no chat-completions field: ``reasoning_effort``, or vLLM's
    #: ``chat_template_kwargs``); ``n`` draws a document's repeats in one call (:mod:`mmtasks.models.drawn`)
    takes_settings = frozenset(OPTIONAL_SETTINGS) - {"thinking_budget"}

    def __new__(cls, spec: ModelSpec, context: ModelContext | None = None) -> Any:
        urls = pool_urls(spec.args.get("base_url"))
        if urls is not None:  # a pool of replicas: one OpenAIModel per endpoint
            from mmtasks.models.openai_pool import OpenAIPool

            return OpenAIPool(spec.model_copy(update={"args": {**spec.args, "base_url": urls}}), context, member=cls)
        return super().__new__(cls)

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None) -> None:
        super().__init__(spec, context)
        if not spec.name:
            raise ConfigError("the openai backend needs a model name, e.g. openai:gpt-4o", field="--model")
        self.args = parse_openai_args(spec.args)
        from_env = not self.args.base_url and bool(os.environ.get("OPENAI_BASE_URL"))
        configured = str(self.args.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip()
        self.base_url, query = _split_query(configured)
        self.default_query = {**query, **self.args.default_query}
        register_url_secrets(configured)
        _refuse_userinfo(configured, from_env)
        self._api_key = os.environ.get(self.args.api_key_env) or None
        register_secret(self._api_key)
        self.url = safe_url(self.base_url)
        #: the variable whose key was not sent: $OPENAI_API_KEY, unnamed, is for the OpenAI API only
        self._withheld: str | None = None
        if (self._api_key is not None and "api_key_env" not in spec.args and not from_env
                and not key_goes_to(self.base_url, os.environ)):
            log.debug("%s: $%s is not sent to %s (it is for %s); name it with api_key_env= to send it there",
                     spec.display, self.args.api_key_env, self.url, ", ".join(DEFAULT_KEY_HOSTS))
            self._withheld, self._api_key = self.args.api_key_env, None
        if self._api_key is None and self._withheld is None and ("api_key_env" in spec.args or urlsplit(self.base_url).hostname == "api.openai.com"):
            raise ModelError(f"environment variable {self.args.api_key_env} is not set (needed for {self.url})", field="--model-args",
                             hint="export it, or name another variable with api_key_env=")
        a = self.args
        self.encoder = ImageEncoder(ImageEncoding(a.max_image_side, a.image_max_bytes, a.image_format, a.jpeg_quality))
        self._lock = threading.Lock()
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()
        self._pool: ThreadPoolExecutor | None = None
        #: calls drawing several replies to one prompt (``n``), shared by the repeats taking one each
        self.drawn = DrawnCalls()
        self._ssl: ssl.SSLContext | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # generate's own loop
        self._thread: threading.Thread | None = None
        #: what /models says the endpoint serves under the name (see served_identity); set by check_ready
        self.served: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"OpenAIModel({self.spec.name!r} at {self.url})"

    def revision(self) -> ModelRevision:
        """An API model is named, not pinned: the card records its name (the endpoint's own
        record of what it serves is in the cache identity)."""
        return ModelRevision(source="api", name=self.spec.name)

    @property
    def identity(self) -> str:
        """The spec's identity (``model_revision=`` included) plus the endpoint (without credentials
        or query) and what the server says it serves under the name (:func:`served_identity`, read
        by :meth:`check_ready`): one model name served at two endpoints (two vLLM deployments, a
        proxy), or by one server restarted on other weights, may be two different models, and a
        cached reply from one must not answer for the other."""
        identity: dict[str, Any] = {"spec": json.loads(self.spec.identity())}
        if not self.names_its_weights:
            identity["endpoint"] = self.url
        if self.served:
            identity["served"] = self.served
        return json.dumps(identity, sort_keys=True)

    @property
    def names_its_weights(self) -> bool:
        """Whether what the endpoint serves is named without its URL: the server lists the
        weights it loaded (vLLM's ``root``), or the args give ``model_revision`` or
        ``cache_group``. Then replicas of one model (another host, a pool) share one cache
        identity; otherwise the endpoint is part of it."""
        return bool(self.served.get("root") or self.args.model_revision or self.args.cache_group)

    # -- clients, one per event loop -----------------------------------------
    def _state(self) -> _LoopState:
        """The running loop's client and semaphores, made on first use in that loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            state = self._states.get(loop)
            if state is None:
                state = self._states[loop] = self._new_state()
            return state

    def _new_state(self) -> _LoopState:
        a = self.args
        timeout = http.Timeout(a.timeout, connect=min(a.timeout, 30.0))
        limits = http.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=30)
        proxy = environment_proxy(self.base_url)

        def make() -> openai.AsyncOpenAI:
            inner = http.AsyncHTTPTransport(verify=self._ssl_context(), limits=limits, proxy=proxy)
            transport = GuardedTransport(inner, deadline=effective_deadline(a), max_bytes=a.max_response_bytes, check=check_chat_completion)
            # trust_env=False: the environment's proxy is in the transport (mounted proxies would bypass it)
            session = http.AsyncClient(transport=transport, timeout=timeout, trust_env=False, follow_redirects=True)
            return openai.AsyncOpenAI(
                # without a key the SDK would read $OPENAI_API_KEY itself; servers without auth ignore "EMPTY"
                api_key=self._api_key or "EMPTY",
                base_url=self.base_url,
                default_query=self.default_query or None,
                default_headers=self.args.default_headers or None,
                max_retries=a.max_retries,
                timeout=timeout,
                http_client=session,
            )

        return _LoopState(make=make, size=a.concurrency, prepared=asyncio.Semaphore(2 * a.concurrency))

    def _ssl_context(self) -> ssl.SSLContext:
        """One verifying TLS context for every slot of every loop, made on first use: loading
        the CA bundle costs ~25 ms, which each loop's first request used to pay again."""
        with self._lock:
            if self._ssl is None:
                self._ssl = http.create_ssl_context()
            return self._ssl

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 1), thread_name_prefix="mmtasks-image")
            return self._pool

    async def aclose(self) -> None:
        """Close the running loop's connections (call it from a loop about to end)."""
        with self._lock:
            state = self._states.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.aclose()

    def close(self) -> None:
        """Close every loop's connections that can still be closed, generate's loop and the image threads."""
        with self._lock:
            states = list(self._states.items())
            self._states.clear()
            own, thread, self._loop, self._thread = self._loop, self._thread, None, None
            pool, self._pool = self._pool, None
        for loop, state in states:
            if loop.is_closed():
                continue  # its sockets go with it
            if loop is own or loop.is_running():
                if _running_loop() is loop:
                    loop.create_task(state.aclose())
                else:
                    try:
                        asyncio.run_coroutine_threadsafe(state.aclose(), loop).result(timeout=10)
                    except (TimeoutError, RuntimeError):
                        pass  # the loop is stopping: its connections go with it
            else:
                loop.run_until_complete(state.aclose())
        if own is not None:
            own.call_soon_threadsafe(own.stop)
            if thread is not None:
                thread.join(timeout=10)
            own.close()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    # -- one request ----------------------------------------------------------
    async def agenerate(self, request: Request) -> Reply:
        """Answer one request from the running loop; at most ``concurrency`` are in flight per
        loop (the others wait here). Failures are replies; a fatal endpoint error (bad key,
        unknown model, no quota) raises :class:`ModelError`."""
        if wants_choice(request):  # one of n replies drawn in one call (mmtasks.models.drawn)
            return await self.drawn.reply(request, lambda: self._send(request))
        return (await self._send(request))[0]

    async def _send(self, request: Request) -> list[Reply]:
        """The replies of one call for ``request``: one, or ``generation.n``."""
        state = self._state()
        async with state.prepared:
            try:
                body = await self._body(request)
            except DataError as exc:  # an image of this document that does not decode: its failure, not the run's
                return [Reply.failure(f"image: {exc.render()}")] * (request.generation.n or 1)
            client = await state.acquire()
            try:
                return await self._complete(client, body, request.generation.n or 1)
            finally:
                state.release(client)

    async def _body(self, request: Request) -> bytes:
        """The request's JSON body, built off the event loop when it carries images: one job in
        the image threads encodes them (each distinct image once per run: the encoder caches by
        content hash) and serialises the body. One job per request, not one per image plus one
        for the body: the pool runs jobs first in, first out, so with 64 requests being prepared
        the first request's body used to wait behind every image of the other 63, and the first
        requests went out one by one instead of at once. A request whose images need no decoding
        (already encoded, or small files that go out as they are: :data:`INLINE_IMAGE_BYTES` in
        all) is built on the loop: that costs less than handing the job to a thread, and the
        threads' hold on the GIL slowed the loop's sending of the first requests (W1: 1.6 s ->
        1.3 s in process)."""
        urls = self._cheap_urls(request.images)
        if urls is not None:
            return self._build_body(request, urls)
        return await asyncio.get_running_loop().run_in_executor(self._executor(), self._build_body, request)

    def _cheap_urls(self, images: Sequence[Image]) -> list[str] | None:
        """Every image's data URL when none needs decoding and the new ones total at most
        :data:`INLINE_IMAGE_BYTES` (see :meth:`ImageEncoder.cheap_data_url`); else None."""
        urls: list[str] = []
        budget = INLINE_IMAGE_BYTES
        for image in images:
            url = self.encoder.cheap_data_url(image, budget)
            if url is None:
                return None
            budget -= len(url) * 3 // 4
            urls.append(url)
        return urls

    def _build_body(self, request: Request, urls: list[str] | None = None) -> bytes:
        if self.args.video == "video_url":
            in_videos = {id(f) for m in request.messages for run in video_runs(m.parts) if isinstance(run, VideoRun) for f in run.frames}
            urls = [self.encoder.data_url(img) for img in request.images if id(img) not in in_videos]
            messages = chat_messages(request.messages, iter(urls), self.args.image_detail, video_url=self._video_url)
            runs: list[VideoRun] = [run for m in request.messages for run in video_runs(m.parts) if isinstance(run, VideoRun)]
        else:
            if urls is None:
                urls = [self.encoder.data_url(img) for img in request.images]
            messages = chat_messages(request.messages, iter(urls), self.args.image_detail)
            runs = []
        settings = self.sent_settings(request.generation)
        if runs:  # vLLM's media_io_kwargs for the videos sent as frames (under extra_body's own)
            settings = {**video_io_kwargs(runs), **settings}
        return request_body(self.spec.name, messages, settings)

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any]:
        """Every body field of a request for ``generation`` but the model and the messages: the
        request is built from this (:meth:`_build_body`), so what results.json records is sent."""
        params = generation_params(generation, self.args.max_tokens_param, self.args.chat_template_kwargs)
        return request_settings(params, self.args.extra_body)

    def _video_url(self, run: VideoRun) -> str:
        """A video's sampled frames as one ``data:video/jpeg;base64,...`` URL, frames comma-separated."""
        encoded = []
        for frame in run.frames:
            buffer = io.BytesIO()
            frame.load().save(buffer, format="JPEG", quality=self.args.jpeg_quality)
            encoded.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
        return "data:video/jpeg;base64," + ",".join(encoded)

    async def _complete(self, client: openai.AsyncOpenAI, body: bytes, n: int = 1) -> list[Reply]:
        """The call's replies: its ``n`` choices (a failure answers each of them)."""
        started = time.monotonic()
        counter = AttemptCounter()
        token = ATTEMPTS.set(counter)
        try:
            # the SDK's request loop (retries, Retry-After, typed errors) on a body built here: its
            # typed create() would walk every message (base64 images included) field by field
            response = await client.post("/chat/completions", cast_to=http.Response, content=body, options=_JSON)
        except openai.APIStatusError as exc:
            return [self._failed(self._status_failure(exc), counter.attempts, started)] * n
        except openai.APIConnectionError as exc:  # APITimeoutError included
            return [self._failed((_transport_reason(exc, self.args.timeout), True), counter.attempts, started)] * n
        finally:
            ATTEMPTS.reset(token)
        raw = response.content
        answered = choice_count(raw) if n > 1 else 1
        return [self._choice(raw, i, counter.attempts, started) for i in range(min(n, max(answered, 1)))]

    def _choice(self, raw: bytes, index: int, attempts: int, started: float) -> Reply:
        """The reply of a completion's ``choices[index]``."""
        try:
            text = completion_text(raw, index)
        except BadResponse as exc:  # the transport checks every answer: only if that check was bypassed
            return self._failed((f"invalid response: {exc}", True), attempts, started)
        parts = completion_parts(raw, index)
        if text is None and parts.reasoning is None and parts.finish_reason != LENGTH:
            return self._failed((f"the reply has no content (finish_reason={finish_reason(raw, index)})", False), attempts, started)
        # no content after reasoning, or none at the token limit: the reasoning split calls it truncated;
        # the usage is the call's, on every choice (:meth:`_one_of_n` keeps it on one)
        return Reply(text=text or "", latency=time.monotonic() - started, reasoning=parts.reasoning,
                     finish_reason=parts.finish_reason, reasoning_tokens=parts.reasoning_tokens,
                     completion_tokens=parts.completion_tokens, prompt_tokens=parts.prompt_tokens,
                     cached_tokens=parts.cached_tokens)

    def _status_failure(self, exc: openai.APIStatusError) -> tuple[str, bool]:
        """(reason, whether the SDK retried it) for an error answer; raises for fatal ones."""
        status, raw = exc.status_code, exc.response.content
        self._raise_if_fatal(status, raw)
        detail = error_detail(raw)
        if is_context_overflow(status, detail, error_code(raw)):
            return f"{CONTEXT_OVERFLOW}: HTTP {status}: {detail}", False
        return f"HTTP {status}: {detail}", status in _RETRIED_STATUSES or status >= 500

    def _failed(self, reason: tuple[str, bool], attempts: int, started: float) -> Reply:
        text, retried = reason
        if retried:
            text = f"failed after {attempts} attempt{'s' if attempts != 1 else ''}: {text}"
        error = redact(text)
        log.warning("%s: a request %s", self.spec.display, error)
        # _status_failure starts an overflow's reason with its kind (and it is never retried)
        kind = FailureKind.CONTEXT_OVERFLOW if text.startswith(f"{CONTEXT_OVERFLOW}:") else FailureKind.REQUEST_FAILURE
        return Reply(text=None, error=error, latency=time.monotonic() - started, failure_kind=kind)

    def _raise_if_fatal(self, status: int, raw: bytes, models: Sequence[str] = ()) -> None:
        """Raise :class:`ModelError` for statuses that doom every request (without the SDK's
        exception as its context: a traceback under --verbose would print the server's echo)."""
        where = f"{self.spec.display} at {self.url}"
        detail = error_detail(raw)
        if status in (401, 403):
            what = "asks for a key, and none was sent" if self._withheld is not None else "the API key was rejected"
            raise ModelError(redact(f"{where}: {what} (HTTP {status}: {detail})"), field="--model", hint=self._key_hint()) from None
        if status == 404:
            known = f"; the server lists: {', '.join(models[:10])}" if models else ""
            raise ModelNotFound(redact(f"{where}: not found (HTTP 404: {detail}){known}"), detail=redact(detail), model=self.spec.display, field="--model",
                                hint="check the model name and base_url") from None
        if status == 429 and error_code(raw) == "insufficient_quota":
            raise ModelError(redact(f"{where}: quota exhausted (HTTP 429: {detail})"), field="--model") from None

    def _key_hint(self) -> str:
        if self._withheld is not None:
            return (f"${self._withheld} was not sent: it goes only to {', '.join(DEFAULT_KEY_HOSTS)}, the $OPENAI_BASE_URL "
                    f"it is paired with and the hosts in ${KEY_HOSTS_ENV}; to send it to this endpoint pass "
                    f"api_key_env={self._withheld}, or name another variable holding this server's key")
        if self._api_key is None:
            return f"no key was set: ${self.args.api_key_env} is not set"
        return f"check ${self.args.api_key_env}"

    # -- a wave, on a loop of our own -------------------------------------------
    def _own_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="mmtasks-openai", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._own_loop()).result()

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        if not requests:
            return
        done = object()
        results: queue.Queue[Any] = queue.Queue()
        future = asyncio.run_coroutine_threadsafe(self._wave(requests, results), self._own_loop())
        future.add_done_callback(lambda _: results.put(done))
        received = 0
        try:
            while received < len(requests):
                item = results.get()
                if item is done:
                    error = None if future.cancelled() else future.exception()
                    raise error or RuntimeError("openai backend: a wave ended without all its replies")
                received += 1
                yield item
        finally:
            if not future.done():
                future.cancel()

    async def _wave(self, requests: Sequence[Request], results: "queue.Queue[Any]") -> None:
        async def one(index: int, request: Request) -> None:
            results.put((index, await self.agenerate(request)))

        tasks = [asyncio.ensure_future(one(i, r)) for i, r in enumerate(requests)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- readiness ---------------------------------------------------------------
    def check_ready(self) -> None:
        """Raise :class:`ModelError` unless the endpoint answers and accepts the key and the model."""
        self._run(self._check_ready())

    async def _check_ready(self) -> None:
        state = self._state()
        client = await state.acquire()
        try:
            await self._check_with(client)
        finally:
            state.release(client)

    async def _check_with(self, client: openai.AsyncOpenAI) -> None:
        probe = client.with_options(max_retries=2, timeout=min(self.args.timeout, 30.0))
        models: list[str] = []
        try:
            # raw calls through the SDK's request loop: its typed resources would import ~15 ms of
            # response models for two calls whose answers are read here as JSON anyway
            listing = await self._probe(probe.get("/models", cast_to=http.Response))
        except openai.NotFoundError:
            listing = None
        except openai.APIStatusError as exc:
            self._raise_if_fatal(exc.status_code, exc.response.content)
            listing = None
        if listing is not None:
            try:
                entries = json.loads(listing.content)["data"]
                models = [str(m["id"]) for m in entries]
            except (ValueError, KeyError, TypeError, RecursionError):
                entries, models = [], []
            if self.spec.name in models:
                entry = entries[models.index(self.spec.name)]
                self.max_model_len = _max_model_len(entry)
                self.served = served_identity(entry, time.time())
                return
        # /models is missing, unparseable or does not list the name (aliases exist): ask for one token
        ping = {"model": self.spec.name, "messages": [{"role": "user", "content": "ping"}], self.args.max_tokens_param: 1}
        try:
            await self._probe(probe.post("/chat/completions", cast_to=http.Response, body=ping))
        except openai.APIStatusError as exc:
            self._raise_if_fatal(exc.status_code, exc.response.content, models)
            raise ModelError(redact(f"{self.spec.display} at {self.url}: a one-token test request failed "
                                    f"(HTTP {exc.status_code}: {error_detail(exc.response.content)})"), field="--model") from None

    async def _probe(self, call: Coroutine[Any, Any, T]) -> T:
        """One readiness call (retried twice by the SDK); an unreachable endpoint is a ModelError.
        Error answers other than 429 and 5xx are left to the caller."""
        try:
            return await call
        except openai.APIConnectionError as exc:
            problem = _transport_reason(exc, min(self.args.timeout, 30.0), probe=True)
        except openai.APIStatusError as exc:
            if not (exc.status_code == 429 or exc.status_code >= 500):
                raise
            problem = f"HTTP {exc.status_code}: {error_detail(exc.response.content)}"
        raise ModelError(redact(f"{self.spec.display} at {self.url} is not usable: {problem}"), field="--model")


#: fields of a /models entry that tell what is served under a name: the id, who owns it, the
#: weights it was loaded from (vLLM's ``root``, ``parent``), when it was made (``created``)
SERVED_FIELDS = ("id", "owned_by", "root", "parent", "created")
#: a ``created`` this close to the clock is the time of the answer (vLLM stamps every listing so),
#: not of the checkpoint: it would make every run a cache miss, so it is left out
RESPONSE_TIME_WINDOW_S = 300


def served_identity(entry: Any, now: float) -> dict[str, Any]:
    """What a ``/models`` entry says about the weights served under its name, for the cache
    identity: :data:`SERVED_FIELDS` that are present and plain (strings, integers), except a
    ``created`` within :data:`RESPONSE_TIME_WINDOW_S` of ``now``."""
    if not isinstance(entry, dict):
        return {}
    out: dict[str, Any] = {}
    for name in SERVED_FIELDS:
        value = entry.get(name)
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value in ("", None):
            continue
        if name == "created" and (not isinstance(value, int) or abs(value - now) <= RESPONSE_TIME_WINDOW_S):
            continue
        out[name] = value if isinstance(value, int) else value[:512]
    return out


def _max_model_len(entry: Any) -> int | None:
    """The context length a server lists for a model (vLLM: ``max_model_len``), when it lists one."""
    value = entry.get("max_model_len") if isinstance(entry, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


#: a request whose images need no decoding and whose new ones total at most this many bytes has
#: its body built on the event loop (see OpenAIModel._body)
INLINE_IMAGE_BYTES = 64 * 1024


def _transport_reason(exc: openai.APIConnectionError, timeout: float, probe: bool = False) -> str:
    """Why an attempt got no answer: the transport's own reason, a timeout or a connection error."""
    cause = exc.__cause__
    if isinstance(cause, (DeadlineExceeded, ResponseTooLarge, MalformedResponse)):
        return str(cause)
    if isinstance(exc, openai.APITimeoutError):
        return f"no answer within {timeout:g}s" if probe else f"timed out after {timeout:g}s"
    detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
    return f"cannot connect ({detail})" if probe else f"connection error ({detail})"


def _split_query(url: str) -> tuple[str, dict[str, str]]:
    """``base_url`` without its query string, and the query as parameters (Azure's
    ``?api-version=``): the SDK appends paths to the base URL, so a query must travel apart."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ConfigError(f"base_url is not a URL: {exc}", field="--model-args") from None
    if not parts.scheme or not parts.netloc:
        raise ConfigError(f"base_url must be an http(s) URL such as http://localhost:8000/v1, got {safe_url(url)!r}", field="--model-args")
    base = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return base, dict(parse_qsl(parts.query, keep_blank_values=True))


def _refuse_userinfo(url: str, from_env: bool) -> None:
    """Credentials before the host are refused: the HTTP client would send them as Basic auth in place of
    the key, and the URL is recorded in results.json. (Registered for redaction beforehand.)"""
    user, password = url_userinfo(url)
    if user is None and password is None:
        return
    where = "$OPENAI_BASE_URL" if from_env else "base_url"
    raise ConfigError(f"{where} carries credentials before the host (user:password@ or token@): refused, they would be sent in place of the API key",
                      field="OPENAI_BASE_URL" if from_env else "--model-args",
                      hint="remove them; put the key in an environment variable and name it with api_key_env=NAME")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
