"""Asking the judge from inside a dialogue: all judge requests of a document go
out in one wave (and with every other dialogue's), replies that do not parse
are re-asked, and what still fails is recorded as a judge failure - never
dropped, never scored as if it were a verdict."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mmtasks.core.conversation import Image, Message, Text
from mmtasks.core.request import Reply, Request
from mmtasks.scoring.verdicts import ANSWER_VARIABLES, is_number, sole_verdict

if TYPE_CHECKING:
    from mmtasks.dialogues.state import DocumentState


@dataclass
class Verdict:
    """The judge's parsed answer for one judge request (``fields`` None: judge failure)."""

    fields: dict[str, Any] | None
    replies: list[str | None] = field(default_factory=list)
    error: str | None = None
    #: the judge request's messages as JSON (images as paths), as the judge saw them; a re-ask
    #: sends the same messages again
    prompt: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.fields is not None

    def to_json(self) -> dict[str, Any]:
        return {"fields": self.fields, "replies": self.replies, "error": self.error, "prompt": self.prompt}


JudgeParser = Callable[[str], "dict[str, Any] | None"]

#: the error of a verdict whose every reply the verdict parser could not read
UNPARSED_VERDICT = "judge reply could not be parsed"

#: the most characters of model text (the answer, the earlier turns the judge is shown) one judge
#: prompt may quote (ours: past any judge's context window, under the template bound of 4,000,000
#: characters). A call over it is not made: it is a judge failure of that document, never an error
#: of the run (a 5M-character reply used to stop every run, and every resume, with exit 2).
MAX_JUDGED_CHARS = 1_000_000
#: the prompt variables that hold the model's text (the verdict parsers' list, plus the rendered conversation)
_MODEL_TEXT_VARIABLES = (*ANSWER_VARIABLES, "conversation")


@dataclass(frozen=True)
class Unaskable:
    """A judge call that is not made (the model's text is too large for a judge prompt): its
    verdict is a judge failure with ``reason``, without a request."""

    reason: str


def model_text_size(variables: dict[str, Any]) -> int:
    """Characters of model text in judge-prompt variables (see :data:`MAX_JUDGED_CHARS`)."""
    total = 0
    for name in _MODEL_TEXT_VARIABLES:
        value = variables.get(name)
        for text in value if isinstance(value, (list, tuple)) else [value]:
            total += len(text) if isinstance(text, str) else 0
    return total


def too_large_for_the_judge(size: int) -> Unaskable:
    return Unaskable(f"the model's text ({size:,} characters) is too large for a judge prompt "
                     f"(at most {MAX_JUDGED_CHARS:,}): not judged")


def ask_judge(requests: "Sequence[Request | Unaskable]", parse: JudgeParser | Sequence[JudgeParser],
              retries: int) -> Generator[list[Request], list[Reply], list[Verdict]]:
    """Sub-dialogue (use with ``yield from``): returns one :class:`Verdict` per request.

    ``parse`` is one parser for every request, or one per request (when the
    required fields differ, e.g. MMRC's per-ability verdicts). An :class:`Unaskable` is not
    sent: its verdict is a judge failure with its reason.
    """
    parsers = [parse] * len(requests) if callable(parse) else list(parse)
    if len(parsers) != len(requests):
        raise ValueError(f"ask_judge: {len(parsers)} parsers for {len(requests)} requests")
    verdicts = [Verdict(fields=None, error=r.reason) if isinstance(r, Unaskable)
                else Verdict(fields=None, prompt=[m.to_json() for m in r.messages]) for r in requests]
    pending = [i for i, r in enumerate(requests) if not isinstance(r, Unaskable)]
    for attempt in range(retries + 1):
        if not pending:
            break
        replies = yield [replace(_asked(requests[i]), attempt=attempt, target="judge") for i in pending]
        still: list[int] = []
        for i, reply in zip(pending, replies):
            v = verdicts[i]
            v.replies.append(reply.text)
            if not reply.ok:
                v.error = reply.error or "judge request failed"
                continue  # the backend already retried transport errors
            parsed = parsers[i](reply.text or "")
            if parsed is None:
                v.error = UNPARSED_VERDICT
                still.append(i)
            else:
                v.fields, v.error = parsed, None
        pending = still
    return verdicts


