"""Chat-completions request bodies and replies in the OpenAI wire format."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mmtasks.core.conversation import Message, Text, VideoRun, video_runs
from mmtasks.core.request import GenerationConfig


class BadResponse(ValueError):
    """A 200 response whose body is not a chat completion."""


def chat_messages(messages: Sequence[Message], image_urls: Iterator[str], detail: str | None = None,
                  video_url: Callable[[VideoRun], str] | None = None) -> list[dict]:
    """Messages in the wire format, parts in their exact order.

    A message without images is sent with a plain string content (what every
    server accepts, including for system and assistant turns); with images it
    becomes a list of ``text`` and ``image_url`` parts. Adjacent text parts are
    joined and empty ones dropped, so a server never inserts separators of its
    own between them. ``image_urls`` yields one data URL per image, in order.

    ``detail``: OpenAI's ``detail`` of every image (the ``image_detail`` model argument); None:
    each image's own (``Image.detail``, from the task's ``prompt.image_detail``), else none sent.

    ``video_url``: each video placed whole (every sampled frame in a row, :func:`video_runs`) is
    one ``video_url`` part holding the URL it gives (its frames then take no image URL).
    """
    out = []
    for message in messages:
        parts: list[dict] = []
        for part in (video_runs(message.parts) if video_url is not None else message.parts):
            if isinstance(part, VideoRun):
                assert video_url is not None
                parts.append({"type": "video_url", "video_url": {"url": video_url(part)}})
            elif isinstance(part, Text):
                if not part.text:
                    continue
                if parts and parts[-1]["type"] == "text":
                    parts[-1] = {"type": "text", "text": parts[-1]["text"] + part.text}
                else:
                    parts.append({"type": "text", "text": part.text})
            else:
                image_url: dict[str, str] = {"url": next(image_urls)}
                # the model's image_detail argument, else the detail the task gives the image
                chosen = detail if detail is not None else part.detail
                if chosen is not None:
                    image_url["detail"] = chosen
                parts.append({"type": "image_url", "image_url": image_url})
        if all(p["type"] == "text" for p in parts):
            content: str | list[dict] = "".join(p["text"] for p in parts)
        else:
            content = parts
        out.append({"role": message.role, "content": content})
    return out


def video_io_kwargs(runs: Sequence[VideoRun]) -> dict[str, Any]:
    """vLLM's per-request ``media_io_kwargs`` for videos sent as ``data:video/jpeg`` frames: every
    frame kept (``num_frames: -1``; vLLM keeps its default 32 otherwise), and, for a request with
    one video, its metadata (frame rate, indices of the frames sent, total frames, duration) so a
    model that reads timestamps (Qwen2.5/3-VL) gets the true ones; with several videos, whose
    metadata one request field cannot hold, the frames only."""
    video: dict[str, Any] = {"num_frames": -1}
    if len(runs) == 1:
        clip = runs[0].clip
        video.update(fps=clip.fps, frames_indices=list(clip.indices), total_num_frames=clip.total_frames,
                     duration=clip.duration)
    return {"media_io_kwargs": {"video": video}}


def generation_params(generation: GenerationConfig, max_tokens_param: str = "max_tokens",
                      chat_template_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Map :class:`GenerationConfig` onto request fields.

    Follows :meth:`GenerationConfig.sampling_mode`: ``default`` leaves temperature
    and top_p to the server's defaults; ``greedy`` sends temperature 0; ``sample``
    sends temperature and top_p as set. ``top_k`` and ``min_p`` (when set, unless greedy)
    and ``repetition_penalty`` go in the body's top level, where vLLM's server reads its
    extra sampling parameters (what the OpenAI SDK's ``extra_body`` does: "directly merge them
    into the JSON payload", https://docs.vllm.ai/en/stable/serving/openai_compatible_server/); OpenAI's own API
    refuses them with a 400, which names them. ``chat_template_kwargs`` (``chat_template_kwargs``,
    the model arg, under the request's own, key by key) is the body field vLLM's server renders
    its chat template with; ``reasoning_effort`` is OpenAI's (and vLLM's) field of that name, as are
    ``presence_penalty``, ``frequency_penalty`` and ``logit_bias`` (token ids as strings).
    """
    params: dict[str, Any] = {max_tokens_param: generation.max_new_tokens}
    mode = generation.sampling_mode()
    if mode == "greedy":
        params["temperature"] = 0.0
    elif mode == "sample":
        params["temperature"] = generation.temperature if generation.temperature is not None else 1.0
        params["top_p"] = generation.top_p
    if mode != "greedy":
        for name in ("top_k", "min_p"):
            if getattr(generation, name) is not None:
                params[name] = getattr(generation, name)
    if generation.repetition_penalty is not None:
        params["repetition_penalty"] = generation.repetition_penalty
    # OpenAI's own fields (vLLM's server reads them too); logit_bias keys are token ids as strings
    params.update({k: ({str(t): b for t, b in v.items()} if k == "logit_bias" else v) for k, v in generation.penalties().items()})
    if generation.seed is not None:
        params["seed"] = generation.seed
    if generation.n is not None and generation.n > 1:
        params["n"] = generation.n
    if generation.stop:
        params["stop"] = list(generation.stop)
    if generation.reasoning_effort is not None:
        params["reasoning_effort"] = generation.reasoning_effort
    template_kwargs = {**(chat_template_kwargs or {}), **generation.chat_template_kwargs}
    if template_kwargs:
        params["chat_template_kwargs"] = template_kwargs
    return params


