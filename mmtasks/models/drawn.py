"""Several replies to one prompt drawn in one call, for an API that takes ``n`` (OpenAI's ``n``,
Gemini's ``candidate_count``): each repeat of a document asks for its own choice
(:attr:`~mmtasks.core.request.Request.choice`, set by :func:`mmtasks.scoring.repeats.drawn`), and
the first to arrive sends the call for all of them.

The call's ``usage`` (the prompt once, every choice's completion) goes with the reply of the repeat
that sent it; the others carry none, so the run's token totals are the call's. A repeat answered
from the response cache never arrives: a resumed run's call still asks for all ``n`` replies and
each remaining repeat takes its own index. A server that answers fewer choices than asked fails
the missing ones, naming it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import weakref
from collections.abc import Awaitable, Callable

from mmtasks.core.request import Reply, Request


def wants_choice(request: Request) -> bool:
    """Whether ``request`` is one choice of a call drawing several replies."""
    return request.choice is not None and (request.generation.n or 1) > 1


class _Call:
    """One call drawing ``n`` replies, and which choices have been taken (forgotten when all have)."""

    def __init__(self, future: "asyncio.Future[list[Reply]]") -> None:
        self.future = future
        self.taken: set[int] = set()


class DrawnCalls:
    """The calls in flight per event loop, by the prompt's key (the request without its choice)."""

    def __init__(self) -> None:
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Call]] = weakref.WeakKeyDictionary()

    async def reply(self, request: Request, send: Callable[[], Awaitable[list[Reply]]]) -> Reply:
        """Choice ``request.choice`` of the call for its prompt, sending it (``send``) when no
        repeat of the prompt has; a choice asked twice sends a call of its own."""
        assert request.choice is not None
        calls = self._loops.setdefault(asyncio.get_running_loop(), {})
        key = dataclasses.replace(request, choice=None).content_key()
        call = calls.get(key)
        sender = call is None or request.choice in call.taken
        if call is None or request.choice in call.taken:
            call = calls[key] = _Call(asyncio.ensure_future(send()))
        call.taken.add(request.choice)
        replies = await asyncio.shield(call.future)
        if len(call.taken) >= (request.generation.n or 1) and calls.get(key) is call:
            del calls[key]
        if request.choice >= len(replies):
            return Reply.failure(f"the server answered {len(replies)} of the n={request.generation.n} replies asked for")
        reply = replies[request.choice]
        if sender:
            return reply
        return dataclasses.replace(reply, prompt_tokens=None, completion_tokens=None, reasoning_tokens=None,
                                   cached_tokens=None)
