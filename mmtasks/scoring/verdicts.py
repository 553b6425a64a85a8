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
import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field

from mmtasks.registry import verdict_parsers
from mmtasks.scoring.json_reply import last_json_object
from mmtasks.scoring.parsers import ParserArgs, parser


def verdict_parser(name: str, *, args: type[ParserArgs] | None = None,
                   space: Callable[..., dict[str, Any]] | None = None,
                   marks: "re.Pattern[str] | None" = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(text, context)`` (or ``fn(text, context, args)``) as the verdict parser ``name``.

    ``space(context)`` (``space(context, args)`` with ``args``), when given, says what a valid
    verdict looks like for the ``random`` judge (``{kind: verdict, format: json|python, fields:
    {name: [low, high] | {choices: [...]} | bool | image_subset}}``); a task's own ``judge.space``
    takes precedence (a ``{kind: verdict}`` without ``fields`` takes the parser's).

    ``marks``: for a verdict written without braces, the pattern of its inline mark (MM-MT-Bench's
    ``[[n]]``): a mark that is a piece of the model's text is a quote, never the judge's verdict,
    (:func:`sole_verdict`)."""
    return parser(name, args=args, registry=verdict_parsers, space=space, marks=marks)


def is_number(value: Any) -> bool:
    """An int or a float that is not NaN (booleans are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


#: the judge-prompt variables that hold the model's text: its answer (``answer``: single_turn and
#: multi_turn; ``response``: replay_probe), its earlier turns (``model_turns``: replay_probe,
#: the assistant turns the judge's ``conversation`` shows) and the reasoning split from the answer
#: (``reasoning``: single_turn and multi_turn; shown to the judge only by a prompt that names it)
ANSWER_VARIABLES = ("answer", "response", "model_turns", "reasoning")
#: the leading marks a judge may quote a line with (markdown ``>``, bullets, quotes)
_QUOTE_MARKS = " \t>*-\"'`\u201c\u201d\u2018\u2019"
#: brackets compared as one kind, so a line quoted as the prompt showed it (its delimiters defused
#: by the ``escape_delimiters`` filter: ``&lt;/answer&gt;``, ``(System)``) is still the same line
_ONE_BRACKET = str.maketrans("([{<)]}>", "[[[[]]]]")


def model_texts(context: Mapping[str, Any]) -> list[str]:
    """The model's text the judge prompt was rendered with (see :data:`ANSWER_VARIABLES`)."""
    out: list[str] = []
    for name in ANSWER_VARIABLES:
        value = context.get(name)
        for text in (value if isinstance(value, (list, tuple)) else [value]):
            if isinstance(text, str) and text.strip():
                out.append(text)
    return out


def _normal_line(line: str) -> str:
    """A line for comparing quotes: no case, whitespace runs as one space, leading quote marks
    off, every bracket kind alike (``&lt;``/``&gt;`` read as ``<``/``>``)."""
    line = line.replace("&lt;", "<").replace("&gt;", ">").translate(_ONE_BRACKET)
    return " ".join(line.split()).lower().lstrip(_QUOTE_MARKS)


def judge_own_text(reply: str, context: Mapping[str, Any]) -> str:
    """The judge's reply without what it quotes of the model's text (its answer and earlier
    turns), so that a verdict the model wrote (``{"score": 5}``, LLaVA-Bench's ``1 10`` line) is
    never read as the judge's, whatever characters it is made of:

    - every verbatim quote of a whole answer or turn is cut;
    - every line of the reply that repeats a line of the model's text is cut (compared without
      case, whitespace runs, leading quote marks such as ``> ``, or the difference between bracket
      kinds that ``escape_delimiters`` makes); lines without a letter or digit (``}``) are kept.

    A judge's own verdict that happens to repeat a line of the answer is cut too: the reply then
    holds no verdict, and is re-asked and counted as a judge failure - never a forged score."""
    texts = model_texts(context)
    if not texts:
        return reply
    for text in sorted(texts, key=len, reverse=True):
        reply = reply.replace(text.strip(), "\n")
    quoted = {_normal_line(line) for text in texts for line in text.splitlines() if any(c.isalnum() for c in line)}
    quoted.discard("")
    if quoted:
        reply = "\n".join(line for line in reply.split("\n")
                          if not (any(c.isalnum() for c in line) and _normal_line(line) in quoted))
    return reply


def _quoted_span(span: str, normal_texts: list[str]) -> bool:
    """Whether a ``{...}`` span of the reply is a piece of the model's text (a quote, not a
    verdict); ``normal_texts``: the model's texts with whitespace runs as one space, lower case."""
    needle = " ".join(span.split()).lower()
    return any(needle in text for text in normal_texts)


#: the most distinct top-level ``{...}`` spans a judge reply may hold: past it the reply is no
#: verdict (re-asked, then a judge failure). A judge's verdict is one object; the bound keeps
#: reading a hostile reply (tens of thousands of ``{n}`` against a long answer) linear
MAX_VERDICT_SPANS = 1000


def brace_spans(text: str) -> list[str]:
    """The top-level ``{...}`` spans of ``text`` (quoted strings inside a span are skipped, so a
    ``}`` in a JSON or Python string does not end it); an unclosed span is dropped."""
    return [text[start:end] for start, end in _span_bounds(text)]


def _span_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level ``{...}`` span of ``text`` (see :func:`brace_spans`)."""
    spans: list[tuple[int, int]] = []
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
                spans.append((start, i + 1))
        i += 1
    return spans


def _cut_spans(text: str, keep: Callable[[str], bool], filler: str) -> str:
    """``text`` with each top-level ``{...}`` span that ``keep`` refuses replaced by ``filler``, in one pass."""
    out: list[str] = []
    pos = 0
    for start, end in _span_bounds(text):
        if not keep(text[start:end]):
            out += [text[pos:start], filler]
            pos = end
    out.append(text[pos:])
    return "".join(out)


def sole_verdict(parse: Callable[[str, Mapping[str, Any]], Any], reply: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The one verdict of a judge reply, for every verdict parser: the parser reads each
    top-level ``{...}`` of the judge's own text (:func:`judge_own_text`, less any span that is a
    piece of the model's text) on its own; two different verdicts are a conflict - None, so the
    judge is re-asked and, if it keeps answering so, the call is a judge failure (never the
    higher, nor the last, score). A reply with no ``{`` left, or whose ``{...}`` spans hold no
    verdict, is given to the parser whole, those spans cut out (verdict formats without braces,
    such as LLaVA-Bench's score line or MM-MT-Bench's ``[[7]]``, in a reply whose prose has
    braces: code, LaTeX, a set)."""
    own = judge_own_text(reply, context)
    texts = model_texts(context)
    spans = brace_spans(own)
    if len(set(spans)) > MAX_VERDICT_SPANS:
        return None
    if texts:
        normal = [" ".join(text.split()).lower() for text in texts]  # once, not once per span
        quoted = {span for span in set(spans) if _quoted_span(span, normal)}
        if quoted:
            own = _cut_spans(own, lambda span: span not in quoted, "\n")
            spans = brace_spans(own)
    if not spans:
        return _without_braces(parse, own, texts, context)
    found = [f for f in (parse(span, context) for span in spans) if isinstance(f, dict)]
    if not found:
        return _without_braces(parse, _cut_spans(own, lambda span: False, " "), texts, context)
    if len({json.dumps(f, sort_keys=True, default=str) for f in found}) != 1:
        return None
    return found[-1]


def _without_braces(parse: Callable[[str, Mapping[str, Any]], Any], own: str, texts: list[str],
                    context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The verdict of a reply read without braces. For a parser that declares its inline mark
    (``marks``, e.g. ``[[n]]``), a mark that is a piece of the model's text (``"[[10]]"`` quoted
    inline) is cut, never read as the judge's, and the parser reads what is left (the first of the
    judge's own marks, as the official code reads the first); marks that are all quotes leave no
    verdict (None: the judge is asked again, then the call is a judge failure)."""
    pattern = getattr(getattr(parse, "spec", None), "marks", None)
    if pattern is not None and texts:
        # the model's own marks, found once (a set: linear however many marks either text holds)
        def key(mark: str) -> str:
            return " ".join(mark.split()).lower()

        theirs = {key(m.group(0)) for text in texts for m in pattern.finditer(text)}
        marks = [m.group(0) for m in pattern.finditer(own)]
        if marks and all(key(m) in theirs for m in marks):
            return None
        own = pattern.sub(lambda m: " " if key(m.group(0)) in theirs else m.group(0), own)  # one pass
    fields = parse(own, context)
    return fields if isinstance(fields, dict) else None


class JsonObjectArgs(ParserArgs):
    required: list[str] = Field(default_factory=list)
    """Fields the verdict must hold."""
    ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Fields that must be numbers within [low, high] when present."""


def json_object_space(context: Mapping[str, Any], args: JsonObjectArgs) -> dict[str, Any]:
    """The verdict ``json_object`` declares: a JSON object of its required and ranged fields, each
    ranged one drawn in its range (integral bounds draw integers: ``[1, 10]``), each other one
    drawn 0 or 1 (ours: the parser accepts any value there; give ``ranges`` for a score's scale)."""
    fields: dict[str, Any] = {}
    for name in dict.fromkeys([*args.required, *args.ranges]):
        bounds = args.ranges.get(name)
        fields[name] = [int(b) if float(b).is_integer() else b for b in bounds] if bounds is not None else [0, 1]
    return {"kind": "verdict", "format": "json", "fields": fields}


@verdict_parser("json_object", args=JsonObjectArgs, space=json_object_space)
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
