"""What the native provider backends (``anthropic``, ``gemini``) share with ``openai``.

The same key rules (:func:`key_goes_to`: a provider's default variable is sent only to the
provider's own hosts over https, to hosts listed in ``$MMTASKS_<PROVIDER>_KEY_HOSTS``, or wherever
``api_key_env=`` names it; never stored or printed: registered for redaction, absent from the cache
identity), the same guarded transport under each SDK (:mod:`mmtasks.models.openai_transport`: a
total deadline per attempt, a cap on the answer, attempts counted, no redirect to another origin),
the same image encoder, and the same concurrency: per event loop, at most ``concurrency`` requests
in flight. A wave (:meth:`APIModel.generate`) runs on a loop of the backend's own.

Each backend gives the provider's request (:meth:`APIModel._payload`, whose settings part is
:meth:`ChatModel.sent_settings`: what results.json records is what is sent), the call, and how
its errors read (:meth:`APIModel._call`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.core.provenance import ModelRevision
from mmtasks.core.request import FailureKind, Reply, Request
from mmtasks.config.bounds import (MAX_CONCURRENCY, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, MAX_RESPONSE_BYTES, MAX_RETRIES,
                                   MAX_TIMEOUT_S)
from mmtasks.errors import ConfigError, DataError, ModelError, ModelNotFound
from mmtasks.models.drawn import DrawnCalls, wants_choice
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec
from mmtasks.models.image_encoding import ImageEncoder, ImageEncoding
from mmtasks.models.openai_http import http
from mmtasks.models.openai_transport import (
    BodyCheck,
    DeadlineExceeded,
    GuardedTransport,
    MalformedResponse,
    ResponseTooLarge,
    environment_proxy,
)
from mmtasks.secrets import (
    redact,
    register_secret,
    register_url_secrets,
    safe_url,
    url_userinfo,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


class APIArgs(BaseModel):
    """Model args every native API backend takes (``--model-args k=v,...``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    """The API's root (default: the provider's own); a loopback or proxy address takes no key
    unless ``api_key_env`` names one."""
    api_key_env: str | None = None
    """The environment variable holding the key (default: the provider's, e.g. $ANTHROPIC_API_KEY),
    sent only to the provider's hosts unless named here."""
    concurrency: int = Field(16, ge=1, le=MAX_CONCURRENCY)
    """Requests in flight at once, per event loop."""
    timeout: float = Field(120.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Seconds per attempt to connect, and to wait for each piece of the answer."""
    deadline: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Seconds one attempt may take in all (default: twice ``timeout``)."""
    max_retries: int = Field(6, ge=0, le=MAX_RETRIES)
    """Retries after the first attempt of 408, 409, 429, 5xx and transport errors (Retry-After honoured)."""
    max_response_bytes: int = Field(32 * 1024 * 1024, ge=1024, le=MAX_RESPONSE_BYTES)
    """The largest answer accepted (before and after decompression)."""
    default_headers: dict[str, str] = Field(default_factory=dict)
    """Headers sent with every request (values treated as secrets)."""
    max_image_side: int | None = Field(None, ge=16, le=MAX_IMAGE_SIDE)
    """Downscale images whose longest side is larger than this."""
    image_max_bytes: int = Field(3_750_000, ge=1024, le=MAX_IMAGE_BYTES)
    """Shrink images whose encoded file is larger than this."""
    image_format: Literal["auto", "jpeg", "png"] = "auto"
    jpeg_quality: int = Field(90, ge=1, le=100)


def parse_api_args(model: type[BaseModel], backend: str, args: Mapping[str, Any]) -> Any:
    """``args`` as ``model``; a key given as an argument, an unknown or a bad value is one line."""
    import difflib

    if "api_key" in args:
        register_secret(str(args["api_key"]))
        raise ConfigError(f"the {backend} backend does not take a key as an argument", field="--model-args",
                          hint="put it in an environment variable and pass api_key_env=NAME")
    try:
        return model(**args)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            close = difflib.get_close_matches(name, list(model.model_fields), n=1)
            hint = f"did you mean {close[0]!r}?" if close else "known: " + ", ".join(model.model_fields)
            raise ConfigError(f"unknown argument {name!r} for the {backend} backend", field="--model-args", hint=hint) from None
        raise ConfigError(redact(f"bad value for {name!r}: {err['msg']}"), field="--model-args") from None


def key_goes_to(base_url: str, hosts: Sequence[str], hosts_env: str, environ: Mapping[str, str]) -> bool:
    """Whether a provider's default key may go to ``base_url``: one of its ``hosts`` over https,
    or a host listed in ``$hosts_env`` (comma-separated)."""
    try:
        parts = urlsplit(base_url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    if host in hosts:
        return parts.scheme == "https"
    listed = {h.strip().lower() for h in environ.get(hosts_env, "").split(",") if h.strip()}
    return bool(host) and host in listed


class APIModel(ChatModel):
    """A chat model behind a provider's SDK; see the module docstring."""

    supports_async = True
    #: the backend's name (``anthropic``), its default endpoint, key variable and key hosts
    provider: ClassVar[str]
    default_base_url: ClassVar[str]
    default_key_env: ClassVar[str]
    key_hosts: ClassVar[tuple[str, ...]]
    args_model: ClassVar[type[APIArgs]] = APIArgs
    #: an example spec, for the error of a spec without a model name
    example: ClassVar[str]

    def revision(self) -> ModelRevision:
        """An API model is named, not pinned: the run card records its name."""
        return ModelRevision(source="api", name=self.spec.name)

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None) -> None:
        super().__init__(spec, context)
        if not spec.name:
            raise ConfigError(f"the {self.provider} backend needs a model name, e.g. {self.example}", field="--model")
        self.args = parse_api_args(self.args_model, self.provider, spec.args)
        configured = (self.args.base_url or self._default_base_url()).strip().rstrip("/")
        register_url_secrets(configured)
        user, password = url_userinfo(configured)
        if user is not None or password is not None:
            raise ConfigError("base_url carries credentials before the host (user:password@ or token@): refused",
                              field="--model-args", hint="put the key in an environment variable and name it with api_key_env=NAME")
        parts = urlsplit(configured)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"base_url must be an http(s) URL, got {safe_url(configured)!r}", field="--model-args")
        self.base_url = configured
        self.url = safe_url(configured)
        self.hosts_env = f"MMTASKS_{self.provider.upper()}_KEY_HOSTS"
        key_env = self.args.api_key_env or self.default_key_env
        self._api_key = os.environ.get(key_env) or None
        register_secret(self._api_key)
        #: the variable whose key was not sent (the provider's default, to another host)
        self._withheld: str | None = None
        if self._api_key is not None and self.args.api_key_env is None and not key_goes_to(
                configured, self.key_hosts, self.hosts_env, os.environ):
            self._withheld, self._api_key = key_env, None
        if self._api_key is None and self._withheld is None and self._uses_key() and (
                self.args.api_key_env is not None or (parts.hostname or "").lower() in self.key_hosts):
            raise ModelError(f"environment variable {key_env} is not set (needed for {self.url})", field="--model-args",
                             hint="export it, or name another variable with api_key_env=")
        for value in self.args.default_headers.values():
            register_secret(value)
        a = self.args
        self.encoder = ImageEncoder(ImageEncoding(a.max_image_side, a.image_max_bytes, a.image_format, a.jpeg_quality))
        self._lock = threading.Lock()
        self._clients: dict[asyncio.AbstractEventLoop, tuple[Any, asyncio.Semaphore]] = {}
        self._pool: ThreadPoolExecutor | None = None
        #: calls drawing several replies to one prompt (``n``), shared by the repeats taking one each
        self.drawn = DrawnCalls()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec.name!r} at {self.url})"

    @property
    def identity(self) -> str:
        """The spec's identity plus the endpoint (without credentials): one model name behind two
        endpoints (the provider, a proxy) may be two models, and a cached reply from one must not
        answer for the other."""
        import json

        return json.dumps({"spec": json.loads(self.spec.identity()), "endpoint": self.url}, sort_keys=True)

    # -- what a backend gives ------------------------------------------------------
    def _default_base_url(self) -> str:
        """The endpoint when ``base_url`` is not given."""
        return self.default_base_url

    def _uses_key(self) -> bool:
        """Whether the endpoint authenticates with an API key (Vertex AI does not)."""
        return True

    def _make_client(self, session: Any) -> Any:
        """The SDK's async client over ``session`` (an ``AsyncClient`` of the SDK's HTTP library)."""
        raise NotImplementedError

    def _payload(self, request: Request) -> Any:
        """The provider's request for ``request`` (built in a worker thread: it encodes images)."""
        raise NotImplementedError

    async def _call(self, client: Any, payload: Any) -> Reply:
        """Send ``payload``; its reply, or a failed reply (a fatal endpoint error raises ModelError)."""
        raise NotImplementedError

    async def _aclose(self, client: Any) -> None:
        """Close a client's connections."""
        await client.close()

    async def _probe(self, client: Any) -> None:
        """Ask the API about the model (one cheap call, no generation); raise the SDK's error."""
        raise NotImplementedError

    def _probe_failure(self, exc: BaseException) -> tuple[int, str] | None:
        """(status, the server's message) of an error answer to the probe; None: no answer came."""
        raise NotImplementedError

    def check_ready(self) -> None:
        """Raise :class:`ModelError` unless the endpoint answers, takes the key and serves the model
        (a 404 is :class:`ModelNotFound`), before any model time is spent."""
        self._run(self._check_ready())

    async def _check_ready(self) -> None:
        client, _ = self._client()
        try:
            await self._probe(client)
        except Exception as exc:  # the SDK's errors, read below; anything else is a bug: re-raised
            answer = self._probe_failure(exc)
            if answer is None:
                if not (isinstance(exc, (http.TransportError, OSError)) or _is_connection_error(exc)):
                    raise
                raise ModelError(redact(f"{self.spec.display} at {self.url} is not usable: "
                                        f"{transport_reason(exc, self.args.timeout, False)}"), field="--model") from None
            status, detail = answer
            self.fatal(status, detail)
            if status == 429 or status >= 500:
                raise ModelError(redact(f"{self.spec.display} at {self.url} is not usable: HTTP {status}: {detail}"),
                                 field="--model") from None
            # another answer (400: a probe the endpoint does not take): the requests will tell

    def _check(self) -> BodyCheck | None:
        """The transport's check of a 200 answer (a malformed one is retried); None: none."""
        return None

    # -- clients, one per event loop ----------------------------------------------
    def _session(self) -> Any:
        a = self.args
        timeout = http.Timeout(a.timeout, connect=min(a.timeout, 30.0))
        limits = http.Limits(max_connections=a.concurrency, max_keepalive_connections=a.concurrency, keepalive_expiry=30)
        inner = http.AsyncHTTPTransport(limits=limits, proxy=environment_proxy(self.base_url))
        deadline = a.deadline if a.deadline is not None else 2 * a.timeout
        transport = GuardedTransport(inner, deadline=deadline, max_bytes=a.max_response_bytes, check=self._check())
        return http.AsyncClient(transport=transport, timeout=timeout, trust_env=False, follow_redirects=True)

    def _client(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        with self._lock:
            for dead in [lp for lp in self._clients if lp.is_closed()]:
                del self._clients[dead]
            if loop not in self._clients:
                self._clients[loop] = (self._make_client(self._session()), asyncio.Semaphore(self.args.concurrency))
            return self._clients[loop]

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1), thread_name_prefix=f"mmtasks-{self.provider}")
            return self._pool

    # -- one request ----------------------------------------------------------------
    async def agenerate(self, request: Request) -> Reply:
        if wants_choice(request):  # one of n replies drawn in one call (mmtasks.models.drawn)
            return await self.drawn.reply(request, lambda: self._send(request, all_choices=True))
        return (await self._send(request))[0]

    async def _send(self, request: Request, all_choices: bool = False) -> list[Reply]:
        """The call's reply; with ``all_choices``, each of its ``generation.n`` replies (:meth:`_call_all`)."""
        client, slots = self._client()
        async with slots:
            started = time.monotonic()
            try:
                if request.images:
                    payload = await asyncio.get_running_loop().run_in_executor(self._executor(), self._payload, request)
                else:
                    payload = self._payload(request)
            except DataError as exc:  # an image of this document that does not decode: its failure
                return [Reply.failure(f"image: {exc.render()}")] * (request.generation.n or 1 if all_choices else 1)
            replies = await self._call_all(client, payload) if all_choices else [await self._call(client, payload)]
            out = []
            for reply in replies:
                if reply.ok or reply.error is None:
                    out.append(reply if reply.latency else _with_latency(reply, time.monotonic() - started))
                else:
                    log.warning("%s: a request %s", self.spec.display, reply.error)
                    out.append(reply)
            return out

    async def _call_all(self, client: Any, payload: Any) -> list[Reply]:
        """Every reply of a call asking for several (``n``, for a backend whose :attr:`takes_settings`
        has it); one by default."""
        return [await self._call(client, payload)]

    def failed(self, reason: str, attempts: int, retried: bool, kind: FailureKind = FailureKind.REQUEST_FAILURE) -> Reply:
        """A failed reply of ``kind``; a retried failure says how many attempts were made."""
        if retried:
            reason = f"failed after {attempts} attempt{'s' if attempts != 1 else ''}: {reason}"
        return Reply(text=None, error=redact(reason), failure_kind=kind)

    def fatal(self, status: int, detail: str) -> None:
        """Raise :class:`ModelError` for answers that doom every request (a rejected key, an
        unknown model); other statuses return."""
        where = f"{self.spec.display} at {self.url}"
        if status in (401, 403):
            what = "asks for a key, and none was sent" if self._withheld is not None else "the API key was rejected"
            hint = (f"${self._withheld} goes only to {', '.join(self.key_hosts)} and the hosts in ${self.hosts_env}; "
                    f"pass api_key_env={self._withheld} to send it to this endpoint") if self._withheld else "check the key"
            raise ModelError(redact(f"{where}: {what} (HTTP {status}: {detail})"), field="--model", hint=hint) from None
        if status == 404:
            raise ModelNotFound(redact(f"{where}: not found (HTTP 404: {detail})"), detail=redact(detail), model=self.spec.display, field="--model",
                                hint="check the model name and base_url") from None

    # -- a wave, on a loop of our own ----------------------------------------------
    def _own_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=f"mmtasks-{self.provider}", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._own_loop()).result()

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        if not requests:
            return
        results: queue.Queue[Any] = queue.Queue()
        done = object()

        async def wave() -> None:
            async def one(index: int, request: Request) -> None:
                results.put((index, await self.agenerate(request)))
            await asyncio.gather(*(one(i, r) for i, r in enumerate(requests)))

        future = asyncio.run_coroutine_threadsafe(wave(), self._own_loop())
        future.add_done_callback(lambda _: results.put(done))
        received = 0
        try:
            while received < len(requests):
                item = results.get()
                if item is done:
                    error = None if future.cancelled() else future.exception()
                    raise error or RuntimeError(f"{self.provider} backend: a wave ended without all its replies")
                received += 1
                yield item
        finally:
            if not future.done():
                future.cancel()

    def close(self) -> None:
        with self._lock:
            clients, self._clients = dict(self._clients), {}
            own, thread, self._loop, self._thread = self._loop, self._thread, None, None
            pool, self._pool = self._pool, None
        for loop, (client, _) in clients.items():
            if loop.is_closed():
                continue  # its sockets go with it
            try:
                if _running_loop() is loop:
                    loop.create_task(self._aclose(client))
                elif loop is own or loop.is_running():
                    asyncio.run_coroutine_threadsafe(self._aclose(client), loop).result(timeout=10)
                else:
                    loop.run_until_complete(self._aclose(client))
            except (TimeoutError, RuntimeError):
                pass  # the loop is stopping: its connections go with it
        if own is not None:
            own.call_soon_threadsafe(own.stop)
            if thread is not None:
                thread.join(timeout=10)
            own.close()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _is_connection_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("APIConnectionError", "APITimeoutError")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _with_latency(reply: Reply, latency: float) -> Reply:
    import dataclasses

    return dataclasses.replace(reply, latency=latency)


def split_data_url(url: str) -> tuple[str, str]:
    """``data:<mime>;base64,<data>`` as (mime type, base64 data)."""
    head, _, data = url.partition(",")
    return head.removeprefix("data:").split(";")[0], data


def transport_reason(exc: BaseException, timeout: float, timed_out: bool) -> str:
    """Why an attempt got no answer: the guarded transport's own reason (the exception itself, or
    the cause of the SDK's connection error), a timeout or a connection error."""
    cause = exc if isinstance(exc, (DeadlineExceeded, ResponseTooLarge, MalformedResponse)) else exc.__cause__
    if isinstance(cause, (DeadlineExceeded, ResponseTooLarge, MalformedResponse)):
        return str(cause)
    if timed_out:
        return f"timed out after {timeout:g}s"
    detail = f"{type(cause).__name__}: {cause}" if cause is not None else f"{type(exc).__name__}: {exc}"
    return f"connection error ({detail})"
