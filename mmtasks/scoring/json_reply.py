"""Finding the JSON object a model ends its reply with (judge verdicts, note-taker notes)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
#: where a JSON object can start
_OPENING = re.compile(r"\{[ \t\r\n]*+[\"}]")
#: ``{"`` starts that fail to decode, past which a text is read no further (a hostile reply of
#: ``{"`` repeated: each failure costs the decoder a scan of the text before it)
MAX_FAILED_STARTS = 1000
#: the characters the decoder may read, in all, per character of the text (ours): past it a text
#: is read no further. Starts nested in an unclosed object each read on to where it fails (200
#: nested ``{"a":`` before a 1 MB array read the array 200 times); a decoded object is skipped
#: whole, so a text read once costs 1.
MAX_READ_PER_CHAR = 4


@dataclass(frozen=True)
class JsonScan:
    """What :func:`scan_json_objects` found and what it cost."""

    #: the last top-level object that decoded (None: none did)
    found: dict[str, Any] | None
    #: characters the decoder read, in all (its work, bounded by :data:`MAX_READ_PER_CHAR`)
    read: int
    #: starts that failed to decode (bounded by :data:`MAX_FAILED_STARTS`)
    failed: int
    #: the text was read no further once a bound was reached
    stopped: bool = False


def scan_json_objects(text: str) -> JsonScan:
    """Read ``text``'s top-level JSON objects (see :func:`last_json_object`), counting the work."""
    found: dict[str, Any] | None = None
    failed = 0
    read = 0
    budget = MAX_READ_PER_CHAR * len(text) + 4096
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
        except (json.JSONDecodeError, RecursionError) as exc:
            # a RecursionError: nested deeper than the interpreter decodes ({"a": 3,000 times);
            # how far it read is not known, so the rest of the text is counted as read
            read += (exc.pos + 1 - pos) if isinstance(exc, json.JSONDecodeError) else len(text) - pos
            failed += 1
            if failed > MAX_FAILED_STARTS or read > budget:
                return JsonScan(found, read, failed, stopped=True)
            pos = text.find("{", pos + 1)
            continue
        read += end - pos
        if isinstance(obj, dict):
            found = obj
        pos = text.find("{", end)
    return JsonScan(found, read, failed)


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level ``{...}`` in ``text`` that parses as a JSON object, or None.

    Objects nested inside an earlier object are skipped, so a note such as
    ``{"user_info": {"name": "Li"}}`` is returned whole. Code fences and prose
    around the object are ignored. Linear-bounded on any text: only ``{`` followed by ``"`` or
    ``}`` is tried, at most :data:`MAX_FAILED_STARTS` such starts may fail, the decoder reads at
    most :data:`MAX_READ_PER_CHAR` characters per character of the text, and an object nested
    deeper than the interpreter decodes is a failed start (not a RecursionError).
    """
    return scan_json_objects(text).found
