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
