"""Replay then probe: a recorded conversation is replayed to the model, then questions
about it are asked against the history it built (MMRC's protocol, written generically).

The record (the local format; a task's ``dataset.adapter`` may convert and check a
benchmark's own)::

    {"turns": [{"user": str, "images": [path, ...], "assistant": str | null}, ...],
     "questions": [{...}, ...]}

A question is any object; the task's templates and plugins read its fields.

1. Replay: the user turns are fed in order, each with its own images; the model
   answers every turn and its replies stay in the history (``history: self``),
   or the recorded replies are used without model calls (``history: reference``).
2. Probe: after the conversation every question (those matching
   ``protocol_args.select``) is asked against that history: as branches of the
   same history, all in one wave (``probe: independent``), or one after another,
   each answer kept (``probe: cumulative``), or one after another with the questions
   kept and the answers not (``probe: algorithm1``, MMRC's Algorithm 1 to the letter).
3. Score: each answer is parsed with the task's parser (``answer.parser``, given
   the question as its record) and scored by the task's metric functions against
   the question's ``answer_field``; an answer that does not parse is counted as
   unparsed. Then (unless ``--predict-only``) each answered question goes to the
   judge (all of a conversation's in one wave), with re-asks; the verdict parser
   (``judge.parser``) sees the question among its variables, so it may require
   different fields for different questions.

Each question's record in ``Sample.extra["questions"]`` holds the question's own
fields and ``index``, ``reference``, ``response``, ``parsed``, ``metrics``,
``verdict``, ``judge_failed``, ``judge_error`` (these win over question fields of
the same name). The sample's metrics are the means over its questions of the
per-question metrics and of the verdict fields named in ``judge.metrics`` (times
``judge.report_factor``); a benchmark's aggregator reads the question records.

With the note-taking strategy a note taker updates a JSON note after every user
turn (in the same wave as the model's reply to that turn) and each probe shows
the final note beside the history.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.config.task_config import AnswerSpace
from mmtasks.core.conversation import Message
from mmtasks.core.request import FailureKind, Reply, Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.judging import MAX_JUDGED_CHARS, ask_judge, judge_call, too_large_for_the_judge, verdict_metrics
from mmtasks.dialogues.notetaking import NoteBook, NoteSettings, note_text
from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.dialogues.state import DocumentState
from mmtasks.errors import ConfigError, DataError

if TYPE_CHECKING:
    from mmtasks.documents.dataset import Document

Waves = Generator[list[Request], list[Reply], Any]


class ReplayProbeArgs(BaseModel):
    """``protocol_args`` of a replay_probe task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    history: Literal["self", "reference"] = "self"
    """``self``: the model answers every turn and its replies are the history; ``reference``:
    the recorded ``assistant`` replies are (no model calls during the replay)."""
    probe: Literal["independent", "cumulative", "algorithm1"] = "independent"
    """How the questions are asked after the replay. ``independent``: each question is its own
    branch of the replayed history (all in one wave). ``cumulative``: one after another, each
    question and the model's answer to it kept in the history of the next. ``algorithm1``: MMRC's
    Algorithm 1 (Appendix K) to the letter: ``history = append(Q_i); answer = Chat(B, history)``,
    so the questions accumulate in the history but the answers are NOT appended (the k-th request
    ends with k consecutive user messages); a failed answer does not stop the later questions."""
    truncate: Literal["none", "oldest_turns"] = "none"
    """When a request does not fit the model's context (the backend fails it as
    ``context_overflow``): ``none``, a counted failure; ``oldest_turns`` (opt-in, ``--truncate
    oldest_turns``), it is sent again without the oldest exchange of its history (a user message
    and what follows it up to the next user message), then the next oldest, until it fits or
    only its last message is left. ``Sample.extra["dropped_turns"]`` maps each such request
    ("turn 7", "question 3") to the number of exchanges dropped."""
    select: dict[str, list[Any]] = Field(default_factory=dict)
    """Ask only the questions whose fields have one of the listed values
    (``{ability: [AR]}``: a per-ability variant); empty: every question."""
    probe_prompt: str
    """User message template of a question. Variables: ``question`` (the question record)
    and ``note`` (the note as JSON text under the note-taking strategy, else None)."""
    reference: str = "{{ question.answer }}"
    """Template of the reference answer (shown to the judge as ``reference``, and the
    sample's target). Variable: ``question``."""
    answer_field: str = "answer"
    """The question field the metric functions compare the parsed answer with."""
    group_field: str | None = None
    """A question field that groups questions (MMRC: ``ability``): each judge entry of the sample
    carries its value as ``group``, so that ``mmtasks judge agreement`` reports per group."""
    probe_space: AnswerSpace = Field(default_factory=lambda: {"kind": "text"})
    """What a valid answer looks like, for the ``random`` baseline (see ``answer.space``);
    string values are templates with the variable ``question``."""
    judge_conversation: str = ""
    """Template of the conversation as text for the judge prompt (``conversation``).
    Variable ``turns``: ``number``, ``user``, ``images`` (1-based numbers), ``assistant``."""
    notes: NoteSettings | None = None
    """How the note taker is asked (needed by ``--strategy notetaking``)."""


