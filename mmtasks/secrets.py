"""Keeping secrets (API keys, tokens) out of messages, logs and results.

Redaction is by value, and covers exactly the secrets mmtasks reads: whoever reads one
registers it with :func:`register_secret` (the openai backend: the key named by
``api_key_env``; :func:`register_url_secrets`: the credentials of a URL). Every message that
may contain text from outside (HTTP error bodies, exception strings, URLs) goes through
:func:`redact` before it is shown, and every record through :func:`redact_data` before it is
stored. :func:`register_env_secrets` registers the variables mmtasks and the libraries it
drives read by default (``OPENAI_API_KEY``, ``HF_TOKEN`` ...), and no others: a variable
whose name merely looks secret (``DEPLOY_TOKEN=question``) is left alone, so it cannot rewrite
prompts. :class:`RedactingFilter` applies :func:`redact` to log records.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

REDACTED = "***"
#: shorter values are not treated as secrets (redacting them would mangle ordinary text:
#: placeholder keys such as EMPTY or dummy)
MIN_SECRET_LENGTH = 8
#: the environment variables holding secrets that a run reads without being told: the openai
#: backend's default key, and the Hugging Face Hub tokens (hf:, vllm: and dataset downloads).
#: A variable named with ``api_key_env=`` is registered by the backend that reads it.
SECRET_ENV_VARS = ("OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
#: environment variables holding URLs whose credentials are secrets
SECRET_URL_ENV_VARS = ("OPENAI_BASE_URL",)
#: model args whose every value is a secret, whatever its length: HTTP headers (``api-key`` is
#: how Azure takes its key; ``Authorization``, ``X-Api-Key`` elsewhere). Their names are kept.
SECRET_VALUE_ARGS = ("default_headers",)
#: query parameters of a URL that carry credentials (``?api-key=``, ``?sig=``, ``?code=``)
SECRET_QUERY_NAME = re.compile(r"key|token|secret|passw|sig|auth|credential|code", re.IGNORECASE)

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None


def _json_search_pattern(secrets: "list[str]") -> re.Pattern[str]:
    """What finds, in JSON text, anything :func:`redact` might change in the strings it was made
    from: each secret as it is and as JSON escapes it, and loose forms of the token shapes
    (``Bearer`` anywhere; an ``sk-`` key without the word boundary JSON escapes can hide)."""
    forms = {form for s in secrets for form in (s, json.dumps(s, ensure_ascii=False)[1:-1], json.dumps(s)[1:-1])}
    return re.compile("|".join([r"Bearer", r"sk-[A-Za-z0-9_\-]{12,}", *(re.escape(f) for f in sorted(forms))]))


_json_pattern: re.Pattern[str] = _json_search_pattern([])


def register_secret(value: str | None) -> None:
    """Remember ``value`` so that :func:`redact` hides it from now on."""
    global _pattern, _json_pattern
    if not value or len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        # longest first, so a secret containing another is hidden whole
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))
        _json_pattern = _json_search_pattern(ordered)


def register_env_secrets(environ: "Mapping[str, str] | None" = None) -> None:
    """Register the secrets a run reads from the environment by default (:data:`SECRET_ENV_VARS`,
    and the credentials of the URLs in :data:`SECRET_URL_ENV_VARS`); nothing else."""
    env = os.environ if environ is None else environ
    for name in SECRET_ENV_VARS:
        register_secret(env.get(name))
    for name in SECRET_URL_ENV_VARS:
        if env.get(name):
            register_url_secrets(env[name])


def register_arg_secrets(args: "Mapping[str, Any] | None") -> None:
    """Register the values of the model args in :data:`SECRET_VALUE_ARGS` (header values)."""
    for name in SECRET_VALUE_ARGS:
        values = (args or {}).get(name)
        if isinstance(values, Mapping):
            for value in values.values():
                if isinstance(value, str):
                    register_secret(value)
                    register_secret(value.split(" ", 1)[-1])  # "Bearer TOKEN", "Basic ..." -> the token too


def public_args(args: Any) -> Any:
    """Model args fit to publish or to key a cache with: every value of the args in
    :data:`SECRET_VALUE_ARGS` replaced by ``***`` (structurally, so a short value is hidden too);
    anything that is not a mapping is returned as it is."""
    if not isinstance(args, Mapping):
        return args
    out: dict[Any, Any] = {}
    for name, value in args.items():
        if name in SECRET_VALUE_ARGS and isinstance(value, Mapping):
            value = {key: REDACTED for key in value}
        elif name in SECRET_VALUE_ARGS and value is not None:
            value = REDACTED
        out[name] = value
    return out


def url_userinfo(url: str) -> tuple[str | None, str | None]:
    """The user name and password a URL carries before its host (``http://user:pw@host``)."""
    try:
        parts = urlsplit(url)
        return parts.username, parts.password
    except ValueError:
        return None, None


def register_url_secrets(url: str) -> None:
    """Register the credentials a URL carries: the user name and password before the host, and
    the values of query parameters named like credentials (``?api-key=KEY``; not
    ``?api-version=``), so that the URL can be logged and recorded without them."""
    for value in url_userinfo(url):
        register_secret(value)
    try:
        query = urlsplit(url).query
    except ValueError:
        return
    for name, value in parse_qsl(query):
        if SECRET_QUERY_NAME.search(name):
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


def redact_data(value: Any, convert: Callable[[Any], Any] | None = None) -> Any:
    """A copy of JSON-like data (dicts, lists, tuples, strings, numbers) with every string, keys
    included, passed through :func:`redact`. Numbers are data, never secrets: a secret made of
    digits does not turn a count into ``***`` (which would also break the JSON). ``convert``
    turns other objects into JSON-like data first (what ``json.dumps``'s ``default`` does)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_data(k, convert) if isinstance(k, str) else k: redact_data(v, convert) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v, convert) for v in value]
    if value is None or isinstance(value, (bool, int, float)) or convert is None:
        return value
    return redact_data(convert(value), convert)


def redacted_json(value: Any, convert: Callable[[Any], Any] | None = None) -> str:
    """``json.dumps(redact_data(value, convert), ensure_ascii=False)``, without walking the data
    when nothing in it can need redacting: the JSON text is made first and searched for every
    registered secret (as it is and JSON-escaped) and for anything like a bearer token or an
    ``sk-`` key; only when something is found is the data walked string by string. Samples
    almost never hold a secret, and the walk cost about 0.3 ms per sample."""
    text = json.dumps(value, ensure_ascii=False, default=convert)
    if _json_pattern.search(text) is None:
        return text
    return json.dumps(redact_data(value, convert), ensure_ascii=False)


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
    global _pattern, _json_pattern
    with _lock:
        _secrets.clear()
        _pattern = None
        _json_pattern = _json_search_pattern([])
