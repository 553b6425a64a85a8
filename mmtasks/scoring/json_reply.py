"""Finding the JSON object a model ends its reply with (judge verdicts, note-taker notes)."""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level ``{...}`` in ``text`` that parses as a JSON object, or None.

    Objects nested inside an earlier object are skipped, so a note such as
    ``{"user_info": {"name": "Li"}}`` is returned whole. Code fences and prose
    around the object are ignored.
    """
    found: dict[str, Any] | None = None
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            found = obj
        pos = text.find("{", end)
    return found
