"""Multi-turn dialogue with the model in the loop (MMDU).

A document holds a conversation of alternating user and assistant messages
(``protocol_args.turns_field``, default ``conversations``; each item
``{"from": "user" | "assistant", "value": "..."}``). The model answers turn 1;
its reply becomes the assistant message of the history; then turn 2 is asked
with the whole history, and so on. With ``history: reference`` the recorded
assistant messages form the history instead (an ablation; the default
``self`` is the official protocol). Because the dialogue is a generator that
yields one request per turn, the scheduler sends turn k of every dialogue in
one wave.

With ``protocol_args.turns`` the turns are written in the task YAML instead: each a user message
template (and a reference template), rendered when its turn is asked with the task's variables,
``replies`` (the model's replies to the earlier turns) and ``turn`` (:func:`template_turn`), so a
follow-up can quote the model's own answer; an undefined name is a ``check`` error naming the
turn's key. Turns read from the record are sent as written (data is never a template).

Images are consumed in order across the whole dialogue: the n-th image marker
(``protocol_args.image_token``, default ``<ImageHere>``) is the document's
n-th image. Each user message becomes text, image, text, ... with the marker
replaced by the image and text pieces that are empty or only whitespace
dropped; the rest of the text is kept verbatim. With ``layout:
text_then_images`` the user message is instead the text verbatim (markers
kept) followed by the turn's images, as the MMDU authors' API scripts send it.

A turn whose request fails (after the backend's own retries) is recorded as a
request failure: it is never judged and never scored as an answer. The
dialogue goes on, with an empty assistant message standing for the missing
reply, so one failed call does not cost the remaining turns (their records say
``after_failure``). Chat templates that require alternating roles accept an
empty assistant message where they would reject two user messages in a row.

Judging (unless ``--predict-only``, and only for tasks with a ``judge``): each
answered turn is judged on its own, from the question (the raw user text with
its markers), the reference answer and the model's answer (judge prompt
variables ``question``, ``reference``, ``answer`` (without its reasoning), ``reasoning`` (the
reasoning split from it, "" when none), and ``turn``, the turn's 1-based position, with which a
prompt can show the earlier turns from ``doc``);
all of a document's judge calls go out in one wave. A reply
that cannot be parsed is re-asked ``judge.retries`` times, then recorded as a
judge failure.

Metric functions (``metrics[].function``), with no judge or beside one: each
answered turn is parsed with ``answer.parser`` (not re-asked; an unparsed turn
scores 0 and is counted) and scored against its own reference; the turn record
keeps ``parsed`` and ``metrics``, and the pair is kept for corpus metrics.
The turn records are what ``per_turn_mean`` (the protocol's default aggregator,
mmtasks/scoring/turn_aggregation.py) reads. The dialogue's own metrics
(``Sample.metrics``, for ``per_sample_mean``) are the means over its turns of
the metric functions' scores and of the verdict fields named in
``judge.metrics`` (every numeric field when it names none), times
``judge.report_factor`` (the YAML says the scale: MMDU's 0-10 scores are
reported x10).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from mmtasks.core.conversation import Image, Message, Text
from mmtasks.dialogues.judging import ask_judge, judge_call, verdict_metrics
from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.dialogues.state import DocumentState
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.errors import ConfigError, DataError, TemplateError
from mmtasks.templates import compile_template
from mmtasks.scoring.aggregation import add_corpus_pair
from mmtasks.scoring.parsers import is_guess
from mmtasks.core.request import FailureKind, Reply, Request

if TYPE_CHECKING:
    from mmtasks.documents.dataset import Document

log = logging.getLogger("mmtasks")

USER_ROLES = ("user", "human")
ASSISTANT_ROLES = ("assistant", "gpt")


@dataclass(frozen=True)
class Turn:
    """One user question of the dialogue and its reference answer."""

    question: str
    reference: str
    #: the user message as sent: text pieces and the images its markers stand for
    parts: tuple[Text | Image, ...]
    #: the images the turn's markers stand for, in order
    images: tuple[Image, ...] = ()

    def message_parts(self, layout: str) -> tuple[Text | Image, ...]:
        """``interleaved``: :attr:`parts`; ``text_then_images``: the question verbatim (markers
        kept), then the turn's images (the layout of the MMDU authors' API scripts)."""
        if layout == "text_then_images":
            return (Text(self.question), *self.images)
        return self.parts

    @property
    def n_images(self) -> int:
        return sum(1 for p in self.parts if isinstance(p, Image))


def split_question(text: str, marker: str, images: list[Image]) -> tuple[Text | Image, ...]:
    """Replace each marker with the next image of ``images`` (consumed from the front)."""
    parts: list[Text | Image] = []
    for i, piece in enumerate(text.split(marker)):
        if i > 0:
            parts.append(images.pop(0))
        if piece.strip():
            parts.append(Text(piece))
    return tuple(parts)


def read_turns(doc: "Document", field: str = "conversations", marker: str = "<ImageHere>") -> list[Turn]:
    """The document's turns, with images assigned to markers in dialogue order."""
    conv = doc.record.get(field)
    if not isinstance(conv, list) or not conv:
        raise DataError("expected a non-empty list of {from, value} messages", file=doc.source, doc_id=doc.doc_id, field=field)
    if len(conv) % 2:
        raise DataError(f"the last user message (item {len(conv) - 1}) has no reference answer", file=doc.source, doc_id=doc.doc_id, field=field)
    available = list(doc.images)
    turns: list[Turn] = []
    for i in range(0, len(conv), 2):
        question = _message(doc, field, conv, i, USER_ROLES)
        reference = _message(doc, field, conv, i + 1, ASSISTANT_ROLES)
        needed = question.count(marker)
        if needed > len(available):
            used = len(doc.images) - len(available)
            raise DataError(
                f"turn {i // 2 + 1} places {needed} image(s) after {used} earlier ones, but the record lists {len(doc.images)}",
                file=doc.source, doc_id=doc.doc_id, field=f"{field}[{i}].value",
            )
        placed = tuple(available[:needed])
        turns.append(Turn(question=question, reference=reference, parts=split_question(question, marker, available),
                          images=placed))
    if available:
        log.warning("document %r: %d image(s) listed but never placed by a %s marker", doc.doc_id, len(available), marker)
    return turns