def request_settings(params: dict[str, Any], extra_body: dict[str, Any]) -> dict[str, Any]:
    """Every field of a chat-completions body but the model and the messages: the generation
    ``params`` with ``extra_body`` over them (its ``chat_template_kwargs`` merged key by key,
    under the request's own)."""
    settings = {**params, **extra_body}
    if isinstance(extra_body.get("chat_template_kwargs"), dict) and "chat_template_kwargs" in params:
        settings["chat_template_kwargs"] = {**extra_body["chat_template_kwargs"], **params["chat_template_kwargs"]}
    return settings


def request_body(model: str, messages: list[dict], settings: dict[str, Any]) -> bytes:
    """The JSON body of a chat-completions call (serialised by the backend, off the event loop
    when it carries images: the SDK would do it on the loop, after walking it field by field).
    ``settings``: :func:`request_settings`, every field but the model and the messages."""
    body = {"model": model, "messages": messages, **settings}
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def completion_text(raw: bytes, choice: int = 0) -> str | None:
    """The reply text of a chat-completion body (of its ``choices[choice]``: ``n`` replies); None
    when the model gave no content.

    Raises :class:`BadResponse` when the body is not a chat completion: not JSON (or nested
    too deeply to parse), no ``choices[0].message`` object, or a content that is neither a
    string, nor null, nor a list of parts whose texts are strings.
    """
    try:
        data = json.loads(raw)
        message = data["choices"][choice]["message"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        raise BadResponse(f"not a chat completion ({type(exc).__name__}): {_head(raw)}") from None
    if not isinstance(message, dict):
        raise BadResponse("choices[0].message is not an object")
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with content parts
        texts = [p.get("text", "") if isinstance(p, dict) else p for p in content]
        if not all(isinstance(t, str) for t in texts):
            raise BadResponse("choices[0].message.content has a part whose text is not a string")
        content = "".join(texts)
    elif content is not None and not isinstance(content, str):
        raise BadResponse(f"choices[0].message.content is a {type(content).__name__}, not a string")
    if isinstance(content, str):
        return content
    refusal = message.get("refusal")
    return refusal if isinstance(refusal, str) else None


@dataclass(frozen=True)
class CompletionParts:
    """What a chat completion says beside its text: the model's reasoning (``reasoning_content``,
    as vLLM's reasoning parsers and DeepSeek's API send it, or ``reasoning``, OpenRouter's and
    newer vLLM's name), why it ended, and its token counts (``usage``: prompt, completion, the
    completion's reasoning tokens, the prompt's cached tokens) as the server reports them."""

    reasoning: str | None = None
    finish_reason: str | None = None
    reasoning_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None


def completion_parts(raw: bytes, index: int = 0) -> CompletionParts:
    """The :class:`CompletionParts` of a chat-completion body (one that :func:`completion_text`
    read), of its ``choices[index]``; a field of the wrong type is left out, never an error. The
    ``usage`` is the call's (all its choices)."""
    try:
        data = json.loads(raw)
        choice = data["choices"][index]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        return CompletionParts()
    if not isinstance(message, dict) or not isinstance(choice, dict):
        return CompletionParts()
    reasoning = next((message[k] for k in ("reasoning_content", "reasoning") if isinstance(message.get(k), str) and message[k]), None)
    finish = choice.get("finish_reason")
    usage: dict[str, Any] = data["usage"] if isinstance(data, dict) and isinstance(data.get("usage"), dict) else {}
    details: dict[str, Any] = usage["completion_tokens_details"] if isinstance(usage.get("completion_tokens_details"), dict) else {}
    prompt_details: dict[str, Any] = usage["prompt_tokens_details"] if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    return CompletionParts(reasoning=reasoning, finish_reason=finish if isinstance(finish, str) else None,
                           reasoning_tokens=_count(details.get("reasoning_tokens")),
                           completion_tokens=_count(usage.get("completion_tokens")),
                           prompt_tokens=_count(usage.get("prompt_tokens")),
                           cached_tokens=_count(prompt_details.get("cached_tokens")))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def check_chat_completion(request: Any, status: int, body: bytes) -> str | None:
    """Why a 200 answer to a chat-completions call is not a chat completion (None: it is one);
    the backend's transport runs this on every answer, so a malformed one is retried.
    ``request`` is the SDK's HTTP library's request (``httpx2.Request`` or ``httpx.Request``)."""
    if status != 200 or request.method != "POST" or not request.url.path.endswith("/chat/completions"):
        return None
    try:
        completion_text(body)
    except BadResponse as exc:
        return f"invalid response: {exc}"
    return None


def _head(raw: bytes, limit: int = 120) -> str:
    return repr(raw[:limit]) + ("..." if len(raw) > limit else "")


def choice_count(raw: bytes) -> int:
    """How many choices a chat-completion body holds (0: none readable)."""
    try:
        choices = json.loads(raw)["choices"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return 0
    return len(choices) if isinstance(choices, list) else 0


def finish_reason(raw: bytes, choice: int = 0) -> str:
    try:
        return str(json.loads(raw)["choices"][choice].get("finish_reason"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
        return "unknown"


def error_detail(raw: bytes, limit: int = 300) -> str:
    """The server's error message from an error response body (JSON or text), shortened."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            text = str(err.get("message") or err.get("detail") or err)
        elif isinstance(err, str):
            text = err
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_code(raw: bytes) -> str | None:
    try:
        err = json.loads(raw).get("error")
    except (ValueError, AttributeError, RecursionError):
        return None
    return err.get("code") if isinstance(err, dict) else None


#: the start of a failed reply's error when the prompt did not fit the model's context
CONTEXT_OVERFLOW = "context_overflow"
_OVERFLOW = re.compile(
    r"context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|input is too long"
    r"|exceeds? the (model's )?(max|limit)|tokens \+ `?max_new_tokens`? must be",
    re.IGNORECASE,
)


def is_context_overflow(status: int, detail: str, code: str | None) -> bool:
    """Whether an error answer says the prompt (with max_tokens) does not fit the context:
    OpenAI's ``context_length_exceeded`` code, or the messages of vLLM, TGI and others."""
    if status not in (400, 413, 422):
        return False
    return code in ("context_length_exceeded", "string_above_max_length") or bool(_OVERFLOW.search(detail))
