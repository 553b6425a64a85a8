"""The MMRC record (the local format of shared/specs/mmrc.md), checked and normalised by the
dataset adapters ``mmrc`` (local files) and ``mmrc_hf`` (the Hugging Face release, PROVISIONAL).

A record holds the user turns (each with its images and, optionally, the original assistant
reply) and the evaluation questions. Image numbers in questions are 1-based over all images
of the conversation, in turn order. The adapters return the record with every question field
present (abilities in upper case, answers stripped, true/false answers as text): what the
``replay_probe`` protocol, the templates and the scoring read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mmtasks.errors import DataError
from mmtasks.registry import adapters

from .abilities import ABILITIES


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
    ability: str
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
    """AR: true when the history lacks the answer and the model should decline. An AR question
    without it expects a refusal (the paper's definition of answer refusal, section 3.1): the
    adapter fills in ``true``; ``refuse: false`` marks an AR question whose answer is in the
    history (it then does not count in RP)."""
    updates: int | None = None
    """IU: how many times the asked-about information was updated in the conversation."""

    @model_validator(mode="before")
    @classmethod
    def _ar_expects_refusal(cls, data: Any) -> Any:
        """Paper section 3.1: an AR question expects a refusal unless the record says otherwise."""
        if isinstance(data, Mapping) and str(data.get("ability", "")).upper() == "AR" and data.get("refuse") is None:
            return {**data, "refuse": True}
        return data

    @field_validator("ability", mode="before")
    @classmethod
    def _known(cls, v: Any) -> Any:
        code = v.upper() if isinstance(v, str) else v
        if code not in ABILITIES:
            raise ValueError(f"unknown ability {v!r}; expected one of {' '.join(ABILITIES)}")
        return code

    @field_validator("answer", mode="after")
    @classmethod
    def _stripped(cls, v: str) -> str:
        return v.strip()

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


class Conversation(_Record):
    turns: list[Turn] = Field(min_length=1)
    questions: list[Question] = Field(min_length=1)
    category: str | None = None

    @property
    def n_images(self) -> int:
        return sum(len(t.images) for t in self.turns)


def conversation_of(rec: Mapping[str, Any]) -> Conversation:
    """Validate a record as an MMRC conversation; errors name the document and the field."""
    doc_id = str(rec["id"]) if "id" in rec else None
    try:
        conv = Conversation.model_validate(rec)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or None
        raise DataError(err["msg"].removeprefix("Value error, "), doc_id=doc_id, field=loc) from None
    for qi, q in enumerate(conv.questions):
        bad = [n for n in q.images or [] if not 1 <= n <= conv.n_images]
        if bad:
            raise DataError(f"image numbers {bad} are out of range: the conversation has {conv.n_images} images",
                            doc_id=doc_id, field=f"questions.{qi}.images")
    return conv


@adapters.register("mmrc")
def mmrc_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A local MMRC record, checked and normalised (every question field present, abilities in
    upper case, answers stripped, true/false answers as text): what the templates and the
    scoring read."""
    return conversation_of(rec).model_dump(mode="json")


# --- the Hugging Face release (PROVISIONAL) ----------------------------------------

ID_KEYS = ("id", "conversation_id", "dialog_id", "dialogue_id", "conv_id")
TURNS_KEYS = ("turns", "conversation", "conversations", "dialogue", "dialog", "history", "messages")
QUESTIONS_KEYS = ("questions", "qa", "qas", "qa_pairs", "eval_questions", "evaluation", "evaluation_questions")
CATEGORY_KEYS = ("category", "topic", "domain")
USER_KEYS = ("user", "human", "query", "text", "content", "value")
ASSISTANT_KEYS = ("assistant", "gpt", "bot", "model", "response")
IMAGES_KEYS = ("images", "image", "image_paths", "image_path", "imgs", "img")
QUESTION_KEYS = ("question", "q", "query", "prompt")
ANSWER_KEYS = ("answer", "a", "gt", "ground_truth", "reference", "label")
ABILITY_KEYS = ("ability", "type", "task", "capability", "category", "dimension")
FORMAT_KEYS = ("format", "question_type", "qtype", "answer_type")
OPTIONS_KEYS = ("options", "choices")
ROLE_KEYS = ("role", "from", "speaker")

ABILITY_NAMES = {name: code for code, a in ABILITIES.items() for name in (code.lower(), *a.names)}
FORMAT_NAMES = {
    "open": "open", "open-ended": "open", "open question": "open", "open_question": "open",
    "choice": "choice", "multiple choice": "choice", "multiple-choice": "choice", "multiple_choice": "choice", "mcq": "choice",
    "tf": "tf", "true/false": "tf", "true_false": "tf", "true-false": "tf", "judgment": "tf", "yes/no": "tf", "boolean": "tf",
}
USER_ROLES = {"user", "human"}


def _pick(rec: dict[str, Any], keys: tuple[str, ...], where: str, doc_id: str | None, *, required: bool = True) -> Any:
    for k in keys:
        if k in rec and rec[k] is not None:
            return rec[k]
    if required:
        raise DataError(f"mmrc_hf (provisional adapter): no {where} field; looked for {', '.join(keys)}",
                        doc_id=doc_id, field=where, hint=f"the record has: {', '.join(sorted(rec)) or 'no fields'}")
    return None


def _images(raw: Any, doc_id: str | None, where: str) -> list[str]:
    items = raw if isinstance(raw, list) else [] if raw is None else [raw]
    out: list[str] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            item = item["path"]
        if not isinstance(item, str):
            raise DataError("mmrc_hf (provisional adapter): images must be paths; embedded images are not supported",
                            doc_id=doc_id, field=where)
        out.append(item)
    return out


def _turns(raw: Any, doc_id: str | None) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not raw:
        raise DataError("mmrc_hf (provisional adapter): expected a non-empty list of turns", doc_id=doc_id, field="turns")
    if all(isinstance(m, dict) and _pick(m, ROLE_KEYS, "role", doc_id, required=False) is not None for m in raw):
        return _turns_from_messages(raw, doc_id)
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict):
            raise DataError("mmrc_hf (provisional adapter): a turn must be an object", doc_id=doc_id, field=f"turns.{i}")
        turn = {"user": str(_pick(t, USER_KEYS, f"turns.{i}.user", doc_id)),
                "images": _images(_pick(t, IMAGES_KEYS, "images", doc_id, required=False), doc_id, f"turns.{i}.images")}
        reply = _pick(t, ASSISTANT_KEYS, "assistant", doc_id, required=False)
        if reply is not None:
            turn["assistant"] = str(reply)
        out.append(turn)
    return out


