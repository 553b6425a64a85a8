"""Reading JSON Lines with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mmtasks.errors import DataError


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
    if not isinstance(rec, dict):
        raise DataError("each line must be a JSON object", file=path, line=lineno)
    return rec