def judge_request(state: "DocumentState", *, position: int, **variables: Any) -> Request:
    """One judge call built from the task's ``judge`` settings: the ``prompt_file`` text
    (verbatim), then the rendered ``prompt`` template; with ``images: all`` every image of the
    document follows the text, in the document's order (as the official MMDU judge sends them)."""
    judge = state.config.judge
    if judge is None:
        raise ValueError(f"task {state.task!r} has no judge")
    text = state.judge_prefix + (state.render(judge.prompt, "judge.prompt", **variables) if judge.prompt else "")
    parts: list[Text | Image] = [Text(text)]
    if judge.images == "all":
        parts.extend(state.doc.images)
    messages: list[Message] = []
    if judge.system:
        messages.append(Message.text("system", judge.system))
    messages.append(Message("user", tuple(parts)))
    space = state.rendered_space(judge_space(state, **variables), "judge.space", **variables)
    return Request(messages=tuple(messages), generation=judge.generation, target="judge",
                   task=state.task, doc_id=state.doc.doc_id, position=position, meta={"answer_space": space})


def judge_space(state: "DocumentState", **variables: Any) -> dict[str, Any]:
    """What a valid verdict looks like, for the ``random`` judge: the task's ``judge.space``; when
    it is not given, the verdict parser's own (its fields and ranges: the task need not restate
    them); a ``{kind: verdict}`` that names no ``fields`` takes the parser's fields."""
    judge = state.config.judge
    assert judge is not None
    declared = judge.space if "space" in judge.model_fields_set else None
    own = state.judge_parser.space(state.variables(**variables)) if state.judge_parser is not None else None
    if declared is None:
        return own if own is not None else judge.space
    if own is not None and declared.get("kind") == "verdict" == own.get("kind"):
        return {**own, **declared}
    return declared


def _asked(request: "Request | Unaskable") -> Request:
    assert isinstance(request, Request)
    return request


def judge_call(state: "DocumentState", *, position: int, **variables: Any) -> tuple["Request | Unaskable", JudgeParser]:
    """A judge request (see :func:`judge_request`) and the parser of its reply: the task's
    verdict parser (``judge.parser``), given the variables the prompt was rendered with. When
    the model's text is over :data:`MAX_JUDGED_CHARS`, an :class:`Unaskable` instead."""
    if state.judge_parser is None:
        raise ValueError(f"task {state.task!r} has no judge")
    size = model_text_size(variables)
    if size > MAX_JUDGED_CHARS:
        return too_large_for_the_judge(size), lambda text: None
    request = judge_request(state, position=position, **variables)
    context = state.variables(**variables)
    bound = state.judge_parser

    def parse(text: str) -> dict[str, Any] | None:
        # the same rule for every verdict parser: the judge's own text, one verdict (see sole_verdict)
        return sole_verdict(bound, text, context)

    return request, parse


def verdict_metrics(state: "DocumentState", verdicts: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Per-sample metrics from valid verdicts: for each verdict field named in ``judge.metrics``
    (every numeric field when it names none), the mean over ``verdicts`` times
    ``judge.report_factor``. Fields that are not numbers are left out."""
    judge = state.config.judge
    if judge is None:
        return {}
    valid = list(verdicts)
    if not valid:
        return {}
    names = judge.metrics if judge.metrics is not None else [n for n, v in valid[0].items() if is_number(v)]
    out: dict[str, float] = {}
    for name in names:
        values = [v[name] for v in valid if is_number(v.get(name))]
        if values:
            out[name] = judge.report_factor * sum(values) / len(values)
    return out