def probe_args(state: DocumentState) -> ReplayProbeArgs:
    args = state.args
    assert isinstance(args, ReplayProbeArgs)
    return args


class ReplayTurn(BaseModel):
    """One user turn of the recorded conversation (other keys are kept)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    user: str
    """The user's message text ("" when the turn is images only)."""
    images: list[Any] = Field(default_factory=list)
    """The turn's images (paths relative to the data folder), in the order shown."""
    assistant: str | None = None
    """The reply recorded in the original conversation (used by ``history: reference``)."""


class ReplayRecord(BaseModel):
    """The record a replay_probe task reads (other keys are kept)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    turns: list[ReplayTurn] = Field(min_length=1)
    questions: list[dict[str, Any]] = Field(min_length=1)

    def image_numbers(self) -> list[list[int]]:
        """Per turn, the 0-based global indices of its images."""
        out, offset = [], 0
        for t in self.turns:
            out.append(list(range(offset, offset + len(t.images))))
            offset += len(t.images)
        return out


def record_of(doc: "Document") -> ReplayRecord:
    """The document as a replay record; errors name the document and the field."""
    try:
        return ReplayRecord.model_validate(doc.record)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or None
        raise DataError(err["msg"].removeprefix("Value error, "), file=doc.source, doc_id=doc.doc_id, field=loc) from None


class _Run:
    """One conversation's state: its history, the requests made, the sample being filled."""

    def __init__(self, state: DocumentState, ctx: DialogueContext) -> None:
        if state.image_mode == "combined":
            raise ConfigError("replay_probe attaches each turn's own images: --image-mode combined is not supported",
                              file=state.file, field="--image-mode")
        doc = state.doc
        self.state, self.doc, self.ctx = state, doc, ctx
        self.args = probe_args(state)
        self.conv = record_of(doc)
        if self.args.history == "reference":
            missing = [i for i, t in enumerate(self.conv.turns) if t.assistant is None]
            if missing:
                raise DataError("history: reference needs the recorded assistant reply of every turn",
                                file=doc.source, doc_id=doc.doc_id, field=f"turns.{missing[0]}.assistant")
        self.notes: NoteBook | None = None
        if ctx.notetaking:
            if self.args.notes is None:
                raise ConfigError("--strategy notetaking needs protocol_args.notes (the note taker's prompt)",
                                  file=state.file, field="protocol_args.notes")
            self.notes = NoteBook.start(self.args.notes)
        self.questions = [q for q in self.conv.questions
                          if all(q.get(name) in values for name, values in self.args.select.items())]
        self.turn_images = self.conv.image_numbers()
        self.history: list[Message] = []
        system = state.system_prompt
        if system:
            self.history.append(Message.text("system", system))
        self.replies: list[str] = []
        #: request ("turn 7", "question 3") -> history exchanges dropped to fit (truncate: oldest_turns)
        self.dropped: dict[str, int] = {}
        #: "question k" -> the reasoning split from that probe's reply (shown beside its answer)
        self.reasoning: dict[str, str] = {}
        #: model requests made so far (replies are recorded in the same order)
        self.positions = 0
        self.sample = Sample(task=state.task, doc_id=doc.doc_id, doc_index=doc.index,
                             breakdown=state.breakdown)
        self.references = [state.render(self.args.reference, "protocol_args.reference", question=q) for q in self.questions]
        self.sample.target = list(self.references)

    # -- requests ---------------------------------------------------------
    def model_request(self, messages: list[Message], space: dict[str, Any]) -> Request:
        """The next model request; positions number the model's requests in order (for ``replay:``)."""
        self.positions += 1
        return Request(messages=tuple(messages), generation=self.state.config.generation, target="model",
                       task=self.state.task, doc_id=self.doc.doc_id, position=self.positions - 1,
                       meta={"answer_space": space})

    def fit(self, request: Request, reply: Reply, what: str) -> Generator[list[Request], list[Reply], Reply]:
        """``reply``, or with ``truncate: oldest_turns`` and a context overflow, the reply to the
        request sent again without its oldest exchanges (same position: ``replay:`` still matches)."""
        messages, dropped = list(request.messages), 0
        while self.args.truncate == "oldest_turns" and reply.kind is FailureKind.CONTEXT_OVERFLOW:
            cut = drop_oldest_exchange(messages)
            if cut is None:
                break
            messages, dropped = cut, dropped + 1
            (reply,) = yield [dataclasses.replace(request, messages=tuple(messages))]
        if dropped:
            self.dropped[what] = dropped
        return reply

    def turn_message(self, i: int) -> Message:
        turn = self.conv.turns[i]
        return Message("user", self.state.parts(self.state.config.prompt.user, "prompt.user",
                                                turn=turn.model_dump(), turn_number=i + 1, turn_images=self.turn_images[i]))

    def question_message(self, q: dict[str, Any], with_note: bool) -> Message:
        note = note_text(self.notes.note) if self.notes is not None and with_note else None
        text = self.state.render(self.args.probe_prompt, "protocol_args.probe_prompt", question=q, note=note)
        return Message.text("user", text.strip("\n"))

    def record_reply(self, reply: Reply, what: str) -> str | None:
        self.sample.add_reply(reply)
        if reply.reasoning:
            self.reasoning[what] = reply.reasoning
        if not reply.ok:
            self.sample.add_failure(f"{what}: {reply.error or 'request failed'}", reply.kind)
        return reply.text

    # -- phases -------------------------------------------------------------
    def replay(self) -> Waves:
        """Feed the user turns; returns False when a model request failed (the history is broken)."""
        for i, turn in enumerate(self.conv.turns):
            self.history.append(self.turn_message(i))
            wave: list[Request] = []
            if self.args.history == "self":
                wave.append(self.model_request(self.history, {"kind": "text"}))
            if self.notes is not None:
                wave.append(self.notes.request(self.state, turn.model_dump(), i + 1, self.turn_images[i]))
            replies = (yield wave) if wave else []
            if self.notes is not None:
                self.notes.update(i + 1, replies[-1])
            if self.args.history == "self":
                reply = yield from self.fit(wave[0], replies[0], f"turn {i + 1}")
                answer = self.record_reply(reply, f"turn {i + 1}")
                if answer is None:
                    return False
            else:
                answer = turn.assistant or ""
            self.replies.append(answer)
            self.history.append(Message.text("assistant", answer))
        return True

    def probe(self) -> Waves:
        """Ask the questions; returns one answer per question (None: not answered)."""
        if self.args.probe == "independent":
            wave = [self.model_request([*self.history, self.question_message(q, True)], self.space(q)) for q in self.questions]
            replies = list((yield wave) if wave else [])
            for k, r in enumerate(replies):  # only overflowed probes are sent again, one at a time
                replies[k] = yield from self.fit(wave[k], r, f"question {k + 1}")
            return [self.record_reply(r, f"question {k + 1}") for k, r in enumerate(replies)]
        answers: list[str | None] = [None] * len(self.questions)
        thread = list(self.history)
        if self.args.probe == "algorithm1":
            for k, q in enumerate(self.questions):
                request = self.model_request([*thread, self.question_message(q, True)], self.space(q))
                (reply,) = yield [request]
                reply = yield from self.fit(request, reply, f"question {k + 1}")
                answers[k] = self.record_reply(reply, f"question {k + 1}")
                thread.append(self.question_message(q, False))  # the question stays, its answer does not
            return answers
        for k, q in enumerate(self.questions):
            request = self.model_request([*thread, self.question_message(q, True)], self.space(q))
            (reply,) = yield [request]
            reply = yield from self.fit(request, reply, f"question {k + 1}")
            answers[k] = self.record_reply(reply, f"question {k + 1}")
            if answers[k] is None:
                break  # the thread is broken: later questions stay unanswered
            thread += [self.question_message(q, False), Message.text("assistant", answers[k] or "")]
        return answers

    def space(self, q: dict[str, Any]) -> dict[str, Any]:
        """The answer space of question ``q``, for the random baseline."""
        return self.state.rendered_space(self.args.probe_space, "protocol_args.probe_space", question=q)

    def judge(self, answered: list[tuple[int, dict[str, Any], str]]) -> Waves:
        """All of the conversation's judge calls in one wave."""
        cfg = self.state.config.judge
        assert cfg is not None
        shown = sum(len(r) for r in self.replies) if self.args.judge_conversation else 0
        if shown > MAX_JUDGED_CHARS:  # the conversation alone is too large: no call is made
            return (yield from ask_judge([too_large_for_the_judge(shown)] * len(answered), lambda text: None, cfg.retries))
        conversation = self.conversation_text()
        # model_turns: the model's earlier turns the conversation shows, which the judge may quote
        # (never read as its verdict: see mmtasks.scoring.verdicts.judge_own_text)
        model_turns = list(self.replies) if conversation else []
        calls = [judge_call(self.state, position=k, question=q, reference=self.references[k],
                            response=answer, conversation=conversation, model_turns=model_turns)
                 for k, q, answer in answered]
        return (yield from ask_judge([r for r, _ in calls], [p for _, p in calls], cfg.retries))

    def conversation_text(self) -> str:
        if not self.args.judge_conversation:
            return ""
        turns = [{"number": i + 1, "user": t.user, "images": [n + 1 for n in self.turn_images[i]],
                  "assistant": self.replies[i] if i < len(self.replies) else None}
                 for i, t in enumerate(self.conv.turns)]
        return self.state.render(self.args.judge_conversation, "protocol_args.judge_conversation", turns=turns).strip("\n")


    def question_record(self, k: int, answer: str | None) -> dict[str, Any]:
        """Question ``k``'s record: its fields, the answer parsed and scored by the task's metric functions."""
        q = self.questions[k]
        parsed: Any = None
        metrics: dict[str, float | None] = {}
        if answer is not None:
            parsed = self.state.parser(answer, q)
            target = q.get(self.args.answer_field)
            metrics = {name: fn(parsed, target, q) for name, fn in self.state.metric_fns.items()}
        record = {**q, "index": k, "reference": self.references[k], "response": answer, "parsed": parsed,
                  "metrics": metrics, "verdict": None, "judge_failed": False, "judge_error": None}
        if f"question {k + 1}" in self.reasoning:
            record["reasoning"] = self.reasoning[f"question {k + 1}"]
        return record


