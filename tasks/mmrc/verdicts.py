"""MMRC's judge verdict (``judge.parser: mmrc_judge``).

The judge ends its reply with one JSON object (shared/specs/mmrc.md): ``{"score": 0-5}`` for
every ability, plus ``matched_items`` and ``model_items`` (IE), ``named_images`` (IM) or
``refused`` (AR). A reply whose last ``{...}`` does not parse, lacks a field the question's
ability requires or holds a value of the wrong type is not a verdict: the judge is asked
again, then the question is recorded as a judge failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mmtasks.scoring.json_reply import last_json_object
from mmtasks.scoring.verdicts import verdict_parser

from .abilities import ABILITIES


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _valid(fields: dict[str, Any]) -> bool:
    """Type and range checks of the known fields that are present."""
    score = fields.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 5):
        return False
    for name in ("matched_items", "model_items"):
        if name in fields and not _is_count(fields[name]):
            return False
    if _is_count(fields.get("matched_items")) and _is_count(fields.get("model_items")) and fields["matched_items"] > fields["model_items"]:
        return False
    if "named_images" in fields:
        named = fields["named_images"]
        if not isinstance(named, list) or not all(_is_count(n) and n >= 1 for n in named):
            return False
    if "refused" in fields and not isinstance(fields["refused"], bool):
        return False
    return True


def judge_verdict(text: str) -> dict[str, Any] | None:
    """The verdict object (last ``{...}`` of the reply) with a valid ``score``, or None."""
    fields = last_json_object(text)
    if fields is None or "score" not in fields or not _valid(fields):
        return None
    return fields


def verdict_for(text: str, ability: str) -> dict[str, Any] | None:
    """The verdict of a question of ``ability``: :func:`judge_verdict` plus the fields the ability requires."""
    fields = judge_verdict(text)
    if fields is None or any(name not in fields for name in ABILITIES[ability].verdict):
        return None
    return fields


def random_verdict_space(context: Mapping[str, Any]) -> dict[str, Any]:
    """A valid verdict for the ``random`` judge: the fields of the question's ability (in name
    order, the order the chance-level draws have always been made in)."""
    return {"kind": "verdict", "format": "json", "fields": dict(sorted(ABILITIES[context["question"]["ability"]].verdict.items()))}


@verdict_parser("mmrc_judge", space=random_verdict_space)
def mmrc_judge(text: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The verdict parser of MMRC's judge: the fields required by the asked question's ability."""
    return verdict_for(text, context["question"]["ability"])
