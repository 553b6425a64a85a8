"""Exact match of MMRC's choice and true/false questions: the parser ``mmrc_answer`` (the
option letter, true/false, or the text of an open question) and the metric ``mmrc_exact_match``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.scoring.metrics import metric
from mmtasks.scoring.parsers import parser, read_answer, true_false
from mmtasks.scoring.text_normalize import strip_answer_prefix


def parse_tf(text: str) -> str | None:
    """``"true"`` / ``"false"``: the generic :func:`~mmtasks.scoring.parsers.true_false` (the
    explicit answer first; yes/no, 对/错 too; "not true" is false)."""
    return true_false(text)


def parse_choice(text: str, options: dict[str, str]) -> str | None:
    """The chosen option letter, or None.

    Read from the explicit answer ("... the answer is C") when there is one, else from the
    whole reply (:func:`~mmtasks.scoring.parsers.read_answer`). In order: the letter the answer opens with ("B", "(B)", "B. Paris"); a
    letter after "option"/"answer"/"choice"; the first standalone capital
    letter naming an option (not the article in "A good ..."); else the one
    option whose text the answer quotes.
    """
    letters = "".join(re.escape(k) for k in options if len(k) == 1)

    def find(clean: str) -> str | None:
        clean = clean.strip()
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

    return read_answer(text, find)


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