def _message(doc: "Document", field: str, conv: list[Any], i: int, roles: tuple[str, ...]) -> str:
    item = conv[i]
    if not isinstance(item, dict) or item.get("from") not in roles or not isinstance(item.get("value"), str):
        raise DataError(f"expected {{'from': {roles[0]!r}, 'value': <text>}}, got {str(item)[:80]!r}",
                        file=doc.source, doc_id=doc.doc_id, field=f"{field}[{i}]")
    return item["value"]


class TurnTemplate(BaseModel):
    """One turn written in the task YAML (``protocol_args.turns``): its user message and
    reference answer as templates, rendered when the turn is asked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str
    """The user message: a template with the task's variables (``doc``, ``{{ image(0) }}`` ...),
    ``replies`` (the model's replies to the earlier turns, in order: ``{{ replies[0] }}``) and
    ``turn`` (this turn's 1-based position)."""
    reference: str | None = None
    """The turn's reference answer, a template with the same variables; required when the task
    has metric functions (they compare the turn's answer with it); the judge's ``reference``."""

    @field_validator("user", "reference")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                compile_template(v)
            except TemplateError as exc:
                raise ValueError(exc.message) from None
        return v


class MultiTurnArgs(BaseModel):
    """``protocol_args`` of a multi_turn task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    history: Literal["self", "reference"] = "self"
    """``self``: the model's own answers are the history; ``reference``: the recorded ones (``--history``)."""
    turns_field: str = "conversations"
    """The record field holding the alternating user/assistant turns."""
    image_token: str = "<ImageHere>"
    """The marker in a user turn where the document's next image goes."""
    truncate: Literal["none", "oldest_turns"] = "none"
    """What to do when a turn's prompt does not fit the model's context (the backend fails it as
    ``context_overflow``). ``none``: the turn is a context_overflow failure (counted in
    coverage). ``oldest_turns`` (opt-in, ``--truncate oldest_turns``): the request is sent again
    without the oldest user/assistant exchange of the history (and its images), then the next
    oldest, until it fits or only the current turn is left; the turn's record says how many
    exchanges were dropped (``dropped_turns``). The system prompt is always kept."""
    layout: Literal["interleaved", "text_then_images"] = "interleaved"
    """How a user turn is sent. ``interleaved``: text and images alternate, each image at its
    marker (markers removed). ``text_then_images``: the turn's text verbatim, markers kept, then
    the turn's images in order (how the MMDU authors' API scripts, model_generation/*_gen_ans.py,
    send a turn)."""
    turns: list[TurnTemplate] | None = None
    """The turns written in the YAML instead of read from the record (``turns_field``): each a
    user message template (a string) or ``{user: TEMPLATE, reference: TEMPLATE}``, rendered when
    its turn is asked, so a follow-up can quote the model's earlier reply (``{{ replies[0] }}``)
    and the document's fields. An undefined name is a ``check`` error naming the turn's key."""

    @field_validator("turns", mode="before")
    @classmethod
    def _plain_turns(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [{"user": t} if isinstance(t, str) else t for t in v]
        return v


def history_mode(state: DocumentState) -> str:
    args = state.args
    assert isinstance(args, MultiTurnArgs)
    return args.history


@protocol("multi_turn", args=MultiTurnArgs, uses_judge=True, default_aggregator="per_turn_mean", corpus_metrics=True)
def multi_turn(state: DocumentState, ctx: DialogueContext) -> Dialogue:
    doc = state.doc
    if state.image_mode == "combined":
        raise ConfigError("multi-turn dialogues place each image at its own marker; --image-mode combined is not supported",
                          file=state.file, field="--image-mode")
    args = state.args
    assert isinstance(args, MultiTurnArgs)
    marker = args.image_token
    recorded = read_turns(doc, args.turns_field, marker) if args.turns is None else None
    n_turns = len(recorded) if recorded is not None else len(args.turns or ())
    history = history_mode(state)
    system = state.system_prompt
    messages: list[Message] = [Message.text("system", system)] if system else []
    sample = Sample(task=state.task, doc_id=doc.doc_id, doc_index=doc.index,
                    prompt=[m.to_json() for m in messages], target=[t.reference for t in recorded or ()],
                    breakdown=state.breakdown)
    space = state.answer_space
    records: list[dict[str, Any]] = []
    turns: list[Turn] = []
    replies: list[str] = []  # the model's replies so far ("" for a failed one): the templates' ``replies``
    failed_before = False
    for k in range(n_turns):
        turn = recorded[k] if recorded is not None else template_turn(state, k, replies)
        turns.append(turn)
        user = Message("user", turn.message_parts(args.layout))
        sample.prompt.append(user.to_json())
        messages.append(user)
        request = Request(messages=tuple(messages), generation=state.config.generation, target="model",
                          task=state.task, doc_id=doc.doc_id, position=k,
                          # the random baseline answers with a span of the question
                          meta={"answer_space": {**space, "source_text": turn.question.replace(marker, " ")}})
        (reply,) = yield [request]
        dropped = 0
        while args.truncate == "oldest_turns" and _overflowed(reply) and dropped < k:
            dropped += 1  # drop the oldest exchange still in the history and ask again
            offset = 1 if system else 0
            kept = (*messages[:offset], *messages[offset + 2 * dropped:])
            request = dataclasses.replace(request, messages=kept)
            (reply,) = yield [request]
        sample.add_reply(reply)
        record: dict[str, Any] = {"turn": k + 1, "question": turn.question, "reference": turn.reference,
                                  "response": reply.text, "n_images": turn.n_images, "after_failure": failed_before,
                                  "status": "unjudged", "scores": None}
        if dropped:
            record["dropped_turns"] = dropped
            sample.extra["truncated_turns"] = sample.extra.get("truncated_turns", 0) + 1
        if not reply.ok:
            record["status"] = "request_failure"
            record["error"] = reply.error or "request failed"
            record["failure_kind"] = (reply.kind or FailureKind.REQUEST_FAILURE).value
            sample.add_failure(f"turn {k + 1}: {record['error']}", reply.kind)
            failed_before = True
        elif state.scores_answers:
            _score_turn(state, turn, reply.text or "", record, sample)
        records.append(record)
        replies.append(reply.text or "")
        answer = turn.reference if history == "reference" else (reply.text or "")
        messages.append(Message.text("assistant", answer))
    sample.target = [t.reference for t in turns]
    sample.extra["turns"] = records
    sample.extra["history"] = history
    if state.scores_answers:
        sample.parsed = [r.get("parsed") for r in records]

    if state.config.judge is not None and ctx.has_judge and not ctx.predict_only:
        yield from _judge(state, turns, records, sample)
    sample.metrics = _dialogue_metrics(state, records)
    return sample


def template_turn(state: DocumentState, k: int, replies: list[str]) -> Turn:
    """Turn ``k`` of ``protocol_args.turns`` rendered for the document, with the model's earlier
    ``replies`` (``{{ replies[0] }}``) and its position (``turn``); images where the template places
    them (``{{ image(i) }}``)."""
    args = state.args
    assert isinstance(args, MultiTurnArgs) and args.turns is not None
    template, where = args.turns[k], f"protocol_args.turns[{k}]"
    variables = {"replies": list(replies), "turn": k + 1}
    parts = state.parts(template.user, f"{where}.user", **variables)
    if template.reference is None:
        if any(m.function for m in state.config.metrics):
            raise ConfigError("this turn has no reference, but the task's metric functions compare each turn's "
                              "answer with one", file=state.file, field=f"{where}.reference",
                              hint="give the turn {user: ..., reference: ...}")
        reference = ""
    else:
        reference = state.render(template.reference, f"{where}.reference", **variables)
    text = "".join(p.text for p in parts if isinstance(p, Text))
    return Turn(question=text, reference=reference, parts=parts, images=tuple(p for p in parts if isinstance(p, Image)))


def _score_turn(state: DocumentState, turn: Turn, text: str, record: dict[str, Any], sample: Sample) -> None:
    """Parse an answered turn (``answer.parser``) and score it against the turn's reference with
    the metric functions; keep the pair for corpus metrics. An unparsed turn scores 0 and is
    counted in ``unparsed`` (it is not re-asked: the dialogue goes on); a random guess (``fallback:
random``) is scored and counted in ``guessed``."""
    parsed = state.parser(text, state.doc.record)
    record["parsed"] = parsed
    if parsed is None:
        record["unparsed"] = True
        sample.unparsed += 1
    elif is_guess(parsed):  # the choice parser's fallback: random drew it
        record["guessed"] = True
        sample.guessed += 1
    record["metrics"] = state.score(parsed, turn.reference)
    if state.corpus_metrics:
        add_corpus_pair(sample, parsed, turn.reference)


def _dialogue_metrics(state: DocumentState, records: list[dict[str, Any]]) -> dict[str, float | None]:
    """The dialogue's own mean of each metric over its turns (the metric functions' scores, and the
    verdict fields of its validly judged turns on the reported scale): what ``per_sample_mean``
    averages when a task names it; ``per_turn_mean`` reads the turn records instead."""
    out: dict[str, float | None] = {}
    for name in state.metric_fns:
        values = [r["metrics"][name] for r in records if isinstance((r.get("metrics") or {}).get(name), (int, float))]
        out[name] = sum(values) / len(values) if values else None
    out.update(verdict_metrics(state, [r["scores"] for r in records if r["status"] == "judged"]))
    return out


def _overflowed(reply: Reply) -> bool:
    """Whether the backend refused the request because the prompt does not fit the context."""
    return reply.kind is FailureKind.CONTEXT_OVERFLOW


def _judge(state: DocumentState, turns: list[Turn], records: list[dict[str, Any]], sample: Sample) -> Generator[list[Request], list[Reply], None]:
    """Judge every answered turn (one wave, re-asks included) and fill in the turn records."""
    judge = state.config.judge
    assert judge is not None
    answered = [k for k, r in enumerate(records) if r["status"] != "request_failure"]
    calls = [judge_call(state, position=k, question=turns[k].question, reference=turns[k].reference,
                        answer=records[k]["response"], reasoning=sample.reasoning[k] or "", turn=k + 1)
             for k in answered]
    verdicts = yield from ask_judge([r for r, _ in calls], [p for _, p in calls], judge.retries)
    for k, verdict in zip(answered, verdicts):
        record = records[k]
        sample.judge.append({"turn": k + 1, **verdict.to_json()})
        if verdict.ok:
            record["status"], record["scores"] = "judged", verdict.fields
        else:
            record["status"], record["judge_error"] = "judge_failure", verdict.error
            sample.judge_failures += 1

