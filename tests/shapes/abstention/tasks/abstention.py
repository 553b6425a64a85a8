"""The abstention shape's parser (a plugin file): a reply stating that the question cannot be
answered reads as ``refuse``; any other reply as its answer, lower-cased."""

from __future__ import annotations

from mmtasks.plugin import parser
from mmtasks.scoring.text_normalize import strip_answer_prefix

#: what marks a refusal (compared lower-cased)
REFUSALS = ("cannot answer", "can't answer", "cannot be answered", "not answerable")


@parser("abstain")
def abstain(text: str) -> str | None:
    answer = strip_answer_prefix(text).lower()
    if not answer:
        return None
    return "refuse" if any(phrase in answer for phrase in REFUSALS) else answer
