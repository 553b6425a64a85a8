"""MMRC parsers: the judge's verdict, and the choice / true-false answer for exact match.

The judge ends its reply with one JSON object (shared/specs/mmrc.md):
``{"score": 0-5}`` for every ability, plus ``matched_items`` and
``model_items`` (IE), ``named_images`` (IM) or ``refused`` (AR). A reply whose
last ``{...}`` does not parse, lacks a required field or holds a value of the
wrong type is not a verdict: the judge is asked again, then the question is
recorded as a judge failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mmtasks.scoring.json_reply import last_json_object
from mmtasks.registry import verdict_parsers
from mmtasks.scoring.text_normalize import nfkc, strip_answer_prefix

#: the fields a verdict must hold, per ability
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "IE": ("score", "matched_items", "model_items"),
    "CR": ("score",),
    "IU": ("score",),
    "IM": ("score", "named_images"),
    "MR": ("score",),
    "AR": ("score", "refused"),
}


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


@verdict_parsers.register("mmrc_judge")
def judge_verdict(text: str) -> dict[str, Any] | None:
    """The verdict object (last ``{...}`` of the reply) with a valid ``score``, or None."""
    fields = last_json_object(text)
    if fields is None or "score" not in fields or not _valid(fields):
        return None
    return fields


def verdict_parser(base: Callable[[str], Any], ability: str) -> Callable[[str], dict[str, Any] | None]:
    """``base`` (the task's judge parser) plus the fields ``ability`` requires."""
    required = REQUIRED_FIELDS[ability]

    def parse(text: str) -> dict[str, Any] | None:
        fields = base(text)
        if not isinstance(fields, dict) or any(name not in fields for name in required):
            return None
        return fields

    return parse


# --- exact match of choice and true/false answers --------------------------

_TF = re.compile(r"(?<![A-Za-z])(true|false|yes|no|incorrect|correct|wrong)(?![A-Za-z])|(不正确|不对|正确|错误|对|错|是|否)",
                 re.IGNORECASE)
_TF_VALUE = {"true": "true", "yes": "true", "correct": "true", "正确": "true", "对": "true", "是": "true",
             "false": "false", "no": "false", "incorrect": "false", "wrong": "false",
             "不正确": "false", "不对": "false", "错误": "false", "错": "false", "否": "false"}


def parse_tf(text: str) -> str | None:
    """``"true"`` / ``"false"`` from the first true/false word of the answer (yes/no, 对/错 too)."""
    match = _TF.search(nfkc(strip_answer_prefix(text)))
    if match is None:
        return None
    return _TF_VALUE[(match.group(1) or match.group(2)).lower()]


def parse_choice(text: str, options: dict[str, str]) -> str | None:
    """The chosen option letter, or None.

    In order: the letter the answer opens with ("B", "(B)", "B. Paris"); a
    letter after "option"/"answer"/"choice"; the first standalone capital
    letter naming an option (not the article in "A good ..."); else the one
    option whose text the answer quotes.
    """
    clean = nfkc(strip_answer_prefix(text)).strip()
    letters = "".join(re.escape(k) for k in options if len(k) == 1)
    if letters:
        letter = rf"([{letters}])(?![A-Za-z])(?<!A(?= (?!is\b)[a-z]))"  # not the article in "A word"
        for pattern in (rf"^[(\[]?{letter}",
                        rf"(?i:option|answer|choice|选项?)\W{{0,3}}(?:is\W{{0,3}})?\(?{letter}",
                        rf"(?<![A-Za-z]){letter}"):
            match = re.search(pattern, clean)
            if match:
                return match.group(1)
    folded = clean.casefold()
    quoted = [k for k, v in options.items() if v.strip() and v.strip().casefold() in folded]
    return quoted[0] if len(quoted) == 1 else None


def exact_match(answer: str, fmt: str, gold: str, options: dict[str, str] | None) -> tuple[str | None, float | None]:
    """(parsed answer, 1.0/0.0) for choice and tf questions; (None, None) for open ones.
    An answer that cannot be parsed scores 0."""
    if fmt == "choice" and options:
        parsed = parse_choice(answer, options)
        return parsed, float(parsed == gold.strip())
    if fmt == "tf":
        parsed = parse_tf(answer)
        return parsed, float(parsed == gold.strip().lower())
    return None, None
