"""The record of one finished document: what was asked, every reply, and its scores."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from mmtasks.core.request import FailureKind, Reply, Request


@dataclass
class Sample:
    task: str
    doc_id: str
    doc_index: int
    #: the messages of the model request(s), as JSON (images as paths)
    prompt: list[dict[str, Any]] = field(default_factory=list)
    #: every reply the model gave, in the order the protocol asked (None: the request failed):
    #: its answer, without the reasoning (see ``reasoning``)
    responses: list[str | None] = field(default_factory=list)
    #: beside each of ``responses``: the reply's reasoning, split from its answer (None: none), kept
    #: for a reply left without an answer (the ``truncated`` failure) too
    reasoning: list[str | None] = field(default_factory=list)
    #: beside each of ``responses``: why the reply ended (``stop``, ``length`` ...; None: not said)
    finish_reasons: list[str | None] = field(default_factory=list)
    #: beside each of ``responses``: the tokens the backend counted for the reply (``prompt``,
    #: ``completion``, ``reasoning``, ``cached``, those it reported; None: none reported)
    tokens: list[dict[str, int] | None] = field(default_factory=list)
    parsed: Any = None
    target: Any = None
    #: per-sample metric values on the task's scale (None: not applicable / not scored)
    metrics: dict[str, float | None] = field(default_factory=dict)
    #: request failures (after the backend's retries), never scored as answers
    failures: list[str] = field(default_factory=list)
    #: beside each of ``failures``: its kind (:meth:`add_failure`); a run folder written before
    #: the field has none (:meth:`kinds` reads them from the failures' text)
    failure_kinds: list[FailureKind] = field(default_factory=list)
    #: answers that could not be parsed even after re-asking (0 or 1 for a one-answer protocol,
    #: a count for one that asks several questions); counted as the task's ``unparsed`` problem
    unparsed: int = 0
    #: answers that named nothing and were replaced by a random guess (the ``choice`` parser's
    #: ``fallback: random``), scored as answers; counted as the task's ``guessed`` problem
    guessed: int = 0
    #: how the answer was read (single-turn protocols): ``rule`` (the parser's rule found the letter
    #: or label), ``option_text`` (an option's text), ``matcher`` (the LLM answer matcher),
    #: ``random`` (a guess); None: no answer was read (unparsed, or a failed request)
    read_by: str | None = None
    #: how the task's record policy (``dataset.record_policy``) treated this record, when it did:
    #: treatment (``kept_as_text``, ``scored_wrong``) -> reason; counted in the task's ``problems``
    #: and, by reason, in its ``coverage``
    irregular: dict[str, str] = field(default_factory=dict)
    #: breakdown name -> this document's group label
    breakdown: dict[str, str] = field(default_factory=dict)
    #: the cluster the document belongs to (the task's ``cluster:``), None when it declares none
    cluster: str | None = None
    #: which of the run's ``--repeats`` this sample is (0-based; 0 for a run without repeats)
    repeat: int = 0
    #: judge calls: parsed fields, raw replies, failures
    judge: list[dict[str, Any]] = field(default_factory=list)
    judge_failures: int = 0
    #: protocol-specific detail (turns of a multi-turn dialogue, probes, notes)
    extra: dict[str, Any] = field(default_factory=dict)

    def add_reply(self, reply: Reply) -> None:
        """Record one model reply: its answer in ``responses`` (None when it failed), its reasoning
        and finish reason beside it."""
        self.responses.append(reply.text)
        self.reasoning.append(reply.reasoning)
        self.finish_reasons.append(reply.finish_reason)
        self.tokens.append(reply.tokens())

    def add_failure(self, error: str, kind: FailureKind | None) -> None:
        """Record a failed request: ``error`` (where it happened and why: ``turn 2: HTTP 500 ...``)
        and its kind (a reply's :attr:`~mmtasks.core.request.Reply.kind`)."""
        self.failures.append(error)
        self.failure_kinds.append(kind or FailureKind.of_error(error))

    def kinds(self) -> list[FailureKind]:
        """The kind of each failure: as recorded, or, for failures appended without one (a run
        folder of an older version, a plugin protocol that appends to ``failures``), read from
        its text (:meth:`FailureKind.of_error`)."""
        if len(self.failure_kinds) == len(self.failures):
            return [FailureKind(k) for k in self.failure_kinds]
        return [FailureKind.of_error(f) for f in self.failures]

    def to_json(self) -> dict[str, Any]:
        """The sample as a dict of its fields (shallow: values are shared, not copied;
        :func:`mmtasks.results.files.dumps` serialises any dataclass nested in them)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def slim(self) -> "Sample":
        """What aggregation needs, without the bulky record: the same sample minus the
        prompt, the replies, the parsed answer and target, and the judge's raw replies.

        Aggregators get slim samples (read back from the samples file, or kept in memory
        when a run writes none), so memory does not grow with the text of samples. They read
        ``metrics``, ``failures``, ``unparsed``, ``read_by``, ``irregular``, ``breakdown``, ``cluster``, ``judge_failures`` and
        ``extra`` (per-turn / per-question records), which are kept; the replies' reasoning goes
        with the replies.
        """
        return Sample(task=self.task, doc_id=self.doc_id, doc_index=self.doc_index, metrics=self.metrics,
                      failures=self.failures, failure_kinds=self.failure_kinds, unparsed=self.unparsed, guessed=self.guessed, read_by=self.read_by,
                      irregular=self.irregular,
                      breakdown=self.breakdown, cluster=self.cluster, repeat=self.repeat,
                      judge_failures=self.judge_failures, extra=self.extra)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Sample":
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


#: A dialogue is a generator: it yields the requests it needs now (several at once
#: when they are independent, e.g. probe questions), receives their replies in the
#: same order, and returns the finished Sample.
Dialogue = Generator[list[Request], list[Reply], Sample]
