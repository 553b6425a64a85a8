"""Reading JSON (Lines) with errors that name the file, line and field.

Every value read is checked (:func:`json_value_problem`): numbers finite and in range (no
``NaN``/``Infinity``, no ``1e400``, no 400-digit integer), no lone surrogate in a string (it
cannot be written back as UTF-8), nesting at most :data:`MAX_DEPTH` deep. A bad value is one
:class:`DataError` naming the file, the line and the field, never a traceback later on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mmtasks.errors import DataError

#: the deepest nesting a JSON value read by mmtasks may have (records, results.json, samples)
MAX_DEPTH = 64
#: the largest integer magnitude accepted (a 64-bit integer)
MAX_INT = 2**63


def json_value_problem(value: Any, max_depth: int = MAX_DEPTH, *, depth_only: bool = False) -> tuple[str, str] | None:
    """The first problem of a parsed JSON value, as (field path, what is wrong), or None. Iterative:
    a value nested 100,000 deep is reported, not a RecursionError. ``depth_only``: only the
    nesting is checked (a reader that shows non-finite numbers and odd text as they are)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > max_depth:
            return path or "(top)", f"nested more than {max_depth} deep"
        if depth_only and not isinstance(item, (dict, list)):
            continue
        if isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and _lone_surrogate(key):
                    return path or "(top)", "a key holds a lone surrogate (not valid Unicode text)"
                stack.append((sub, f"{path}.{key}" if path else str(key), depth + 1))
        elif isinstance(item, list):
            stack.extend((sub, f"{path}[{i}]", depth + 1) for i, sub in enumerate(item))
        elif isinstance(item, float):
            if not math.isfinite(item):
                return path or "(top)", f"{item!r} is not a finite number (JSON has no NaN or Infinity; 1e400 overflows)"
        elif isinstance(item, int) and not isinstance(item, bool):
            if abs(item) >= MAX_INT:
                return path or "(top)", "integer out of range (more than 64 bits)"
        elif isinstance(item, str) and _lone_surrogate(item):
            return path or "(top)", "a lone surrogate (\\ud800-\\udfff escape without its pair): not valid Unicode text"
    return None


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def loads_checked(text: str | bytes, *, file: str | Path | None, line: int | None = None) -> Any:
    """``json.loads`` whose every failure, and every bad value (:func:`json_value_problem`), is
    one :class:`DataError` naming the file, line and field."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON: {exc.msg} at column {exc.colno}", file=file,
                        line=line if line is not None else exc.lineno) from None
    except RecursionError:
        raise DataError(f"JSON nested more than {MAX_DEPTH} deep", file=file, line=line) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise DataError(f"not valid JSON: {exc}", file=file, line=line) from None
    problem = json_value_problem(value)
    if problem is not None:
        raise DataError(problem[1], file=file, line=line, field=problem[0])
    return value


def iter_jsonl(path: Path, report: Callable[[DataError], None] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line; a bad line is a DataError,
    raised, or given to ``report`` and skipped (the preflight reads on past it)."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=path) from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                rec = _record(raw, path, lineno)
            except DataError as exc:
                if report is None:
                    raise
                report(exc)
                continue
            if rec is not None:
                yield lineno, rec


def _record(raw: bytes, path: Path, lineno: int) -> dict[str, Any] | None:
    """One line's object (None: a blank line)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start} of the line)", file=path, line=lineno) from None
    if not line.strip():
        return None
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON line: {exc.msg} at column {exc.colno}", file=path, line=lineno) from None
    except RecursionError:
        raise DataError("JSON line nested too deeply", file=path, line=lineno) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise DataError(f"malformed JSON line: {exc}", file=path, line=lineno) from None
    problem = json_value_problem(rec)
    if problem is not None:
        raise DataError(problem[1], file=path, line=lineno, field=problem[0])
    if not isinstance(rec, dict):
        raise DataError("each line must be a JSON object", file=path, line=lineno)
    return rec
