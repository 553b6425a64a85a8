"""Stop a run whose first requests to a model all fail the same way.

When the first :data:`FIRST_FAILURES` replies a model sends back (cached ones aside) are all
failures with the same reason - the same 4xx (``max_tokens=2048 cannot be greater than
max_model_len=1024``), or the server gone (``connection error``) - the rest would fail the
same way: the run stops with one line naming the cause instead of sending every other
request (each with its own retries). One success, or two different reasons, and the watch
ends: failures after that are counted per request as always.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mmtasks.core.request import COMPONENT_FLAGS, Reply, Request
from mmtasks.errors import ModelError

#: identical failures, from the first replies of a model, that stop the run
FIRST_FAILURES = 5

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

    def __call__(self, request: Request, reply: Reply) -> None:
        target = request.target
        if reply.cached or target in self._done or target not in self.names:
            return
        if reply.ok:
            self._done.add(target)
            return
        reason = failure_reason(reply.error)
        first, count = self._seen.get(target, (reason, 0))
        if first != reason:
            self._done.add(target)
            return
        self._seen[target] = (reason, count + 1)
        if count + 1 >= self.threshold:
            self._done.add(target)
            who = self.names.get(target, target)
            raise FirstRequestsFailed(
                f"the first {count + 1} requests to {who} all failed the same way, so the run stopped instead of "
                f"sending the rest: {reason}", field=COMPONENT_FLAGS.get(target, COMPONENT_FLAGS["model"])[0],
                hint="fix the cause and run the same command again (replies received so far are in the cache)")
