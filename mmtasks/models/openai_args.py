"""Model args of the ``openai`` backend, validated (unknown args are errors)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.config.bounds import (MAX_CONCURRENCY, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, MAX_RESPONSE_BYTES, MAX_RETRIES,
                                   MAX_TIMEOUT_S)
from mmtasks.errors import ConfigError
from mmtasks.secrets import redact, register_secret

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: the variable read for the key when ``api_key_env`` is not given
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: the hosts $OPENAI_API_KEY is for: sent to them (over https) without being named
DEFAULT_KEY_HOSTS = ("api.openai.com",)
#: a comma-separated list of more hosts that may receive $OPENAI_API_KEY (the documented allow-list)
KEY_HOSTS_ENV = "MMTASKS_OPENAI_KEY_HOSTS"


def key_goes_to(base_url: str, environ: Mapping[str, str]) -> bool:
    """Whether $OPENAI_API_KEY, not named by ``api_key_env``, may be sent to ``base_url``: the
    OpenAI API over https, or a host the user lists in $MMTASKS_OPENAI_KEY_HOSTS. (A base URL
    taken from $OPENAI_BASE_URL is paired with the key by the caller: the SDK's own convention.)"""
    try:
        parts = urlsplit(base_url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    if host in DEFAULT_KEY_HOSTS:
        return parts.scheme == "https"
    listed = {h.strip().lower() for h in environ.get(KEY_HOSTS_ENV, "").split(",") if h.strip()}
    return bool(host) and host in listed


class OpenAIArgs(BaseModel):
    """Model args of the ``openai`` backend (``--model-args k=v,...``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | list[str] | None = None
    """Endpoint root ending in /v1 (else $OPENAI_BASE_URL, else OpenAI's); a list
    (``base_url=[http://A/v1,http://B/v1]``) is a pool of replicas of one model
    (:mod:`mmtasks.models.openai_pool`)."""
    cache_group: str | None = None
    """A name for what the endpoint serves, in the response cache's identity in place of the
    endpoint: replicas given the same ``cache_group`` share their cached replies."""
    model_revision: str | None = None
    """What the endpoint serves under the model's name (a checkpoint hash, a date): part of the
    response cache's identity, never sent. Give it when the server's ``/models`` does not tell
    checkpoints apart (the same served name and path with other weights)."""
    api_key_env: str = DEFAULT_KEY_ENV
    """Name of the environment variable that holds the key. Unnamed, $OPENAI_API_KEY is sent only
    to api.openai.com, to the $OPENAI_BASE_URL it is paired with, and to the hosts listed in
    $MMTASKS_OPENAI_KEY_HOSTS; naming it (``api_key_env=OPENAI_API_KEY``) pairs it with ``base_url``."""
    concurrency: int = Field(32, ge=1, le=MAX_CONCURRENCY)
    """Requests in flight at once (one connection each), per event loop."""
    timeout: float = Field(120.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Seconds per request attempt to connect, and to wait for each piece of the answer."""
    deadline: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Seconds one attempt may take in all, from connecting to the last byte of the answer,
    however slowly the server trickles it (default: twice ``timeout``)."""
    max_retries: int = Field(6, ge=0, le=MAX_RETRIES)
    """Retries after the first attempt (the SDK's: connection errors, timeouts, 408, 409, 429,
    5xx, with backoff and Retry-After), also of malformed or oversized answers."""
    max_response_bytes: int = Field(32 * 1024 * 1024, ge=1024, le=MAX_RESPONSE_BYTES)
    """The largest answer accepted (before and after decompression); larger ones fail the attempt."""
    default_headers: dict[str, str] = Field(default_factory=dict)
    """Headers sent with every request. Their values are treated as secrets (Azure's ``api-key``):
    ``***`` in results.json, the leaderboard and the cache identity, redacted from messages."""
    default_query: dict[str, str] = Field(default_factory=dict)
    """Query parameters sent with every request (Azure's api-version); a query string in
    base_url is read into these."""
    max_image_side: int | None = Field(None, ge=16, le=MAX_IMAGE_SIDE)
    """Downscale images whose longest side is larger than this."""
    image_max_bytes: int = Field(20_000_000, ge=1024, le=MAX_IMAGE_BYTES)
    """Shrink images whose encoded file is larger than this."""
    image_format: Literal["auto", "jpeg", "png"] = "auto"
    jpeg_quality: int = Field(90, ge=1, le=100)
    video: Literal["frames", "video_url"] = "frames"
    """How a video placed whole (``{{ video(i) }}``) is sent: ``frames``, as images in place;
    ``video_url``, as one ``video_url`` part holding the sampled frames as JPEG,
    ``data:video/jpeg;base64,<frame 1>,<frame 2>,...`` (vLLM's server reads that as the video's
    frames, so it samples none of its own; the request's ``media_io_kwargs`` keep every frame and,
    for one video, carry its frame rate, frame indices, frame count and duration)."""
    image_detail: Literal["auto", "low", "high"] | None = None
    """OpenAI's ``detail`` of every image part; None: the task's own (``prompt.image_detail``, BLINK's
    ``low``), else not sent."""
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Fields merged into every request body, over the generation settings (a server's own
    parameters; vLLM's ``top_k`` and ``chat_template_kwargs`` are generation settings too)."""
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    """The model's chat-template variables (``{enable_thinking: false}``), sent as the body's
    ``chat_template_kwargs`` (vLLM's server renders its template with them); a task's or
    ``--gen-kwargs``' ``chat_template_kwargs`` go over them, key by key."""


def parse_openai_args(args: dict[str, Any]) -> OpenAIArgs:
    if "api_key" in args:
        register_secret(str(args["api_key"]))
        raise ConfigError("the openai backend does not take a key as an argument", field="--model-args",
                          hint="put it in an environment variable and pass api_key_env=NAME")
    try:
        return OpenAIArgs(**args)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            close = difflib.get_close_matches(name, list(OpenAIArgs.model_fields), n=1)
            hint = f"did you mean {close[0]!r}?" if close else "known: " + ", ".join(OpenAIArgs.model_fields)
            raise ConfigError(f"unknown argument {name!r} for the openai backend", field="--model-args", hint=hint) from None
        raise ConfigError(redact(f"bad value for {name!r}: {err['msg']}"), field="--model-args") from None


def effective_deadline(args: OpenAIArgs) -> float:
    return args.deadline if args.deadline is not None else 2 * args.timeout


def pool_urls(value: Any) -> list[str] | None:
    """The endpoints of a pool given as ``base_url``: a list, ``[A,B]`` or ``A,B``; None for one URL."""
    if isinstance(value, list):
        return [str(v).strip() for v in value]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
            return [u.strip() for u in text.split(",")]
        if "," in text:
            return [u.strip() for u in text.split(",")]
    return None
