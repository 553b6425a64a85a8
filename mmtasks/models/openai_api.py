"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint.

OpenAI itself, vLLM's server, and others. A wave of requests is sent
concurrently (``concurrency`` at a time) from an event loop in a background
thread; :meth:`OpenAIModel.generate` yields each reply the moment it arrives,
so the scheduler can cache it. Each concurrency slot is its own one-connection
HTTP client: one shared pool of many connections costs httpcore time that grows
with the square of the connections, which dominated at 64-way concurrency.

Failures: 429, 5xx, timeouts, dropped connections and unparseable bodies are
retried (exponential backoff with full jitter, Retry-After honoured); other
4xx fail that request at once. A request that still fails becomes
``Reply.failure``. A rejected key (401/403), an unknown model or endpoint
(404) or an exhausted quota concern every request, so they raise
:class:`ModelError` and stop the run. The key never appears in messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from mmtasks.errors import ConfigError, ModelError
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec
from mmtasks.models.image_encoding import ImageEncoder, ImageEncoding
from mmtasks.models.openai_args import DEFAULT_BASE_URL, parse_openai_args
from mmtasks.models.openai_payload import (
    BadResponse, chat_messages, completion_text, error_code, error_detail, finish_reason, generation_params, request_body,
)
from mmtasks.models.retry import is_retryable_status, retry_after_seconds, retry_delay
from mmtasks.core.request import Reply, Request
from mmtasks.secrets import redact, register_env_secrets, register_secret, register_url_secrets, safe_url

log = logging.getLogger(__name__)


@dataclass
class _Outcome:
    text: str | None = None
    error: str | None = None
    retry: bool = False
    retry_after: float | None = None


