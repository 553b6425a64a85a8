"""Finding the JSON object a model ends its reply with (judge verdicts, note-taker notes)."""

from __future__ import annotations

import json
import re
from typing import Any

_DECODER = json.JSONDecoder()
#: where a JSON object can start
_OPENING = re.compile(r"\{[ \t\r\n]*+[\"}]")
#: ``{"`` starts that fail to decode, past which a text is read no further (a hostile reply of
#: ``{"`` repeated: each failure costs the decoder a scan of the text before it)
MAX_FAILED_STARTS = 1000


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level ``{...}`` in ``text`` that parses as a JSON object, or None.

    Objects nested inside an earlier object are skipped, so a note such as
    ``{"user_info": {"name": "Li"}}`` is returned whole. Code fences and prose
    around the object are ignored. Linear-bounded on any text: only ``{`` followed by ``"`` or
    ``}`` is tried, and at most :data:`MAX_FAILED_STARTS` such starts may fail.
    """
    found: dict[str, Any] | None = None
    failed = 0
    pos = text.find("{")
    while pos != -1:
        # an object opens with ``{`` then ``"`` or ``}`` (whitespace between): anything else is not
        # tried, and a reply that makes the decoder fail more than MAX_FAILED_STARTS times is read
        # no further (each failure costs the decoder a count of the lines before it)
        opening = _OPENING.match(text, pos)
        if opening is None:
            pos = text.find("{", pos + 1)
            continue
        try:
            obj, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            failed += 1
            if failed > MAX_FAILED_STARTS:
                return found
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            found = obj
        pos = text.find("{", end)
    return found
