"""Stop a run whose first requests to a model all fail the same way - the server's failure,
never a document's.

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

A failure can be a document's rather than the server's, and then it says nothing of the rest:

- a reply the backend marks ``context_overflow`` (this document's prompt does not fit the
  context: every backend marks it so) is neither counted nor ends the watch;
- identical ``HTTP 4xx`` failures (a request the server refuses: the settings, or each
  document's own content, such as an image it cannot read) are checked once, when they reach
  the threshold, by a probe: the same request settings with a one-line text prompt and no
  document. The server answering it means the failures were the documents': the watch ends and
  they are counted per request. The probe failing the same way stops the run, as before.
  Connection errors and 5xx need no probe: they are the server's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mmtasks.core.conversation import Message
from mmtasks.core.reasoning import LENGTH, TRUNCATED, is_truncated
from mmtasks.core.request import COMPONENT_FLAGS, Reply, Request
from mmtasks.errors import ModelError

#: identical failures, from the first replies of a model, that stop the run
FIRST_FAILURES = 5

log = logging.getLogger("mmtasks")

_ATTEMPTS = re.compile(r"^failed after \d+ attempts?: ")
#: a failure the backend knows is its document's own (the prompt does not fit the context)
DOCUMENT_FAILURE = re.compile(r"^context_overflow\b")
#: a refusal that may be the document's (its content) or the server's (the settings): probed
_REFUSAL = re.compile(r"^HTTP 4\d\d\b")
#: the probe's prompt: no document in it
PROBE_TEXT = "Reply with the word OK."

#: sends one request to the target's model, without the cache: ``probe(request) -> reply``
Probe = Callable[[Request], Reply]


def failure_reason(error: str | None) -> str:
    """A failure's reason without the attempt count (the same cause, however often retried)."""
    return _ATTEMPTS.sub("", error or "request failed")


def probe_request(request: Request) -> Request:
    """``request``'s settings (generation, target, task) with a one-line prompt and no document."""
    return Request(messages=(Message.text("user", PROBE_TEXT),), generation=request.generation,
                   target=request.target, task=request.task, doc_id="", meta={})


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
    #: asks a target's model once without a document (see the module docstring); None: no probe
    probe: Probe | None = None
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
        if DOCUMENT_FAILURE.match(reason):
            return  # this document's own: nothing about the server or the other documents
        first, count = self._seen.get(target, (reason, 0))
        if first != reason:
            self._done.add(target)
            return
        self._seen[target] = (reason, count + 1)
        if count + 1 >= self.threshold:
            self._done.add(target)
            if self.probe is not None and _REFUSAL.match(reason):
                answer = self.probe(probe_request(request))
                if answer.ok or failure_reason(answer.error) != reason:
                    return  # the server answers without the documents: the failures were theirs
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
