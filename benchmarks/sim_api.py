"""A simulated API backend for benchmarks: the harness without an HTTP client.

``sim:NAME`` (registered by :func:`register`) is a ``supports_async`` backend
that does what an API backend must do with a request, minus the network: it
encodes the request's images with :class:`~mmtasks.models.image_encoding.ImageEncoder`
in a thread pool (each distinct image once), builds the chat-completions JSON
body (``openai_payload.chat_messages``, ``json.dumps``) in that pool, then waits
the request's latency on the event loop, at most ``concurrency`` at a time. Its
answer: ``A`` (``reply=choice``) or ``reply to: <last user text>`` (``reply=echo``).
Latency: ``latency=0.05`` seconds, or ``latency=lognormal:MEDIAN:P99`` drawn from the
last user message's ``[d<i>t<j>]`` tag exactly as ``loopback.py``'s server does.

Comparing a run on ``sim:`` with the same run on ``openai:`` against the loopback
server separates the harness (scheduler, protocol, cache keys, image encoding,
payloads, scoring, writing) from the HTTP client's cost.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from mmtasks.core.request import Reply, Request
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec, register_model
from mmtasks.models.image_encoding import ImageEncoder
from mmtasks.models.openai_payload import chat_messages, generation_params


class SimulatedAPI(ChatModel):
    supports_async = True

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None) -> None:
        super().__init__(spec, context)
        self.concurrency = int(spec.args.get("concurrency", 32))
        self.reply = str(spec.args.get("reply", "echo"))
        self.latency = spec.args.get("latency", 0.05)
        self.encoder = ImageEncoder()
        self.pool = ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 1))
        self._slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self.bodies = 0

    def _latency(self, request: Request) -> float:
        if not isinstance(self.latency, str):
            return float(self.latency)
        from benchmarks.loopback import _latency_function

        fn = _latency_function(self.latency)
        assert callable(fn)
        return fn({"messages": [{"role": "user", "content": request.messages[-1].plain_text}]})

    def _body(self, request: Request) -> bytes:
        urls = [self.encoder.data_url(img) for img in request.images]
        messages = chat_messages(request.messages, iter(urls))
        return json.dumps({"model": self.spec.name, "messages": messages, **generation_params(request.generation)}).encode()

    async def agenerate(self, request: Request) -> Reply:
        loop = asyncio.get_running_loop()
        slots = self._slots.setdefault(loop, asyncio.Semaphore(self.concurrency))
        async with slots:
            await loop.run_in_executor(self.pool, self._body, request)
            self.bodies += 1
            await asyncio.sleep(self._latency(request))
        text = "A" if self.reply == "choice" else f"reply to: {request.messages[-1].plain_text}"
        return Reply(text=text)

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        async def wave() -> list[Reply]:
            return list(await asyncio.gather(*(self.agenerate(r) for r in requests)))

        yield from enumerate(asyncio.run(wave()))

    def close(self) -> None:
        self.pool.shutdown(wait=False)


def register() -> None:
    register_model("sim", SimulatedAPI)
