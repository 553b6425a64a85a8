"""The note-taking strategy (MMRC paper section 5, Algorithm 1).

A note taker A (any model; by default the model under test) keeps a JSON note
of key user facts and preferences: after each user turn T_i it rewrites the
note from T_i and the current note. The model under test then answers each
evaluation question with the note beside the history. This module holds the
note and its history; the protocol decides when to ask.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from mmtasks.core.conversation import Message
from mmtasks.core.request import GenerationConfig, Reply, Request
from mmtasks.scoring.json_reply import last_json_object

if TYPE_CHECKING:
    from mmtasks.dialogues.state import DocumentState


class NoteSettings(BaseModel):
    """``protocol_args.notes`` of a task: how the note taker is asked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: str
    """User message template. Variables: ``note`` (the current note as JSON text),
    ``turn`` (the user turn: ``user``, ``images``), ``turn_number`` (1-based) and
    ``turn_images`` (0-based indices for ``{{ image(i) }}``)."""
    system: str | None = None
    generation: GenerationConfig = Field(default_factory=lambda: GenerationConfig(max_new_tokens=1024))
    initial: dict[str, Any] = Field(default_factory=dict)
    """The note before the first turn (Algorithm 1: ``Note = {}``)."""


def note_text(note: dict[str, Any]) -> str:
    return json.dumps(note, ensure_ascii=False, indent=1)


@dataclass
class NoteBook:
    """The current note of one conversation and every version of it."""

    settings: NoteSettings
    note: dict[str, Any] = field(default_factory=dict)
    #: one entry per update: turn, the note after it, the raw reply, the error if it was kept
    log: list[dict[str, Any]] = field(default_factory=list)
    request_failures: int = 0
    unparsed: int = 0

    @classmethod
    def start(cls, settings: NoteSettings) -> "NoteBook":
        return cls(settings=settings, note=dict(settings.initial))

    def request(self, state: "DocumentState", turn: dict[str, Any], turn_number: int, turn_images: list[int]) -> Request:
        """The note taker's request after user turn ``turn_number`` (sees T_i and the current note only)."""
        parts = state.parts(self.settings.prompt, "protocol_args.notes.prompt", note=note_text(self.note),
                           turn=turn, turn_number=turn_number, turn_images=turn_images)
        messages = [Message.text("system", self.settings.system)] if self.settings.system else []
        messages.append(Message("user", parts))
        return Request(messages=tuple(messages), generation=self.settings.generation, target="notetaker",
                       task=state.task, doc_id=state.doc.doc_id, position=turn_number - 1,
                       meta={"answer_space": {"kind": "text"}})

    def update(self, turn_number: int, reply: Reply) -> None:
        """Take the new note from the reply; keep the previous one when it failed or did not parse."""
        error: str | None = None
        if not reply.ok:
            error = reply.error or "note request failed"
            self.request_failures += 1
        else:
            parsed = last_json_object(reply.text or "")
            if parsed is None:
                error = "note reply holds no JSON object; previous note kept"
                self.unparsed += 1
            else:
                self.note = parsed
        self.log.append({"turn": turn_number, "note": self.note, "reply": reply.text, "error": error})
