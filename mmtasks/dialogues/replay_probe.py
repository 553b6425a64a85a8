"""Replay then probe (MMRC).

1. Replay: the user turns are fed in order, each with its own images; the model
   answers every turn and its replies stay in the history (``history: self``,
   paper 3.1), or the recorded replies are used without model calls
   (``history: reference``).
2. Probe: after the conversation every evaluation question is asked against
   that history: as branches of the same history, all in one wave
   (``probe: independent``), or one after another, each answer kept
   (``probe: cumulative``, Algorithm 1).
3. Judge: each answered question goes to the judge (all of a conversation's in
   one wave), with re-asks; choice and true/false answers are also exact-matched.

With the note-taking strategy a note taker updates a JSON note after every user
turn (in the same wave as the model's reply to that turn) and each probe shows
the final note beside the history.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mmtasks.core.conversation import Message
from mmtasks.dialogues.judging import ask_judge, judge_request
from mmtasks.dialogues.notetaking import NoteBook, NoteSettings, note_text
from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.documents.mmrc_record import ABILITIES, Ability, Conversation, Question, conversation_of
from mmtasks.errors import ConfigError, DataError
from mmtasks.core.request import Reply, Request
from mmtasks.scoring.mmrc import doc_metrics
from mmtasks.scoring.mmrc_parsers import exact_match, verdict_parser

if TYPE_CHECKING:
    from mmtasks.documents.dataset import Document
    from mmtasks.task import Task

Waves = Generator[list[Request], list[Reply], Any]


class ReplayProbeArgs(BaseModel):
    """``protocol_args`` of a replay_probe task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    history: Literal["self", "reference"] = "self"
    """``self``: the model answers every turn and its replies are the history; ``reference``:
    the recorded ``assistant`` replies are (no model calls during the replay)."""
    probe: Literal["independent", "cumulative"] = "independent"
    abilities: list[Ability] = Field(default_factory=lambda: list(ABILITIES))
    """The abilities whose questions are asked (per-ability variants)."""
    probe_prompt: str
    """User message template of an evaluation question. Variables: ``question`` (the
    question record: ``question``, ``format``, ``options`` ...) and ``note`` (the note as
    JSON text under the note-taking strategy, else None)."""
    judge_conversation: str = ""
    """Template of the conversation as text for the judge prompt (``conversation``).
    Variable ``turns``: ``number``, ``user``, ``images`` (1-based numbers), ``assistant``."""
    notes: NoteSettings | None = None
    """How the note taker is asked (needed by ``--strategy notetaking``)."""


def probe_args(task: "Task") -> ReplayProbeArgs:
    args = task.args
    assert isinstance(args, ReplayProbeArgs)
    return args


def _answer_space(q: Question) -> dict[str, Any]:
    """What a valid answer looks like, for the ``random`` baseline."""
    if q.format == "choice" and q.options:
        return {"kind": "choice", "choices": list(q.options)}
    if q.format == "tf":
        return {"kind": "choice", "choices": ["true", "false"]}
    return {"kind": "text"}