def _turns_from_messages(messages: list[dict[str, Any]], doc_id: str | None) -> list[dict[str, Any]]:
    """Role-tagged messages (``{"role": "user", "content": ...}`` or ShareGPT's ``from``/``value``)."""
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        role = str(_pick(m, ROLE_KEYS, f"turns.{i}.role", doc_id)).lower()
        text = str(_pick(m, ("content", "value", "text"), f"turns.{i}.content", doc_id, required=False) or "")
        if role in USER_ROLES:
            out.append({"user": text, "images": _images(_pick(m, IMAGES_KEYS, "images", doc_id, required=False), doc_id, f"turns.{i}.images")})
        elif out:
            out[-1]["assistant"] = text
    if not out:
        raise DataError("mmrc_hf (provisional adapter): the conversation has no user message", doc_id=doc_id, field="turns")
    return out


def _options(raw: Any) -> dict[str, str] | None:
    if raw is None or isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()} if raw else None
    out: dict[str, str] = {}
    for i, opt in enumerate(raw):
        m = re.match(r"^\s*\(?([A-Z])[.)：:、]\s*(.*)$", str(opt), re.S)
        letter, text = (m.group(1), m.group(2)) if m else (chr(ord("A") + i), str(opt))
        out[letter] = text.strip()
    return out


def _question(q: Any, i: int, doc_id: str | None) -> dict[str, Any]:
    where = f"questions.{i}"
    if not isinstance(q, dict):
        raise DataError("mmrc_hf (provisional adapter): a question must be an object", doc_id=doc_id, field=where)
    ability = str(_pick(q, ABILITY_KEYS, f"{where}.ability", doc_id)).strip()
    code = ABILITY_NAMES.get(ability.lower())
    if code is None:
        raise DataError(f"mmrc_hf (provisional adapter): unknown ability {ability!r}", doc_id=doc_id, field=f"{where}.ability",
                        hint=f"expected one of {' '.join(ABILITIES)} or their names")
    options = _options(_pick(q, OPTIONS_KEYS, "options", doc_id, required=False))
    fmt_raw = _pick(q, FORMAT_KEYS, f"{where}.format", doc_id, required=False)
    fmt = FORMAT_NAMES.get(str(fmt_raw).strip().lower()) if fmt_raw is not None else ("choice" if options else "open")
    if fmt is None:
        raise DataError(f"mmrc_hf (provisional adapter): unknown question format {fmt_raw!r}", doc_id=doc_id, field=f"{where}.format")
    answer = _pick(q, ANSWER_KEYS, f"{where}.answer", doc_id)
    out: dict[str, Any] = {"ability": code, "format": fmt, "question": str(_pick(q, QUESTION_KEYS, f"{where}.question", doc_id)),
                           "answer": ("true" if answer else "false") if isinstance(answer, bool) else str(answer)}
    if options:
        out["options"] = options
    for name in ("items", "images", "refuse", "updates"):
        if q.get(name) is not None:
            out[name] = q[name]
    return out


def hub_to_local(rec: dict[str, Any]) -> dict[str, Any]:
    """A Hub record mapped to the local field names (not yet checked)."""
    doc_id = _pick(rec, ID_KEYS, "id", None)
    doc_id = str(doc_id)
    questions = _pick(rec, QUESTIONS_KEYS, "questions", doc_id)
    if not isinstance(questions, list) or not questions:
        raise DataError("mmrc_hf (provisional adapter): expected a non-empty list of questions", doc_id=doc_id, field="questions")
    out: dict[str, Any] = {"id": doc_id, "turns": _turns(_pick(rec, TURNS_KEYS, "turns", doc_id), doc_id),
                           "questions": [_question(q, i, doc_id) for i, q in enumerate(questions)]}
    category = _pick(rec, CATEGORY_KEYS, "category", doc_id, required=False)
    if category is not None:
        out["category"] = str(category)
    return out


@adapters.register("mmrc_hf")
def mmrc_hf(rec: dict[str, Any]) -> dict[str, Any]:
    """A Hub record in the local format, checked and normalised like a local one (PROVISIONAL:
    the release's schema is unverified).

    The release's schema has not been seen. :func:`hub_to_local` accepts the field names such
    a release most likely uses (the ``*_KEYS`` tuples above; the local names come first, so
    local records pass through unchanged) and raises a :class:`DataError` naming the missing
    field otherwise. Images must be paths (relative to the data dir) or ``{"path": ...}``
    dicts; embedded pixels are not supported. Use it with::

        dataset:
          hf: {path: WUUE/MMRC_Real_World_Conversation, split: test}
          adapter: mmrc_hf
    """
    return mmrc_record(hub_to_local(rec))