def drop_oldest_exchange(messages: list[Message]) -> list[Message] | None:
    """``messages`` without the first user message and what follows it up to the next user
    message (system messages kept); None when no user message would be left after it."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if len(users) < 2:
        return None
    return [*messages[:users[0]], *messages[users[1]:]]


def _means(records: list[dict[str, Any]], judged: list[dict[str, Any]], state: DocumentState) -> dict[str, float | None]:
    """The conversation's means: of each per-question metric, and of the judged verdict fields."""
    values: dict[str, list[float]] = {}
    for rec in records:
        for name, v in rec["metrics"].items():
            if v is not None:
                values.setdefault(name, []).append(float(v))
    out: dict[str, float | None] = {name: sum(vs) / len(vs) for name, vs in values.items()}
    out.update(verdict_metrics(state, judged))
    return out


@protocol("replay_probe", args=ReplayProbeArgs, uses_judge=True)
def replay_probe(state: DocumentState, ctx: DialogueContext) -> Dialogue:
    run = _Run(state, ctx)
    sample = run.sample
    replayed = yield from run.replay()
    sample.prompt = [m.to_json() for m in run.history]
    answers: list[str | None] = (yield from run.probe()) if replayed else [None] * len(run.questions)
    records = [run.question_record(k, a) for k, a in enumerate(answers)]
    sample.unparsed = sum(1 for rec in records if rec["response"] is not None and rec["parsed"] is None)
    if state.config.judge is not None and ctx.has_judge and not ctx.predict_only:
        answered = [(k, q, a) for k, (q, a) in enumerate(zip(run.questions, answers)) if a is not None]
        verdicts = yield from run.judge(answered)
        for (k, _, _), v in zip(answered, verdicts):
            records[k].update(verdict=v.fields, judge_failed=not v.ok, judge_error=v.error)
            group = run.questions[k].get(run.args.group_field) if run.args.group_field else None
            sample.judge.append({"question": k, **({"group": group} if group is not None else {}), **v.to_json()})
        sample.judge_failures = sum(1 for v in verdicts if not v.ok)
    sample.metrics = _means(records, [r["verdict"] for r in records if r["verdict"] is not None], state)
    sample.extra = {
        "history": run.args.history, "probe": run.args.probe, "n_turns": len(run.conv.turns),
        "replayed": replayed, "questions": records,
    }
    if run.dropped:
        sample.extra["dropped_turns"] = run.dropped
    if run.notes is not None:
        sample.extra.update(notes=run.notes.log, final_note=run.notes.note,
                            note_unparsed=run.notes.unparsed, note_failures=run.notes.request_failures)
        for e in run.notes.log:
            if e["error"] and e["reply"] is None:
                sample.add_failure(f"note after turn {e['turn']}: {e['error']}", None)
    return sample
