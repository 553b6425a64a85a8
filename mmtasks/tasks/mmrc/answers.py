"""Exact match of MMRC's choice and true/false questions: the parser ``mmrc_answer`` (the
option letter, true/false, or the text of an open question) and the metric ``mmrc_exact_match``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.scoring.metrics import metric
from mmtasks.scoring.parsers import parser
from mmtasks.scoring.text_normalize import nfkc, strip_answer_prefix


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


@parser("mmrc_answer")
def mmrc_answer(text: str, question: Mapping[str, Any]) -> str | None:
    """The option letter of a choice question, ``true``/``false`` of a tf question (None: not
    found), the answer text of an open one."""
    fmt = question.get("format")
    if fmt == "choice" and question.get("options"):
        return parse_choice(text, question["options"])
    if fmt == "tf":
        return parse_tf(text)
    return strip_answer_prefix(text)


@metric("mmrc_exact_match")
def exact_match(parsed: str | None, target: Any, question: Mapping[str, Any]) -> float | None:
    """1.0 / 0.0 for choice and tf questions (an unparsed answer scores 0); None for open ones."""
    fmt = question.get("format")
    if fmt == "choice" and question.get("options"):
        return float(parsed == str(target).strip())
    if fmt == "tf":
        return float(parsed == str(target).strip().lower())
    return None
