"""The HTTP transport under the openai backend's SDK client: every answer bounded and checked.

The ``openai`` SDK sends each attempt through :class:`GuardedTransport`, which

- counts the attempts of the request being made (:data:`ATTEMPTS`, so a failed reply can
  say exactly how many were sent, SDK retries included);
- gives each attempt a total deadline, from connecting to the last byte of the answer (the
  read timeout alone lets a server that trickles one byte at a time hold a request forever);
- caps the answer's size, before and after decompression, reading it in small pieces (a
  1.5 GB body, or a gzip bomb, is never held in memory);
- checks that a 200 answer to a chat-completions call is a chat completion (``check``);
- never lets a redirect take the request to another origin (scheme, host, port): the client
  would resend every header there, ``default_headers={"api-key": ...}`` included (httpx strips
  only ``Authorization``). Such a redirect reaches the client without its ``Location``, as an
  error answer naming where it pointed, so it is a failure of that request, never followed.
  A redirect within the origin is followed as before. This one transport carries the model's,
  the judge's and the note taker's requests and the readiness probe.

Each of these is raised as a transport error of the SDK's HTTP library (``httpx2`` or ``httpx``,
see :mod:`mmtasks.models.openai_http`), which the SDK retries (with its own
backoff) and finally reports as ``APITimeoutError`` or ``APIConnectionError`` with this
module's exception as the cause.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import sys
import urllib.request
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from mmtasks.models.openai_http import http

if sys.version_info >= (3, 11):
    from asyncio import Timeout, timeout

    def _expired(limit: Timeout) -> bool:
        return limit.expired()
else:  # Python 3.10: asyncio.timeout's backport (async-timeout, the code the standard library took in)
    from async_timeout import Timeout, timeout

    def _expired(limit: Timeout) -> bool:
        return limit.expired  # a property in the backport, a method in asyncio


@dataclass
class AttemptCounter:
    attempts: int = 0


#: the attempt counter of the request the current task is making (set by the backend)
ATTEMPTS: contextvars.ContextVar[AttemptCounter | None] = contextvars.ContextVar("mmtasks_openai_attempts", default=None)

#: how much compressed data is fed to the decoder at once (bounds what one piece expands to)
_PIECE = 16 * 1024
#: headers that describe the body as the server sent it, not as it is handed on
_BODY_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}


class DeadlineExceeded(http.ReadTimeout):
    """An attempt took longer than its total deadline."""


class ResponseTooLarge(http.RemoteProtocolError):
    """An answer larger than the cap."""


class MalformedResponse(http.RemoteProtocolError):
    """A 200 answer that is not what the call returns (e.g. not a chat completion)."""


#: (request, status, decoded body) -> why the answer is malformed, or None
BodyCheck = Callable[[http.Request, int, bytes], "str | None"]


class _Pieces(http.AsyncByteStream):
    def __init__(self, data: bytes) -> None:
        self._data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        view = memoryview(self._data)
        for start in range(0, len(view), _PIECE):
            yield bytes(view[start:start + _PIECE])


#: the statuses a client follows (with their ``Location``)
_REDIRECTS = (301, 302, 303, 307, 308)


def origin(url: http.URL) -> tuple[str, str, int | None]:
    """A URL's origin: scheme, host and port (the default port of the scheme when none is given)."""
    port = url.port if url.port is not None else {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


def _other_origin(current: http.URL, location: str) -> str | None:
    """Where a redirect points, as ``scheme://host:port``, when that is another origin; else None."""
    try:
        target = current.join(location)
    except (http.InvalidURL, ValueError):
        return "an unreadable location"
    if origin(target) == origin(current):
        return None
    scheme, host, port = origin(target)
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


def _refused_redirect(status: int, request: http.Request, elsewhere: str) -> http.Response:
    """The redirect as an error answer the client does not follow (no ``Location``)."""
    from mmtasks.errors import printable

    here = "{}://{}:{}".format(*origin(request.url))
    message = (f"the server at {here} redirected ({status}) to another origin, {printable(elsewhere)[:200]}: "
               "not followed, so no credential or header leaves for it; point base_url at the final address")
    body = json.dumps({"error": {"message": message, "type": "redirect_refused"}}).encode()
    return http.Response(status, headers=[("content-type", "application/json")], content=body,
                         extensions={"reason_phrase": b"Redirect Not Followed"})


class GuardedTransport(http.AsyncBaseTransport):
    """Wraps a transport; see the module docstring."""

    def __init__(self, inner: http.AsyncBaseTransport, *, deadline: float, max_bytes: int, check: BodyCheck | None = None) -> None:
        self.inner = inner
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.check = check

    async def handle_async_request(self, request: http.Request) -> http.Response:
        counter = ATTEMPTS.get()
        if counter is not None:
            counter.attempts += 1
        limit = timeout(self.deadline)
        try:
            async with limit:
                status, headers, extensions, raw = await self._fetch(request)
        except asyncio.TimeoutError:  # TimeoutError itself since Python 3.11; the backport's own class on 3.10
            if _expired(limit):
                raise DeadlineExceeded(f"no complete answer within the {self.deadline:g}s deadline", request=request) from None
            raise
        if status in _REDIRECTS and "location" in headers:
            elsewhere = _other_origin(request.url, headers["location"])
            if elsewhere is not None:
                return _refused_redirect(status, request, elsewhere)
        body = await self._decoded(request, status, headers, raw)
        if self.check is not None:
            problem = self.check(request, status, body)
            if problem is not None:
                raise MalformedResponse(problem, request=request)
        kept = [(k, v) for k, v in headers.multi_items() if k.lower() not in _BODY_HEADERS]
        return http.Response(status, headers=kept, content=body, extensions=extensions)

    async def _fetch(self, request: http.Request) -> tuple[int, http.Headers, dict, bytes]:
        response = await self.inner.handle_async_request(request)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise self._too_large(request, f"declared {int(declared)} bytes")
            raw = bytearray()
            # an async transport's response: its stream is the async one (typed as either)
            async for chunk in response.stream:  # type: ignore[union-attr]
                raw += chunk
                if len(raw) > self.max_bytes:
                    raise self._too_large(request, "")
        finally:
            await response.aclose()
        extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
        return response.status_code, response.headers, extensions, bytes(raw)

    async def _decoded(self, request: http.Request, status: int, headers: http.Headers, raw: bytes) -> bytes:
        """The body without its Content-Encoding, decompressed piece by piece under the cap."""
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("", "identity"):
            return raw
        probe = http.Response(status, headers=headers, stream=_Pieces(raw))
        out = bytearray()
        try:
            async for chunk in probe.aiter_bytes():
                out += chunk
                if len(out) > self.max_bytes:
                    raise self._too_large(request, "decompressed")
        except http.DecodingError as exc:
            raise MalformedResponse(f"the body cannot be decoded ({encoding}): {exc}", request=request) from None
        return bytes(out)

    def _too_large(self, request: http.Request, how: str) -> ResponseTooLarge:
        detail = f" ({how})" if how else ""
        return ResponseTooLarge(f"the answer is larger than max_response_bytes={self.max_bytes}{detail}", request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def environment_proxy(url: str) -> str | None:
    """The proxy the environment (``HTTPS_PROXY``, ``NO_PROXY`` ...) names for ``url``, as httpx
    would use it (an explicit transport does not read the environment by itself)."""
    parts = http.URL(url)
    if urllib.request.proxy_bypass(parts.host):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")
