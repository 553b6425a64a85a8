"""The MMRC conversation record (the local format of shared/specs/mmrc.md), validated.

A record holds the user turns (each with its images and, optionally, the
original assistant reply) and the evaluation questions. Image numbers in
questions are 1-based over all images of the conversation, in turn order.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mmtasks.documents.dataset import Document
from mmtasks.errors import DataError

Ability = Literal["IE", "CR", "IU", "IM", "MR", "AR"]
ABILITIES: tuple[Ability, ...] = ("IE", "CR", "IU", "IM", "MR", "AR")


class _Record(BaseModel):
    # Unknown keys are kept (the official data may carry more), never rejected.
    model_config = ConfigDict(extra="allow", frozen=True)


class Turn(_Record):
    user: str
    """The user's message text ("" when the turn is images only)."""
    images: list[str] = Field(default_factory=list)
    """Image paths relative to the data folder, in the order shown."""
    assistant: str | None = None
    """The reply recorded in the original conversation (used by ``history: reference``)."""


class Question(_Record):
    ability: Ability
    format: Literal["open", "choice", "tf"] = "open"
    question: str
    answer: str
    """Reference answer: free text, the option letter (choice) or ``true``/``false`` (tf)."""
    options: dict[str, str] | None = None
    items: list[str] | None = None
    """IE: the facts a correct answer lists (label items)."""
    images: list[int] | None = None
    """IM: 1-based numbers of the images that belong to the correct answer."""
    refuse: bool | None = None
    """AR: true when the history lacks the answer and the model should decline."""
    updates: int | None = None
    """IU: how many times the asked-about information was updated in the conversation."""

    @field_validator("ability", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.upper() if isinstance(v, str) else v

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_text(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return "true" if v else "false"
        return v

    @model_validator(mode="after")
    def _format_fields(self) -> "Question":
        if self.format == "choice":
            if not self.options:
                raise ValueError("a choice question needs options")
            if self.answer.strip() not in self.options:
                raise ValueError(f"the answer {self.answer!r} is not one of the options {sorted(self.options)}")
        if self.format == "tf" and self.answer.strip().lower() not in ("true", "false"):
            raise ValueError(f"a tf answer must be true or false, got {self.answer!r}")
        return self

    @property
    def gold(self) -> str:
        """The reference answer as shown to the judge (a choice answer with its option text)."""
        if self.format == "choice" and self.options:
            return f"{self.answer.strip()}. {self.options[self.answer.strip()]}"
        return self.answer.strip()


class Conversation(_Record):
    turns: list[Turn] = Field(min_length=1)
    questions: list[Question] = Field(min_length=1)
    category: str | None = None

    @property
    def n_images(self) -> int:
        return sum(len(t.images) for t in self.turns)

    def image_numbers(self) -> list[list[int]]:
        """Per turn, the 0-based global indices of its images."""
        out, offset = [], 0
        for t in self.turns:
            out.append(list(range(offset, offset + len(t.images))))
            offset += len(t.images)
        return out


def conversation_of(doc: Document) -> Conversation:
    """Validate a document as an MMRC conversation; errors name the document and the field."""
    try:
        conv = Conversation.model_validate(doc.record)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or None
        raise DataError(err["msg"].removeprefix("Value error, "), file=doc.source, doc_id=doc.doc_id, field=loc) from None
    for qi, q in enumerate(conv.questions):
        bad = [n for n in q.images or [] if not 1 <= n <= conv.n_images]
        if bad:
            raise DataError(f"image numbers {bad} are out of range: the conversation has {conv.n_images} images",
                            file=doc.source, doc_id=doc.doc_id, field=f"questions.{qi}.images")
    return conv
