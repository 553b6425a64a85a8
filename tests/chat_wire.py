"""The OpenAI chat-completions wire format, as the test server reads and writes it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: request JSON -> the reply text, or a dict of its parts (see :func:`completion_body`)
ReplyFn = Callable[[dict], "str | dict | list"]
FAULT_KINDS = ("hang", "garbage", "disconnect", *("trickle", "huge", "huge_chunked", "gzip_bomb", "deep_json", "bad_content", "bad_part", "no_choices"))


def last_user_text(body: dict) -> str:
    """The text of the last user message (string content or its text parts joined)."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def echo_reply(body: dict) -> str:
    return f"reply to: {last_user_text(body)}"


def validate_chat_request(body: Any) -> str | None:
    """Why ``body`` is not a well-formed chat-completions request, or None."""
    if not isinstance(body, dict):
        return "body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "'model' must be a non-empty string"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty list"
    for k, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "developer", "tool"):
            return f"messages[{k}]: bad role"
        content = m.get("content")
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            return f"messages[{k}].content must be a string or a list of parts"
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            if kind == "video_url":  # vLLM's server: a video, or its frames as data:video/jpeg;base64,<f1>,<f2>...
                video = (part.get("video_url") or {}).get("url")
                if isinstance(video, str) and video.startswith(("data:video/", "http://", "https://")):
                    continue
            url = (part.get("image_url") or {}).get("url") if kind == "image_url" else None
            if not (isinstance(url, str) and url.startswith(("data:image/", "http://", "https://"))):
                return f"messages[{k}].content[{j}]: bad part"
    if body.get("stream"):
        return "streaming is not supported by the test server"
    return None


@dataclass
class Fault:
    """An injected failure for the next ``times`` matching calls."""

    kind: int | str  # an HTTP status, or one of FAULT_KINDS
    times: int = 1
    #: a substring of the last user text, or a predicate on the request JSON; None: any call
    match: str | Callable[[dict], bool] | None = None
    retry_after: float | None = None  # seconds, sent as Retry-After and retry-after-ms
    hang_seconds: float = 60.0  # a hang ends early when the client disconnects
    #: an HTTP status fault's error message and code (default: "injected <status>")
    message: str | None = None
    code: str | None = None
    applied: int = 0

    def matches(self, prompt: str, body: dict) -> bool:
        if self.applied >= self.times or self.match is None:
            return self.applied < self.times
        return self.match in prompt if isinstance(self.match, str) else bool(self.match(body))


@dataclass
class Call:
    """One logged request (any path)."""

    index: int
    method: str
    path: str
    body: Any  # parsed JSON, or None
    prompt: str
    started: float
    finished: float | None = None
    status: int | None = None  # None: no response was sent (hang or disconnect)
    fault: str | None = None
    reply: str | None = None
    query: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def error_body(message: str, kind: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def completion_body(body: dict, text: "str | dict | list", index: int) -> dict:
    """A chat.completion response carrying ``text``; or, for a dict, its ``content`` (None: no
    content), its ``reasoning_content`` / ``reasoning`` beside it (as vLLM's reasoning parsers and
    DeepSeek's API send it), its ``finish_reason`` (default ``stop``) and ``reasoning_tokens``
    (in ``usage.completion_tokens_details``). A list: one choice per item (a reply to ``n``), as
    OpenAI answers: ``choices[i].index`` i, the prompt's tokens once in ``usage`` and the
    completion tokens of every choice added up."""
    if isinstance(text, list):
        bodies = [completion_body(body, item, index) for item in text]
        out = bodies[0]
        out["choices"] = [{**b["choices"][0], "index": i} for i, b in enumerate(bodies)]
        completion = sum(b["usage"]["completion_tokens"] for b in bodies)
        out["usage"] = {**out["usage"], "completion_tokens": completion, "total_tokens": out["usage"]["prompt_tokens"] + completion}
        return out
    reply = {"content": text} if isinstance(text, str) else dict(text)
    content = reply.get("content")
    message = {"role": "assistant", "content": content}
    for key in ("reasoning_content", "reasoning"):
        if key in reply:
            message[key] = reply[key]
    prompt_tokens = sum(len(json.dumps(m.get("content", "")).split()) for m in body["messages"])
    completion_tokens = len((content or "").split()) + len(str(reply.get("reasoning_content") or reply.get("reasoning") or "").split())
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    if "reasoning_tokens" in reply:
        usage["completion_tokens_details"] = {"reasoning_tokens": reply["reasoning_tokens"]}
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": reply.get("finish_reason", "stop"), "logprobs": None}],
        "usage": usage,
    }
