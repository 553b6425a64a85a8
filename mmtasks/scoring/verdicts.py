"""Judge-verdict parsers: a judge's reply -> the verdict's fields.

A verdict parser is registered by name (``judge.parser`` in the task YAML) and
called as

    parse(text, context) -> dict[str, Any] | None

``text`` is the judge's reply; ``context`` holds the variables the judge prompt
was rendered with (``doc``, and what the protocol passes: ``answer``,
``reference``, ``question`` ...), so that a parser can require different fields
for different questions. ``None`` means "not a verdict": the judge is re-asked
(``judge.retries``), then the call is counted as a judge failure and the
answer is left unscored, never scored 0.

Like answer parsers (:mod:`mmtasks.scoring.parsers`), a verdict parser may take
typed arguments, written as ``judge.parser_args`` and validated at load::

    judge:
      parser: json_object
      parser_args: {required: [score], ranges: {score: [1, 10]}}

Which verdict fields become metrics, and on which scale, is the task's choice
(``judge.metrics`` and ``judge.report_factor``, see
:class:`~mmtasks.config.task_config.JudgeConfig`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field

from mmtasks.registry import verdict_parsers
from mmtasks.scoring.json_reply import last_json_object
from mmtasks.scoring.parsers import ParserArgs, parser


def verdict_parser(name: str, *, args: type[ParserArgs] | None = None,
                   space: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(text, context)`` (or ``fn(text, context, args)``) as the verdict parser ``name``.

    ``space(context)``, when given, says what a valid verdict looks like for the ``random``
    judge (``{kind: verdict, format: json|python, fields: {name: [low, high] | bool |
    image_subset}}``); a task's own ``judge.space`` takes precedence."""
    return parser(name, args=args, registry=verdict_parsers, space=space)


def is_number(value: Any) -> bool:
    """An int or a float that is not NaN (booleans are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


#: the judge-prompt variables that hold the model's answer (``answer``: single_turn and
#: multi_turn; ``response``: replay_probe)
ANSWER_VARIABLES = ("answer", "response")


def judge_own_text(reply: str, context: Mapping[str, Any]) -> str:
    """The judge's reply without its verbatim quotes of the model's answer, so that a verdict
    the answer holds (``{"score": 5}``) is never read as the judge's. Only answers that hold a
    ``{`` are cut: a verdict cannot be forged without one."""
    for name in ANSWER_VARIABLES:
        answer = context.get(name)
        if isinstance(answer, str) and "{" in answer and answer.strip():
            reply = reply.replace(answer.strip(), "\n")
    return reply


def brace_spans(text: str) -> list[str]:
    """The top-level ``{...}`` spans of ``text`` (quoted strings inside a span are skipped, so a
    ``}`` in a JSON or Python string does not end it); an unclosed span is dropped."""
    spans: list[str] = []
    depth, start, quote, i = 0, 0, "", 0
    while i < len(text):
        ch = text[i]
        if depth and quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif depth and ch in "\"'":
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
        i += 1
    return spans


def sole_verdict(parse: Callable[[str, Mapping[str, Any]], Any], reply: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The one verdict of a judge reply, for every verdict parser: the parser reads each
    top-level ``{...}`` of the judge's own text (:func:`judge_own_text`) on its own; two
    different verdicts are a conflict - None, so the judge is re-asked and, if it keeps
    answering so, the call is a judge failure (never the higher, nor the last, score). A reply
    with no ``{`` at all is given to the parser whole (verdict formats without braces)."""
    own = judge_own_text(reply, context)
    spans = brace_spans(own)
    if not spans:
        fields = parse(own, context)
        return fields if isinstance(fields, dict) else None
    found = [f for f in (parse(span, context) for span in spans) if isinstance(f, dict)]
    if len({json.dumps(f, sort_keys=True, default=str) for f in found}) != 1:
        return None
    return found[-1]


class JsonObjectArgs(ParserArgs):
    required: list[str] = Field(default_factory=list)
    """Fields the verdict must hold."""
    ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Fields that must be numbers within [low, high] when present."""


@verdict_parser("json_object", args=JsonObjectArgs)
def json_object(text: str, context: Mapping[str, Any], args: JsonObjectArgs) -> dict[str, Any] | None:
    """The last JSON object of the reply, when it holds the required fields and its ranged
    fields are numbers in range."""
    fields = last_json_object(text)
    if fields is None or any(name not in fields for name in args.required):
        return None
    for name, (low, high) in args.ranges.items():
        if name in fields and not (is_number(fields[name]) and low <= fields[name] <= high):
            return None
    return fields