class OpenAIModel(ChatModel):
    """Chat completions over HTTP; see the module docstring."""

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None) -> None:
        super().__init__(spec, context)
        if not spec.name:
            raise ConfigError("the openai backend needs a model name, e.g. openai:gpt-4o", field="--model")
        self.args = parse_openai_args(spec.args)
        self.base_url = (self.args.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        register_env_secrets()
        register_url_secrets(self.base_url)
        self._api_key = os.environ.get(self.args.api_key_env) or None
        register_secret(self._api_key)
        self.url = safe_url(self.base_url)
        if self._api_key is None and ("api_key_env" in spec.args or urlsplit(self.base_url).hostname == "api.openai.com"):
            raise ModelError(f"environment variable {self.args.api_key_env} is not set (needed for {self.url})", field="--model-args",
                             hint="export it, or name another variable with api_key_env=")
        a = self.args
        self.encoder = ImageEncoder(ImageEncoding(a.max_image_side, a.image_max_bytes, a.image_format, a.jpeg_quality))
        self._start_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._clients: list[httpx.AsyncClient] = []

    def __repr__(self) -> str:
        return f"OpenAIModel({self.spec.name!r} at {self.url})"

    @property
    def identity(self) -> str:
        """The spec's identity plus the endpoint (without credentials or query): one model name
        served at two endpoints (two vLLM deployments, a proxy) may be two different models, and a
        cached reply from one must not answer for the other."""
        return json.dumps({"spec": json.loads(self.spec.identity()), "endpoint": self.url}, sort_keys=True)

    # -- lifecycle ---------------------------------------------------------
    def _started(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="mmtasks-openai", daemon=True)
                thread.start()
                self._pool = ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 1), thread_name_prefix="mmtasks-image")
                asyncio.run_coroutine_threadsafe(self._open(), loop).result()
                self._loop, self._thread = loop, thread
            return self._loop

    async def _open(self) -> None:
        ssl_context = httpx.create_ssl_context()
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=30)
        timeout = httpx.Timeout(self.args.timeout, connect=min(self.args.timeout, 30.0))
        self._clients = [
            httpx.AsyncClient(base_url=self.base_url + "/", headers=headers, limits=limits, verify=ssl_context, timeout=timeout)
            for _ in range(self.args.concurrency)
        ]
        self._slots: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for client in self._clients:
            self._slots.put_nowait(client)
        # bounds the request bodies (with their base64 images) held in memory at once
        self._prepare = asyncio.Semaphore(2 * self.args.concurrency)

    def close(self) -> None:
        with self._start_lock:
            loop, thread, self._loop = self._loop, self._thread, None
            if loop is None:
                return

            async def aclose() -> None:
                await asyncio.gather(*(c.aclose() for c in self._clients), return_exceptions=True)

            asyncio.run_coroutine_threadsafe(aclose(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=10)
            loop.close()
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)

    # -- generation --------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        if not requests:
            return
        done = object()
        results: queue.Queue[Any] = queue.Queue()
        future = asyncio.run_coroutine_threadsafe(self._wave(requests, results), self._started())
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
            results.put((index, await self._complete(request)))

        tasks = [asyncio.ensure_future(one(i, r)) for i, r in enumerate(requests)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _complete(self, request: Request) -> Reply:
        async with self._prepare:
            body = await self._body(request)
            client = await self._slots.get()
            started = time.monotonic()
            try:
                return await self._send(client, body, started)
            finally:
                self._slots.put_nowait(client)

    async def _body(self, request: Request) -> bytes:
        loop = asyncio.get_running_loop()
        images = request.images
        urls = await asyncio.gather(*(loop.run_in_executor(self._pool, self.encoder.data_url, img) for img in images))
        messages = chat_messages(request.messages, iter(urls), self.args.image_detail)
        params = generation_params(request.generation, self.args.max_tokens_param)
        if not images:
            return request_body(self.spec.name, messages, params, self.args.extra_body)
        return await loop.run_in_executor(self._pool, request_body, self.spec.name, messages, params, self.args.extra_body)

    async def _send(self, client: httpx.AsyncClient, body: bytes, started: float) -> Reply:
        attempts = self.args.max_retries + 1
        for attempt in range(attempts):
            outcome = await self._attempt(client, body)
            if outcome.error is None:
                return Reply(text=outcome.text, latency=time.monotonic() - started)
            if not outcome.retry:
                return Reply(text=None, error=redact(outcome.error), latency=time.monotonic() - started)
            if attempt + 1 < attempts:
                delay = retry_delay(attempt, self.args.retry_base_delay, outcome.retry_after)
                log.debug("%s: %s; retry %d of %d in %.2fs", self.spec.display, redact(outcome.error), attempt + 1, attempts - 1, delay)
                await asyncio.sleep(delay)
        error = f"failed after {attempts} attempt{'s' if attempts > 1 else ''}: {outcome.error}"
        log.warning("%s: a request %s", self.spec.display, redact(error))
        return Reply(text=None, error=redact(error), latency=time.monotonic() - started)

    async def _attempt(self, client: httpx.AsyncClient, body: bytes) -> _Outcome:
        try:
            response = await client.post("chat/completions", content=body, headers={"Content-Type": "application/json"})
        except httpx.TimeoutException:
            return _Outcome(error=f"timed out after {self.args.timeout:g}s", retry=True)
        except httpx.TransportError as exc:
            return _Outcome(error=f"connection error ({type(exc).__name__}: {exc})", retry=True)
        status, raw = response.status_code, response.content
        if status == 200:
            try:
                text = completion_text(raw)
            except BadResponse as exc:
                return _Outcome(error=f"invalid response: {exc}", retry=True)
            if text is None:
                return _Outcome(error=f"the reply has no content (finish_reason={finish_reason(raw)})")
            return _Outcome(text=text)
        self._raise_if_fatal(status, raw)
        message = f"HTTP {status}: {error_detail(raw)}"
        if is_retryable_status(status):
            return _Outcome(error=message, retry=True, retry_after=retry_after_seconds(response.headers))
        return _Outcome(error=message)

    def _raise_if_fatal(self, status: int, raw: bytes, models: Sequence[str] = ()) -> None:
        """Raise :class:`ModelError` for statuses that doom every request."""
        where = f"{self.spec.display} at {self.url}"
        detail = error_detail(raw)
        if status in (401, 403):
            raise ModelError(redact(f"{where}: the API key was rejected (HTTP {status}: {detail})"), field="--model", hint=self._key_hint())
        if status == 404:
            known = f"; the server lists: {', '.join(models[:10])}" if models else ""
            raise ModelError(redact(f"{where}: not found (HTTP 404: {detail}){known}"), field="--model", hint="check the model name and base_url")
        if status == 429 and error_code(raw) == "insufficient_quota":
            raise ModelError(redact(f"{where}: quota exhausted (HTTP 429: {detail})"), field="--model")

    def _key_hint(self) -> str:
        if self._api_key is None:
            return f"no key was sent: ${self.args.api_key_env} is not set"
        return f"check ${self.args.api_key_env}"

    # -- readiness ---------------------------------------------------------
    def check_ready(self) -> None:
        """Raise :class:`ModelError` unless the endpoint answers and accepts the key and the model."""
        asyncio.run_coroutine_threadsafe(self._check_ready(), self._started()).result()

    async def _check_ready(self) -> None:
        response = await self._probe("GET", "models")
        models: list[str] = []
        if response.status_code == 200:
            try:
                models = [str(m["id"]) for m in json.loads(response.content)["data"]]
            except (ValueError, KeyError, TypeError):
                models = []
            if self.spec.name in models:
                return
        elif response.status_code != 404:
            self._raise_if_fatal(response.status_code, response.content)
        # /models is missing, unparseable or does not list the name (aliases exist): ask for one token
        ping = {"model": self.spec.name, "messages": [{"role": "user", "content": "ping"}], self.args.max_tokens_param: 1}
        response = await self._probe("POST", "chat/completions", ping)
        if response.status_code == 200:
            return
        self._raise_if_fatal(response.status_code, response.content, models)
        raise ModelError(redact(f"{self.spec.display} at {self.url}: a one-token test request failed "
                                f"(HTTP {response.status_code}: {error_detail(response.content)})"), field="--model")

    async def _probe(self, method: str, path: str, payload: dict | None = None) -> httpx.Response:
        """One readiness call, retried twice on connection errors, timeouts, 429 and 5xx."""
        timeout = min(self.args.timeout, 30.0)
        problem = ""
        for attempt in range(3):
            if attempt:
                await asyncio.sleep(min(self.args.retry_base_delay, 0.5) * 2**attempt)
            client = await self._slots.get()
            try:
                response = await client.request(method, path, json=payload, timeout=timeout)
            except httpx.TimeoutException:
                problem = f"no answer within {timeout:g}s"
                continue
            except httpx.TransportError as exc:
                problem = f"cannot connect ({type(exc).__name__}: {exc})"
                continue
            finally:
                self._slots.put_nowait(client)
            if not (response.status_code == 429 or response.status_code >= 500):
                return response
            problem = f"HTTP {response.status_code}: {error_detail(response.content)}"
        raise ModelError(redact(f"{self.spec.display} at {self.url} is not usable: {problem}"), field="--model")
