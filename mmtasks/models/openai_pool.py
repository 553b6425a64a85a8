"""A pool of OpenAI-compatible endpoints serving one model: ``base_url=[http://A/v1,http://B/v1]``.

Each request goes to the live endpoint with the fewest requests in flight (ties: the first
listed). A request that fails for want of an answer (connection refused or reset, timeout, 5xx
after the SDK's retries) marks its endpoint down for :data:`DOWN_FOR_S` and is sent again to
another live endpoint; only when none is left does it fail. An endpoint that was down is tried
again after that time. Every endpoint's replies, failures and the requests moved away from it
are counted (results.json ``run_stats.endpoints``, and a line at the end of the run).

The pool is one model: its cache identity is its members' (the spec and what the servers say
they serve), without the endpoints, so the pool, any one replica and any other pool of the
same model share their cached replies. The endpoints must then say what they serve: every
live one must list the same weights (vLLM's ``root`` in ``/v1/models``), or the args give
``model_revision`` or ``cache_group``; a pool whose endpoints serve different things is refused.

``n`` (a document's repeats drawn in one call, :mod:`mmtasks.models.drawn`) is coalesced by the
pool, not by each endpoint: the repeats of a prompt take their choices of one call, sent to one
endpoint (and moved whole to another when that one gives no answer), so a pool sends as many
calls as one endpoint would.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mmtasks.core.request import GenerationConfig, Reply, Request
from mmtasks.errors import ConfigError, ModelError, MmtasksError
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec
from mmtasks.models.drawn import DrawnCalls, wants_choice

log = logging.getLogger("mmtasks")

#: seconds an endpoint that failed to answer is left out before it is tried again
DOWN_FOR_S = 30.0


def _moves(reply: Reply) -> bool:
    """Whether a failed reply says its endpoint gave no answer (so another may): connection
    errors, timeouts and server errors, not an answer about the request itself (4xx, overflow)."""
    error = reply.error or ""
    if reply.text is not None or not error:
        return False
    return any(word in error for word in ("connection error", "timed out", "HTTP 5", "cannot connect", "deadline"))


class OpenAIPool(ChatModel):
    """Replicas of one model behind several ``base_url`` endpoints (see the module docstring)."""

    supports_async = True

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None, *,
                 member: Callable[[ModelSpec, ModelContext | None], Any]) -> None:
        """``member``: builds the backend of one endpoint (``OpenAIModel``, which builds this pool)."""
        super().__init__(spec, context)
        urls = spec.args.get("base_url")
        if not isinstance(urls, list) or not urls or not all(isinstance(u, str) and u.strip() for u in urls):
            raise ConfigError("base_url as a pool is a list of URLs: base_url=[http://A/v1,http://B/v1]", field="--model-args")
        if len(set(urls)) != len(urls):
            raise ConfigError("base_url lists an endpoint twice", field="--model-args")
        # OpenAIModel instances (url, args, names_its_weights, _run, aclose beside ChatModel's): typed Any,
        # since openai_api imports this module and the layer test counts a TYPE_CHECKING import back as a cycle
        self.members: list[Any] = [member(spec.model_copy(update={"args": {**spec.args, "base_url": url}}), context) for url in urls]
        self.args = self.members[0].args
        self._outstanding = [0] * len(urls)
        self._down_until = [0.0] * len(urls)
        #: per endpoint (credentials left out): replies, failures, requests moved to another endpoint
        self.counts: dict[str, dict[str, int]] = {m.url: {"replies": 0, "failed": 0, "moved_away": 0} for m in self.members}
        #: the calls drawing ``n`` replies in flight, shared by the endpoints (each member has its own)
        self.drawn = DrawnCalls()

    def __repr__(self) -> str:
        return f"OpenAIPool({self.spec.name!r} at {', '.join(m.url for m in self.members)})"

    # -- what the pool is ---------------------------------------------------------
    @property
    def identity(self) -> str:
        return self._live()[0].identity if self._live() else self.members[0].identity

    def revision(self) -> Any:
        return self.members[0].revision()

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any] | None:
        return self.members[0].sent_settings(generation)

    @property
    def endpoint_counts(self) -> dict[str, dict[str, int]]:
        return {url: dict(c) for url, c in self.counts.items()}

    def _live(self) -> list[Any]:
        now = time.monotonic()
        return [m for k, m in enumerate(self.members) if self._down_until[k] <= now]

    def check_ready(self) -> None:
        """Every endpoint is checked; unreachable ones start down (tried again later), the others
        must serve one model that is named without its URL. Raises when none is usable."""
        problems: list[str] = []
        for k, member in enumerate(self.members):
            try:
                member.check_ready()
            except ModelError as exc:
                if exc.field == "--model" and "is not usable" in exc.message:
                    self._down_until[k] = time.monotonic() + DOWN_FOR_S
                    problems.append(exc.message)
                    log.warning("%s: endpoint %s is down at the start; its share goes to the others", self.spec.display, member.url)
                    continue
                raise
        live = [m for k, m in enumerate(self.members) if self._down_until[k] == 0.0]
        if not live:
            raise ModelError(f"no endpoint of the pool is usable: {'; '.join(problems)}", field="--model")
        self.max_model_len = min((m.max_model_len for m in live if m.max_model_len is not None), default=None)
        if not all(m.names_its_weights for m in live):
            unnamed = next(m.url for m in live if not m.names_its_weights)
            raise ConfigError(f"{unnamed} does not say which weights it serves (no 'root' in /v1/models), so a pool "
                              "cannot tell its endpoints serve one model", field="--model-args",
                              hint="give model_revision=... or cache_group=... (the same for every replica)")
        identities = {m.identity for m in live}
        if len(identities) > 1:
            raise ModelError(f"the pool's endpoints serve different models: {sorted(m.url for m in live)} answer "
                             f"{len(identities)} different /v1/models records for {self.spec.name!r}", field="--model-args",
                             hint="pool only replicas of one model")

    # -- requests ---------------------------------------------------------------------
    def _pick(self, tried: set[int]) -> int | None:
        now = time.monotonic()
        candidates = [k for k in range(len(self.members)) if k not in tried and self._down_until[k] <= now]
        if not candidates:
            return None
        return min(candidates, key=lambda k: (self._outstanding[k], k))

    async def agenerate(self, request: Request) -> Reply:
        if wants_choice(request):  # one of n replies drawn in one call: the pool's call, on one endpoint
            return await self.drawn.reply(request, lambda: self._send(request))
        return (await self._send(request))[0]

    async def _send(self, request: Request) -> list[Reply]:
        """The replies of one call for ``request`` (one, or ``generation.n``) from the live
        endpoint with the fewest in flight, moved to another while the endpoint gives no answer."""
        tried: set[int] = set()
        last: list[Reply] | None = None
        while True:
            k = self._pick(tried)
            if k is None:
                assert last is not None or tried == set()
                return last if last is not None else [Reply.failure("no endpoint of the pool is up")] * (request.generation.n or 1)
            tried.add(k)
            member = self.members[k]
            self._outstanding[k] += 1
            try:
                replies: list[Reply] = await member._send(request)
            finally:
                self._outstanding[k] -= 1
            counts = self.counts[member.url]
            if _moves(replies[0]) and len(tried) < len(self.members):
                self._down_until[k] = time.monotonic() + DOWN_FOR_S
                counts["moved_away"] += 1
                log.warning("%s: endpoint %s gave no answer (%s); its requests go to the others for %g s",
                            self.spec.display, member.url, replies[0].error, DOWN_FOR_S)
                last = replies
                continue
            for reply in replies:
                counts["failed" if reply.text is None else "replies"] += 1
            return replies

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        async def wave() -> list[Reply]:
            return list(await asyncio.gather(*(self.agenerate(r) for r in requests)))

        yield from enumerate(self.members[0]._run(wave()))

    async def aclose(self) -> None:
        for member in self.members:
            await member.aclose()

    def close(self) -> None:
        errors: list[MmtasksError] = []
        for member in self.members:
            try:
                member.close()
            except MmtasksError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]
