"""PROVISIONAL adapter ``mmrc_hf``: a record of the Hugging Face release
``WUUE/MMRC_Real_World_Conversation`` in MMRC's local format (shared/specs/mmrc.md).

The release's schema has not been seen. This adapter accepts the field names
such a release most likely uses (listed in the ``*_KEYS`` tuples below; the
local names come first, so local records pass through unchanged) and raises a
:class:`DataError` naming the missing field otherwise. When the real schema is
known, fix the key lists (or write the mapping out) and extend
tests/test_mmrc_hf_adapter.py with a real record. Use it with::

    dataset:
      hf: {path: WUUE/MMRC_Real_World_Conversation, split: test}
      adapter: mmrc_hf

Images must be paths (relative to the data dir) or ``{"path": ...}`` dicts
(``datasets`` Image features loaded with ``decode=False``); embedded pixels are
not supported.
"""

from __future__ import annotations

import re
from typing import Any

from mmtasks.registry import adapters
from mmtasks.errors import DataError

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

ABILITY_NAMES = {
    "ie": "IE", "information extraction": "IE",
    "cr": "CR", "cross-turn reasoning": "CR", "cross turn reasoning": "CR", "multi-turn reasoning": "CR",
    "iu": "IU", "information update": "IU",
    "im": "IM", "image management": "IM",
    "mr": "MR", "memory recall": "MR", "long-term memory recall": "MR",
    "ar": "AR", "answer refusal": "AR",
}
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
                        hint="expected one of IE CR IU IM MR AR or their names")
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


@adapters.register("mmrc_hf")
def mmrc_hf(rec: dict[str, Any]) -> dict[str, Any]:
    """A Hub record in the local format (PROVISIONAL: the release's schema is unverified)."""
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