class _Run:
    """One conversation's state: its history, the requests made, the sample being filled."""

    def __init__(self, task: "Task", doc: "Document", ctx: DialogueContext) -> None:
        if task.image_mode == "combined":
            raise ConfigError("replay_probe attaches each turn's own images: --image-mode combined is not supported",
                              file=task.file, field="--image-mode")
        self.task, self.doc, self.ctx = task, doc, ctx
        self.args = probe_args(task)
        self.conv: Conversation = conversation_of(doc)
        if self.args.history == "reference":
            missing = [i for i, t in enumerate(self.conv.turns) if t.assistant is None]
            if missing:
                raise DataError("history: reference needs the recorded assistant reply of every turn",
                                file=doc.source, doc_id=doc.doc_id, field=f"turns.{missing[0]}.assistant")
        self.notes: NoteBook | None = None
        if ctx.notetaking:
            if self.args.notes is None:
                raise ConfigError("--strategy notetaking needs protocol_args.notes (the note taker's prompt)",
                                  file=task.file, field="protocol_args.notes")
            self.notes = NoteBook.start(self.args.notes)
        self.questions = [q for q in self.conv.questions if q.ability in self.args.abilities]
        self.turn_images = self.conv.image_numbers()
        self.history: list[Message] = []
        if task.config.prompt.system:
            self.history.append(Message.text("system", task.render(task.config.prompt.system, doc, "prompt.system")))
        self.replies: list[str] = []
        #: model requests made so far (replies are recorded in the same order)
        self.positions = 0
        self.sample = Sample(task=task.name, doc_id=doc.doc_id, doc_index=doc.index,
                             target=[q.gold for q in self.questions], breakdown=task.breakdown_values(doc))

    # -- requests ---------------------------------------------------------
    def model_request(self, messages: list[Message], space: dict[str, Any]) -> Request:
        """The next model request; positions number the model's requests in order (for ``replay:``)."""
        self.positions += 1
        return Request(messages=tuple(messages), generation=self.task.config.generation, target="model",
                       task=self.task.name, doc_id=self.doc.doc_id, position=self.positions - 1,
                       meta={"answer_space": space})

    def turn_message(self, i: int) -> Message:
        turn = self.conv.turns[i]
        return Message("user", self.task.parts(self.task.config.prompt.user, self.doc, "prompt.user",
                                               turn=turn.model_dump(), turn_number=i + 1, turn_images=self.turn_images[i]))

    def question_message(self, q: Question, with_note: bool) -> Message:
        note = note_text(self.notes.note) if self.notes is not None and with_note else None
        text = self.task.render(self.args.probe_prompt, self.doc, "protocol_args.probe_prompt",
                                question=q.model_dump(), note=note)
        return Message.text("user", text.strip("\n"))

    def record_reply(self, reply: Reply, what: str) -> str | None:
        self.sample.responses.append(reply.text)
        if not reply.ok:
            self.sample.failures.append(f"{what}: {reply.error or 'request failed'}")
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
                wave.append(self.notes.request(self.task, self.doc, turn.model_dump(), i + 1, self.turn_images[i]))
            replies = (yield wave) if wave else []
            if self.notes is not None:
                self.notes.update(i + 1, replies[-1])
            if self.args.history == "self":
                answer = self.record_reply(replies[0], f"turn {i + 1}")
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
            wave = [self.model_request([*self.history, self.question_message(q, True)], _answer_space(q)) for q in self.questions]
            replies = (yield wave) if wave else []
            return [self.record_reply(r, f"question {k + 1}") for k, r in enumerate(replies)]
        answers: list[str | None] = [None] * len(self.questions)
        thread = list(self.history)
        for k, q in enumerate(self.questions):
            (reply,) = yield [self.model_request([*thread, self.question_message(q, True)], _answer_space(q))]
            answers[k] = self.record_reply(reply, f"question {k + 1}")
            if answers[k] is None:
                break  # the thread is broken: later questions stay unanswered
            thread += [self.question_message(q, False), Message.text("assistant", answers[k] or "")]
        return answers

    def judge(self, answered: list[tuple[int, Question, str]]) -> Waves:
        """All of the conversation's judge calls in one wave; each ability's verdict fields required."""
        cfg, base = self.task.config.judge, self.task.judge_parser
        assert cfg is not None and base is not None
        conversation = self.conversation_text()
        requests = [judge_request(self.task, self.doc, position=k, question=q.model_dump(), reference=q.gold,
                                  response=answer, conversation=conversation)
                    for k, q, answer in answered]
        parsers = [verdict_parser(base, q.ability) for _, q, _ in answered]
        return (yield from ask_judge(requests, parsers, cfg.retries))

    def conversation_text(self) -> str:
        if not self.args.judge_conversation:
            return ""
        turns = [{"number": i + 1, "user": t.user, "images": [n + 1 for n in self.turn_images[i]],
                  "assistant": self.replies[i] if i < len(self.replies) else None}
                 for i, t in enumerate(self.conv.turns)]
        return self.task.render(self.args.judge_conversation, self.doc, "protocol_args.judge_conversation", turns=turns).strip("\n")


def _question_record(k: int, q: Question, answer: str | None) -> dict[str, Any]:
    parsed, em = exact_match(answer, q.format, q.answer, q.options) if answer is not None else (None, None)
    return {
        "index": k, "ability": q.ability, "format": q.format, "question": q.question, "reference": q.gold,
        "response": answer, "parsed": parsed, "exact_match": em,
        "label_items": q.items, "gold_images": q.images, "refuse": q.refuse, "updates": q.updates,
        "verdict": None, "judge_failed": False, "judge_error": None,
    }


@protocol("replay_probe", args=ReplayProbeArgs, uses_judge=True)
def replay_probe(task: "Task", doc: "Document", ctx: DialogueContext) -> Dialogue:
    run = _Run(task, doc, ctx)
    sample = run.sample
    replayed = yield from run.replay()
    sample.prompt = [m.to_json() for m in run.history]
    answers: list[str | None] = (yield from run.probe()) if replayed else [None] * len(run.questions)
    records = [_question_record(k, q, a) for k, (q, a) in enumerate(zip(run.questions, answers))]
    if task.config.judge is not None and ctx.has_judge and not ctx.predict_only:
        answered = [(k, q, a) for k, (q, a) in enumerate(zip(run.questions, answers)) if a is not None]
        verdicts = yield from run.judge(answered)
        for (k, _, _), v in zip(answered, verdicts):
            records[k].update(verdict=v.fields, judge_failed=not v.ok, judge_error=v.error)
            sample.judge.append({"question": k, **v.to_json()})
        sample.judge_failures = sum(1 for v in verdicts if not v.ok)
    sample.metrics = doc_metrics(records)
    sample.extra = {
        "history": run.args.history, "probe": run.args.probe, "n_turns": len(run.conv.turns),
        "replayed": replayed, "questions": records,
    }
    if run.notes is not None:
        sample.extra.update(notes=run.notes.log, final_note=run.notes.note,
                            note_unparsed=run.notes.unparsed, note_failures=run.notes.request_failures)
        sample.failures += [f"note after turn {e['turn']}: {e['error']}" for e in run.notes.log
                            if e["error"] and e["reply"] is None]
    return sample
