"""Keeping secrets (API keys, tokens) out of messages, logs and results.

Whoever reads a secret registers it with :func:`register_secret`; every
message that may contain text from outside (HTTP error bodies, exception
strings, URLs) goes through :func:`redact` before it is shown or stored.
:func:`register_env_secrets` registers the values of environment variables
whose names say they hold a secret (``*_API_KEY``, ``*_TOKEN``, ...), and
:class:`RedactingFilter` applies :func:`redact` to log records.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from urllib.parse import parse_qsl, urlsplit, urlunsplit

REDACTED = "***"
#: shorter values are not treated as secrets (redacting them would mangle ordinary text)
MIN_SECRET_LENGTH = 4
#: environment variable names whose values are secrets
SECRET_ENV_NAME = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
#: environment values shorter than this are ignored by register_env_secrets (flags, not keys)
MIN_ENV_SECRET_LENGTH = 8

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None


def register_secret(value: str | None) -> None:
    """Remember ``value`` so that :func:`redact` hides it from now on."""
    global _pattern
    if not value or len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        # longest first, so a secret containing another is hidden whole
        _pattern = re.compile("|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True)))


def register_env_secrets(environ: "os._Environ[str] | dict[str, str] | None" = None) -> None:
    """Register the values of environment variables named like secrets (``OPENAI_API_KEY``, ``HF_TOKEN``)."""
    for name, value in (os.environ if environ is None else environ).items():
        if SECRET_ENV_NAME.search(name) and len(value) >= MIN_ENV_SECRET_LENGTH:
            register_secret(value)


def register_url_secrets(url: str) -> None:
    """Register the credentials a URL carries: its password and its query values
    (``http://user:PASSWORD@host/v1``, ``...?api-key=KEY``), so that the URL can be logged and
    recorded (results.json keeps the run's arguments) without them."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return
    register_secret(password)
    for _, value in parse_qsl(parts.query):
        register_secret(value)


#: token shapes hidden even when nobody registered them (main's redact did this too)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._\-]{8,}")
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}")


def redact(text: str) -> str:
    """``text`` with every registered secret, bearer token and ``sk-`` key replaced by ``***``."""
    if not text:
        return text
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    text = _BEARER.sub(r"\1" + REDACTED, text)
    return _SK.sub("sk-" + REDACTED, text)


def safe_url(url: str) -> str:
    """A URL fit for messages: no user/password, no query string, secrets redacted."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        cleaned = urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        cleaned = url
    return redact(cleaned)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts registered secrets from each record's message."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def _clear_for_tests() -> None:
    global _pattern
    with _lock:
        _secrets.clear()
        _pattern = None
