"""Mantis-Eval scoring: the authors' answer reading and correctness, for both question types.

Loaded as a plugin file by ``mantis_eval.yaml`` (``plugins:``); the names it registers
are visible to the tasks that list it.

The rules are ``get_prediction`` of github.com/TIGER-AI-Lab/Mantis
``mantis/benchmark/eval.py`` (lmms-eval's ``tasks/mantis/utils.py`` copies it):

- ``parse_answer``: the text after the first "final answer:", else after the first "the
  answer is", else after the first "answer:" (case-insensitive), stripped; else the whole
  reply.
- multi-choice: ``get_option`` takes the letter after "Answer: " when the answer starts
  so, else the answer's first alphabetic character, upper-cased. When that letter names
  one of the options, the question is right when it equals the gold letter (the
  ``answer`` field without brackets, newlines and spaces; its first letter when longer);
  otherwise the whole reply, stripped, must equal the gold option's text (its own "A.",
  "A:" or "(A)" prefix removed).
- short-answer: right when the parsed answer equals ``answer``, ignoring case.

A reply is never "unparsed": every reply gets a verdict, as in the authors' code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import metric, parser

MULTI_CHOICE = "multi-choice"
SHORT_ANSWER = "short-answer"
_ANSWER_PREFIX = re.compile(r"Answer: [A-Z]")


def parse_answer(raw: str) -> str:
    lower = raw.lower()
    for marker in ("final answer:", "the answer is", "answer:"):
        if marker in lower:
            return raw[lower.index(marker) + len(marker):].strip()
    return raw


def get_option(answer: str) -> str | None:
    if _ANSWER_PREFIX.match(answer):
        return answer[8]
    for ch in answer:
        if ch.isalpha():
            return ch.upper()
    return None


def gold_letter(answer: str) -> str:
    ref = answer.strip("()\n ")
    if len(ref) != 1:
        ref = next((c for c in ref if c.isalpha()), ref)
    return ref.upper()


@parser("mantis_answer", target="raw")  # the authors compare the gold as written
def mantis_answer(text: str, doc: Mapping[str, Any]) -> str:
    """Multi-choice: the chosen letter when it names an option, else the whole reply stripped
    (compared with the gold option's text); short-answer: the parsed answer."""
    answer = parse_answer(text)
    if doc.get("question_type") != MULTI_CHOICE:
        return answer
    letter = get_option(answer)
    options = doc.get("options") or []
    if letter is not None and ord(letter) - ord("A") < len(options):
        return letter
    return text.strip()


@metric("mantis_correct")
def mantis_correct(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """100 when the answer is right by the authors' rule (see the module docstring), else 0."""
    ref = str(target)
    if doc.get("question_type") != MULTI_CHOICE:
        return 100.0 if parsed is not None and ref.strip("()\n ").lower() == parsed.lower() else 0.0
    options = list(doc.get("options") or [])
    gold = gold_letter(ref)
    if parsed is None:
        return 0.0
    if len(parsed) == 1 and parsed.isalpha() and parsed.isupper() and ord(parsed) - ord("A") < len(options):
        return 100.0 if parsed == gold else 0.0
    index = ord(gold) - ord("A")
    if not 0 <= index < len(options):
        return 0.0
    option = options[index]
    for prefix in (f"{gold}.", f"{gold}:", f"({gold})"):
        if option.startswith(prefix):
            return 100.0 if parsed == option[len(prefix):].strip() else 0.0
    return 100.0 if parsed == option.strip() else 0.0
