"""The ``anthropic`` backend: Claude through Anthropic's Messages API, with the ``anthropic`` SDK
(``anthropic.AsyncAnthropic``; the ``anthropic`` extra).

What is sent (``POST /v1/messages``, the SDK's ``MessageCreateParams``): the system messages as
``system``; every other message with its parts in order, text blocks and ``image`` blocks (base64,
several per message; a video's sampled frames as images in place); ``max_tokens``;
``stop_sequences``; ``thinking`` from ``thinking_budget`` (``{type: enabled, budget_tokens: N}``;
-1: ``{type: adaptive}``; 0: ``{type: disabled}``); ``output_config.effort`` from
``reasoning_effort``; ``temperature`` (0 for greedy), ``top_p`` and ``top_k`` when the installed
SDK's ``MessageCreateParams`` has them (:data:`SDK_FIELDS`: releases for the newest models dropped
them, and the API refuses what the SDK does not send). Without them a task's greedy decoding is not
sent (Claude decodes as it does; results.json records what was sent), and a setting that asks for
sampling is refused before the run, naming the backend, as are a seed and the penalties, which
the Messages API never takes.

What is read: the text blocks as the answer; the ``thinking`` blocks (the summarised thinking)
as ``reasoning``; ``stop_reason`` mapped onto finish reasons (``end_turn``/``stop_sequence``:
``stop``; ``max_tokens``: ``length``, so truncation is counted as for the other backends;
``refusal``: ``content_filter``; others as they are); ``usage``: prompt tokens (``input_tokens``
plus the cache's read and written tokens), ``cached`` (``cache_read_input_tokens``) and
``completion`` (``output_tokens``, thinking included).

Keys: $ANTHROPIC_API_KEY goes only to api.anthropic.com (https) and the hosts in
$MMTASKS_ANTHROPIC_KEY_HOSTS unless ``api_key_env=`` names it. Retries: the SDK's (408, 409,
429, 5xx and 529 overloaded, Retry-After honoured) under the guarded transport
(:mod:`mmtasks.models.api_base`).
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
from anthropic.types import message_create_params as _params

from mmtasks.core.conversation import Image, Text
from mmtasks.core.reasoning import LENGTH
from mmtasks.core.request import FailureKind, GenerationConfig, Reply, Request
from mmtasks.errors import DataError
from mmtasks.models.api_base import APIArgs, APIModel, split_data_url, transport_reason
from mmtasks.models.openai_http import http
from mmtasks.models.openai_payload import (
    CONTEXT_OVERFLOW,
    error_detail,
    is_context_overflow,
)
from mmtasks.models.openai_transport import ATTEMPTS, AttemptCounter

#: the request fields the installed SDK's Messages API takes
SDK_FIELDS: frozenset[str] = frozenset(_params.MessageCreateParamsBase.__required_keys__
                                       | _params.MessageCreateParamsBase.__optional_keys__)
#: whether the API takes sampling settings (``temperature``, ``top_p``, ``top_k``)
TAKES_SAMPLING = "temperature" in SDK_FIELDS

#: Claude's stop reasons as finish reasons (``length``: the token limit, counted as truncation)
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": LENGTH, "refusal": "content_filter",
                "model_context_window_exceeded": LENGTH}


class AnthropicArgs(APIArgs):
    """Model args of the ``anthropic`` backend."""

    anthropic_version: str | None = None
    """The ``anthropic-version`` header (default: the SDK's)."""


def check_message(request: Any, status: int, body: bytes) -> str | None:
    """Why a 200 answer to ``POST /v1/messages`` is not a message (None: it is one)."""
    if status != 200 or request.method != "POST" or not request.url.path.endswith("/messages"):
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return f"invalid response: not JSON: {body[:120]!r}"
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        return "invalid response: not a message (no content list)"
    return None


class AnthropicModel(APIModel):
    """Claude through the Messages API; see the module docstring."""

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_key_env = "ANTHROPIC_API_KEY"
    key_hosts = ("api.anthropic.com",)
    args_model = AnthropicArgs
    example = "anthropic:claude-sonnet-4-5"
    takes_settings = frozenset({"reasoning_effort", "thinking_budget", "top_k"})

    @classmethod
    def refused_settings(cls, generation: GenerationConfig) -> list[str]:
        refused = super().refused_settings(generation)
        if not TAKES_SAMPLING:
            refused = [name for name in refused if name != "top_k"] + (["top_k"] if generation.top_k is not None else [])
            if generation.sampling_mode() == "sample":
                refused.append("temperature/top_p (sampling)")
        if generation.seed is not None:
            refused.append("seed")
        budget = generation.thinking_budget
        if budget is not None and budget > 0 and not 1024 <= budget < generation.max_new_tokens:
            # the Messages API's rule for thinking.budget_tokens: at least 1024, less than max_tokens
            refused.append(f"thinking_budget={budget} with max_new_tokens={generation.max_new_tokens} "
                           "(Claude's budget is at least 1024 and less than max_new_tokens)")
        return refused

    def _make_client(self, session: Any) -> anthropic.AsyncAnthropic:
        headers = dict(self.args.default_headers)
        if self.args.anthropic_version:
            headers["anthropic-version"] = self.args.anthropic_version
        return anthropic.AsyncAnthropic(
            api_key=self._api_key or "EMPTY", base_url=self.base_url, max_retries=self.args.max_retries,
            timeout=http.Timeout(self.args.timeout, connect=min(self.args.timeout, 30.0)),
            default_headers=headers or None, http_client=session)

    def _check(self) -> Any:
        return check_message

    # -- the request -------------------------------------------------------------------
    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any]:
        """Every field of a request for ``generation`` but the model, the system prompt and the
        messages: what :meth:`_payload` sends."""
        out: dict[str, Any] = {"max_tokens": generation.max_new_tokens}
        mode = generation.sampling_mode()
        if TAKES_SAMPLING and mode == "greedy":
            out["temperature"] = 0.0
        elif TAKES_SAMPLING and mode == "sample":
            out.update(temperature=generation.temperature if generation.temperature is not None else 1.0, top_p=generation.top_p)
        if TAKES_SAMPLING and mode != "greedy" and generation.top_k is not None:
            out["top_k"] = generation.top_k
        if generation.stop:
            out["stop_sequences"] = list(generation.stop)
        budget = generation.thinking_budget
        if budget is not None:
            out["thinking"] = ({"type": "adaptive"} if budget < 0 else {"type": "disabled"} if budget == 0
                               else {"type": "enabled", "budget_tokens": budget})
        if generation.reasoning_effort is not None:
            out["output_config"] = {"effort": generation.reasoning_effort}
        return out

    def _payload(self, request: Request) -> dict[str, Any]:
        system: list[str] = []
        messages: list[dict[str, Any]] = []
        for message in request.messages:
            if message.role == "system":
                if message.images:
                    raise DataError("a system prompt with images: the Messages API takes text only there",
                                    doc_id=request.doc_id or None)
                system.append("".join(p.text for p in message.parts if isinstance(p, Text)))
                continue
            messages.append({"role": message.role, "content": self._blocks(message.parts)})
        payload: dict[str, Any] = {"model": self.spec.name, "messages": messages, **self.sent_settings(request.generation)}
        if any(system):
            payload["system"] = "\n\n".join(s for s in system if s)
        return payload

    def _blocks(self, parts: Any) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for part in parts:
            if isinstance(part, Text):
                if not part.text:
                    continue
                if blocks and blocks[-1]["type"] == "text":
                    blocks[-1] = {"type": "text", "text": blocks[-1]["text"] + part.text}
                else:
                    blocks.append({"type": "text", "text": part.text})
            elif isinstance(part, Image):
                media_type, data = split_data_url(self.encoder.data_url(part))
                blocks.append({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        return blocks

    async def _probe(self, client: anthropic.AsyncAnthropic) -> None:
        await client.with_options(max_retries=min(2, self.args.max_retries)).models.retrieve(self.spec.name)

    def _probe_failure(self, exc: BaseException) -> tuple[int, str] | None:
        if isinstance(exc, anthropic.APIStatusError):
            return exc.status_code, error_detail(exc.response.content)
        return None

    # -- the call ------------------------------------------------------------------------
    async def _call(self, client: anthropic.AsyncAnthropic, payload: dict[str, Any]) -> Reply:
        counter = AttemptCounter()
        token = ATTEMPTS.set(counter)
        try:
            message = await client.messages.create(**payload)
        except anthropic.APIStatusError as exc:
            detail = error_detail(exc.response.content)
            self.fatal(exc.status_code, detail)
            status = exc.status_code
            if is_context_overflow(status, detail, None):
                return self.failed(f"{CONTEXT_OVERFLOW}: HTTP {status}: {detail}", counter.attempts, False,
                                   FailureKind.CONTEXT_OVERFLOW)
            return self.failed(f"HTTP {status}: {detail}", counter.attempts, status in (408, 409, 429) or status >= 500)
        except anthropic.APIConnectionError as exc:
            return self.failed(transport_reason(exc, self.args.timeout, isinstance(exc, anthropic.APITimeoutError)),
                               counter.attempts, True)
        finally:
            ATTEMPTS.reset(token)
        return self.message_reply(message, counter.attempts)

    def message_reply(self, message: Any, attempts: int = 1) -> Reply:
        """A Messages API answer as a reply: its text and thinking, stop reason and tokens."""
        texts = [b.text for b in message.content if getattr(b, "type", None) == "text"]
        thoughts = [b.thinking for b in message.content if getattr(b, "type", None) == "thinking" and b.thinking]
        stop = message.stop_reason
        finish = STOP_REASONS.get(stop, stop) if stop else None
        usage = message.usage
        cached = usage.cache_read_input_tokens
        prompt = usage.input_tokens + (cached or 0) + (usage.cache_creation_input_tokens or 0)
        reasoning = "\n\n".join(thoughts) or None
        text = "".join(texts)
        if not texts and reasoning is None and finish != LENGTH:
            return self.failed(f"the reply has no content (stop_reason={stop})", attempts, False)
        return Reply(text=text, reasoning=reasoning, finish_reason=finish, prompt_tokens=prompt,
                     completion_tokens=usage.output_tokens, cached_tokens=cached)

