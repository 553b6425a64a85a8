"""Regular expressions from task files (``prompt.image_tags.pattern``, ``exact_match``'s
``regexes_to_ignore``): checked when the task loads, and bounded when they run.

A task's pattern runs over text it does not control (a rendered prompt of up to 4,000,000
characters, a model's reply), so a pattern that backtracks could hold ``check`` or a run for
ever: ``<image>(?:x+x+)+y`` on ``<image>`` and 40 ``x`` never answered with Python's ``re``.

- At load, a pattern must compile, and nested quantifiers (a repeated group holding a repeat,
  ``(x+)+``, ``(a*)*``: the usual exponential kind) are refused with one line naming the field.
- When it runs, it runs in the ``regex`` module (the same syntax as ``re``), whose matching stops
  after :data:`MAX_MATCH_SECONDS` (:class:`PatternTimeout`): a pattern slow in some other way
  (``(?:x|xx)+y`` on a long run of ``x``) is an error of the document, never a hang.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator
from typing import Any

import regex

#: the longest one task pattern may match over one text (the template bound is the same 5 s)
MAX_MATCH_SECONDS = 5.0

Pattern = regex.Pattern


class PatternTimeout(ValueError):
    """A task's pattern ran past :data:`MAX_MATCH_SECONDS` on one text."""


@functools.lru_cache(maxsize=256)
def compile_task_pattern(source: str) -> "regex.Pattern[str]":
    """``source`` compiled for matching under the time bound; ``ValueError`` (one line) when it
    is not a regular expression or nests quantifiers."""
    try:
        compiled = regex.compile(source, regex.VERSION0)
    except regex.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    nested = nested_quantifier(source)
    if nested is not None:
        raise ValueError(f"nested quantifiers ({nested}) can take exponential time on some text: "
                         "write the pattern without a repeated group that holds a repeat")
    return compiled


def nested_quantifier(source: str) -> str | None:
    """The first repeat inside a repeat of ``source`` (as ``'+' inside '*'``), or None. Read with
    Python's own pattern parser; a pattern only the ``regex`` module reads is left to the time bound."""
    if sys.version_info >= (3, 11):
        from re import _parser as sre_parse
    else:  # pragma: no cover
        import sre_parse
    try:
        parsed = sre_parse.parse(source)
    except (re.error, RecursionError, OverflowError):
        return None
    return _walk(list(parsed.data), inside=None)


_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


def _quantifier(low: int, high: int) -> str:
    maxrepeat = getattr(re, "_constants", None)
    big = getattr(maxrepeat, "MAXREPEAT", 2**32 - 1) if maxrepeat is not None else 2**32 - 1
    if high >= big:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    return "?" if (low, high) == (0, 1) else f"{{{low},{high}}}"


def _walk(items: list[Any], inside: str | None) -> str | None:
    for op, value in items:
        name = str(op)
        if name in _REPEATS:
            low, high, body = value
            if high > 1:
                here = _quantifier(low, high)
                if inside is not None:
                    return f"{here!r} inside {inside!r}"
                found = _walk(list(body), here)
            else:
                found = _walk(list(body), inside)
        elif name == "SUBPATTERN":
            found = _walk(list(value[-1]), inside)
        elif name == "BRANCH":
            found = next((f for f in (_walk(list(b), inside) for b in value[1]) if f is not None), None)
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _walk(list(value[1]), inside)
        elif name == "ATOMIC_GROUP":
            found = _walk(list(value), inside)
        else:
            found = None
        if found is not None:
            return found
    return None


def finditer(pattern: "regex.Pattern[str]", text: str) -> Iterator[Any]:
    """``pattern.finditer(text)`` under the time bound (:class:`PatternTimeout` past it)."""
    try:
        yield from pattern.finditer(text, timeout=MAX_MATCH_SECONDS)
    except TimeoutError:
        raise PatternTimeout(f"the pattern {pattern.pattern!r} ran for more than {MAX_MATCH_SECONDS:g} s on "
                             f"{len(text):,} characters of text") from None


def sub(pattern: "regex.Pattern[str]", replacement: str, text: str) -> str:
    """``pattern.sub(replacement, text)`` under the time bound (:class:`PatternTimeout` past it)."""
    try:
        return pattern.sub(replacement, text, timeout=MAX_MATCH_SECONDS)
    except TimeoutError:
        raise PatternTimeout(f"the pattern {pattern.pattern!r} ran for more than {MAX_MATCH_SECONDS:g} s on "
                             f"{len(text):,} characters of text") from None
