"""Stop a run whose first requests to a model all fail the same way.

When the first :data:`FIRST_FAILURES` replies a model sends back (cached ones aside) are all
failures with the same reason - the same 4xx (``max_tokens=2048 cannot be greater than
max_model_len=1024``), or the server gone (``connection error``) - the rest would fail the
same way: the run stops with one line naming the cause instead of sending every other
request (each with its own retries). One success, or two different reasons, and the watch
ends: failures after that are counted per request as always.

Replies left without an answer at the token limit (``truncated``: cut inside the reasoning, or
nothing after it) are one cause however they were cut: the first five stop the run with a line
naming ``--gen-kwargs max_new_tokens=``. Replies cut at the limit that still have an answer are
scored; when the first five all are, one warning names the same setting.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from mmtasks.core.reasoning import LENGTH, TRUNCATED, is_truncated
from mmtasks.core.request import COMPONENT_FLAGS, Reply, Request
from mmtasks.errors import ModelError

#: identical failures, from the first replies of a model, that stop the run
FIRST_FAILURES = 5

log = logging.getLogger("mmtasks")

_ATTEMPTS = re.compile(r"^failed after \d+ attempts?: ")


def failure_reason(error: str | None) -> str:
    """A failure's reason without the attempt count (the same cause, however often retried)."""
    return _ATTEMPTS.sub("", error or "request failed")


class FirstRequestsFailed(ModelError):
    """The first requests to a model all failed the same way: the run stopped."""


@dataclass
class FirstFailures:
    """``on_reply`` watcher (see :class:`~mmtasks.scheduling.scheduler.Scheduler`): raises
    :class:`FirstRequestsFailed` on the :data:`FIRST_FAILURES`-th identical failure in a row
    from the start of a target's replies."""

    #: target -> display name of its model (named in the error)
    names: dict[str, str] = field(default_factory=dict)
    threshold: int = FIRST_FAILURES
    _seen: dict[str, tuple[str, int]] = field(default_factory=dict)
    _done: set[str] = field(default_factory=set)
    #: target -> replies at the token limit so far, from the start (None: one was not, or warned)
    _at_limit: dict[str, int | None] = field(default_factory=dict)

    def __call__(self, request: Request, reply: Reply) -> None:
        target = request.target
        if reply.cached or target not in self.names:
            return
        at_limit = reply.finish_reason == LENGTH
        if target == "model" and (reply.ok or not is_truncated(reply.error)):
            self._watch_limit(target, request, at_limit)
        if target in self._done:
            return
        if reply.ok:
            self._done.add(target)
            return
        reason = failure_reason(reply.error)
        if at_limit and is_truncated(reply.error):  # cut in its reasoning, or nothing after it: one cause
            reason = f"{TRUNCATED}: the reply hit the token limit (max_new_tokens={request.generation.max_new_tokens})"
        first, count = self._seen.get(target, (reason, 0))
        if first != reason:
            self._done.add(target)
            return
        self._seen[target] = (reason, count + 1)
        if count + 1 >= self.threshold:
            self._done.add(target)
            who = self.names.get(target, target)
            if target == "model" and reason.startswith(f"{TRUNCATED}:"):
                raise FirstRequestsFailed(
                    f"the first {count + 1} replies of {who} all hit the token limit before an answer, so the run "
                    f"stopped instead of sending the rest: {reason}", field="--gen-kwargs",
                    hint="give the model room to finish: --gen-kwargs max_new_tokens=N with N above "
                         f"{request.generation.max_new_tokens} (recorded; not the benchmark's official protocol)")
            raise FirstRequestsFailed(
                f"the first {count + 1} requests to {who} all failed the same way, so the run stopped instead of "
                f"sending the rest: {reason}", field=COMPONENT_FLAGS.get(target, COMPONENT_FLAGS["model"])[0],
                hint="fix the cause and run the same command again (replies received so far are in the cache)")

    def _watch_limit(self, target: str, request: Request, at_limit: bool) -> None:
        """Answers cut at the token limit are still scored (their text is the model's), but when the
        first :attr:`threshold` replies all hit it, one warning says how to give the model room."""
        count = self._at_limit.get(target, 0)
        if count is None:
            return
        if not at_limit:
            self._at_limit[target] = None
            return
        self._at_limit[target] = count + 1
        if count + 1 >= self.threshold:
            self._at_limit[target] = None
            log.warning("the first %d replies of %s all hit the token limit (max_new_tokens=%d): their answers are cut; "
                        "give the model room with --gen-kwargs max_new_tokens=N", count + 1,
                        self.names.get(target, target), request.generation.max_new_tokens)
