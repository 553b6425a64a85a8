"""Keeping secrets out of everything mmtasks prints or writes.

Backends register the API keys they read; :func:`redact` replaces them (and
anything that looks like a bearer token) with ``***``. Used by the results and
samples writers, the logger and error messages.
"""

from __future__ import annotations

import re
import threading

_lock = threading.Lock()
_secrets: set[str] = set()
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._\-]{8,}")
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}")


def register_secret(value: str | None) -> None:
    """Remember a secret value (only values of 6+ characters, to avoid redacting common words)."""
    if value and len(value) >= 6:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for s in secrets:
        if s in text:
            text = text.replace(s, "***")
    text = _BEARER.sub(r"\1***", text)
    return _SK.sub("sk-***", text)
