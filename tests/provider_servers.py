"""Loopback servers speaking Anthropic's Messages API and the Gemini API's ``generateContent``,
for the ``anthropic`` and ``gemini`` backends' tests: :class:`tests.chat_server.ChatServer` (real
HTTP, logs, counters, injected faults with Retry-After) with each provider's wire format.

Every request body is validated against the provider SDK's own types before it is answered (a
body the SDK's types refuse is a 400 naming why): Anthropic's ``MessageCreateParamsNonStreaming``
(a TypedDict, through pydantic, unknown fields refused), Gemini's ``Content`` and
``GenerationConfig`` pydantic models (their JSON names, unknown fields refused).

Replies: ``reply`` gives the text, or a dict with ``content``, ``thinking`` (Claude's thinking
block / Gemini's thought part), ``stop_reason`` (the provider's own word: ``end_turn``,
``max_tokens`` / ``STOP``, ``MAX_TOKENS``) and ``cached`` (cached prompt tokens). Usage counts
are the server's own rule, so tests can compute them by hand: prompt tokens = whitespace-separated
words of every text part plus 10 per image, completion = words of the answer plus its thinking.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tests.chat_server import ChatServer

IMAGE_TOKENS = 10


def _words(text: str | None) -> int:
    return len((text or "").split())


class AnthropicServer(ChatServer):
    """``POST /v1/messages`` as Anthropic's API answers it (``x-api-key`` when ``api_key`` is set)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("reply", lambda body: f"reply to: {self.prompt_of(body)}")
        kwargs.setdefault("models", ("claude-test",))
        super().__init__(**kwargs)
        from anthropic.types import message_create_params as at

        self._params = TypeAdapter(at.MessageCreateParamsNonStreaming)
        #: the fields the SDK's type knows (a TypedDict takes no config forbidding others: checked here)
        self._fields = at.MessageCreateParamsNonStreaming.__required_keys__ | at.MessageCreateParamsNonStreaming.__optional_keys__

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def is_chat(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/v1/messages"

    def authorized(self, headers: Any) -> tuple[bool, str]:
        """``x-api-key``, or the bearer token newer SDKs send."""
        got = headers.get("x-api-key") or (headers.get("Authorization") or "").removeprefix("Bearer ")
        return got == self.api_key, got

    @staticmethod
    def _texts(content: Any) -> list[str]:
        if isinstance(content, str):
            return [content]
        return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]

    def prompt_of(self, body: dict) -> str:
        for message in reversed(body.get("messages") or []):
            if isinstance(message, dict) and message.get("role") == "user":
                return "".join(self._texts(message.get("content")))
        return ""

    def validate(self, body: Any) -> str | None:
        if not isinstance(body, dict):
            return "body must be a JSON object"
        unknown = set(body) - self._fields
        if unknown:
            return f"not a MessageCreateParams: unknown field {min(unknown)!r}"
        try:
            self._params.validate_python(body)
        except ValidationError as exc:
            err = exc.errors()[0]
            return f"not a MessageCreateParams: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}"
        if not body.get("messages"):
            return "messages: at least one message"
        return None

    def prompt_tokens(self, body: dict) -> int:
        system = body.get("system")
        count = _words(system) if isinstance(system, str) else 0
        for message in body["messages"]:
            content = message["content"]
            count += sum(_words(t) for t in self._texts(content))
            if isinstance(content, list):
                count += IMAGE_TOKENS * sum(1 for b in content if b.get("type") == "image")
        return count

    def answer(self, body: dict, reply: str | dict, index: int, path: str) -> dict:
        parts = {"content": reply} if isinstance(reply, str) else dict(reply)
        blocks: list[dict[str, Any]] = []
        if parts.get("thinking"):
            blocks.append({"type": "thinking", "thinking": parts["thinking"], "signature": "sig"})
        if parts.get("content") is not None:
            blocks.append({"type": "text", "text": parts["content"], "citations": None})
        cached = int(parts.get("cached", 0))
        return {"id": f"msg_{index}", "type": "message", "role": "assistant", "model": body["model"], "content": blocks,
                "stop_reason": parts.get("stop_reason", "end_turn"), "stop_sequence": None,
                "usage": {"input_tokens": self.prompt_tokens(body) - cached, "output_tokens":
                          _words(parts.get("content")) + _words(parts.get("thinking")),
                          "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}}

    def error(self, message: str, kind: str, code: str | None = None) -> dict:
        return {"type": "error", "error": {"type": kind, "message": message}}

    def other_route(self, method: str, path: str, call: Any, raw: bytes) -> tuple[Any, ...] | None:
        """``GET /v1/models/{id}``, as the SDK's ``models.retrieve`` asks."""
        if method == "GET" and path.startswith("/v1/models/"):
            model = path.removeprefix("/v1/models/")
            return self.model_answer(model, {"type": "model", "id": model, "display_name": model,
                                             "created_at": "2025-01-01T00:00:00Z"})
        return None


_GENERATE = re.compile(r"^/(v1beta|v1)/models/([^/:]+):generateContent$")
_TOP_LEVEL = {"contents", "systemInstruction", "generationConfig", "safetySettings", "tools", "toolConfig",
              "cachedContent", "labels"}


class GeminiServer(ChatServer):
    """``POST /v1beta/models/{model}:generateContent`` as the Gemini API answers it
    (``x-goog-api-key`` when ``api_key`` is set)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("reply", lambda body: f"reply to: {self.prompt_of(body)}")
        kwargs.setdefault("models", ("gemini-test",))
        super().__init__(**kwargs)
        #: uploaded files by id: their metadata, bytes, and how often their state was asked
        self.files: dict[str, dict[str, Any]] = {}
        #: checks an uploaded file answers PROCESSING to before it is ACTIVE
        self.processing_checks = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def is_chat(self, method: str, path: str) -> bool:
        return method == "POST" and bool(_GENERATE.match(path))

    def authorized(self, headers: Any) -> tuple[bool, str]:
        got = headers.get("x-goog-api-key") or ""
        return got == self.api_key, got

    def needs_key(self, method: str, path: str, query: str) -> bool:
        """The upload session's URL (``?upload_id=``) is the session's own capability, as Google's
        resumable uploads work: the SDK sends its bytes without the key."""
        return not (path.startswith("/upload/") and "upload_id=" in query)

    def model_of(self, body: dict, path: str) -> str:
        match = _GENERATE.match(path)
        return match.group(2) if match else ""

    @staticmethod
    def _texts(content: dict) -> list[str]:
        return [p["text"] for p in content.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]

    def prompt_of(self, body: dict) -> str:
        for content in reversed(body.get("contents") or []):
            if isinstance(content, dict) and content.get("role") == "user":
                return "".join(self._texts(content))
        return ""

    def validate(self, body: Any) -> str | None:
        from google.genai import types

        if not isinstance(body, dict):
            return "body must be a JSON object"
        unknown = set(body) - _TOP_LEVEL
        if unknown:
            return f"unknown field {min(unknown)!r}"
        try:
            for content in body.get("contents") or []:
                types.Content.model_validate_json(json.dumps(content))
            if "systemInstruction" in body:
                types.Content.model_validate_json(json.dumps(body["systemInstruction"]))
            if "generationConfig" in body:
                types.GenerationConfig.model_validate_json(json.dumps(body["generationConfig"]))
        except ValidationError as exc:
            err = exc.errors()[0]
            return f"not the SDK's types: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}"
        if not body.get("contents"):
            return "contents: at least one"
        return None

    def prompt_tokens(self, body: dict) -> int:
        contents = [*(body.get("contents") or []), *([body["systemInstruction"]] if "systemInstruction" in body else [])]
        count = 0
        for content in contents:
            count += sum(_words(t) for t in self._texts(content))
            count += IMAGE_TOKENS * sum(1 for p in content.get("parts") or [] if "inlineData" in p)
        return count

    def answer(self, body: dict, reply: str | dict | list, index: int, path: str) -> dict:
        if isinstance(reply, list):  # one candidate per item (candidateCount), the usage of all of them
            answers = [self.answer(body, item, index, path) for item in reply]
            out_all = answers[0]
            out_all["candidates"] = [{**a["candidates"][0], "index": i} for i, a in enumerate(answers)]
            out_all["usageMetadata"]["candidatesTokenCount"] = sum(a["usageMetadata"]["candidatesTokenCount"] for a in answers)
            return out_all
        parts = {"content": reply} if isinstance(reply, str) else dict(reply)
        out: list[dict[str, Any]] = []
        if parts.get("thinking"):
            out.append({"text": parts["thinking"], "thought": True})
        if parts.get("content") is not None:
            out.append({"text": parts["content"]})
        thoughts = _words(parts.get("thinking"))
        usage: dict[str, Any] = {"promptTokenCount": self.prompt_tokens(body), "candidatesTokenCount": _words(parts.get("content")),
                                 "totalTokenCount": 0}
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        if parts.get("cached"):
            usage["cachedContentTokenCount"] = int(parts["cached"])
        return {"candidates": [{"content": {"role": "model", "parts": out}, "index": 0,
                                "finishReason": parts.get("stop_reason", "STOP")}],
                "usageMetadata": usage, "modelVersion": self.model_of(body, path) or "gemini-test"}

    def error(self, message: str, kind: str, code: str | None = None) -> dict:
        status = {"rate_limit_exceeded": "RESOURCE_EXHAUSTED", "server_error": "INTERNAL",
                  "not_found_error": "NOT_FOUND"}.get(kind, "INVALID_ARGUMENT")
        return {"error": {"code": 400, "message": message, "status": status}}

    def other_route(self, method: str, path: str, call: Any, raw: bytes) -> tuple[Any, ...] | None:
        """``GET /{version}/models/{model}`` (the SDK's ``models.get``), and the Files API: the
        resumable upload (``POST /upload/{version}/files``, start, then the bytes with ``upload,
        finalize``) and ``GET /{version}/files/{id}``. An uploaded file is ``PROCESSING`` for the
        first :attr:`processing_checks` checks, then ``ACTIVE``."""
        match = re.match(r"^/(v1beta|v1)/models/([^/:]+)$", path)
        if method == "GET" and match:
            model = match.group(2)
            return self.model_answer(model, {"name": f"models/{model}", "displayName": model, "inputTokenLimit": 1048576,
                                             "outputTokenLimit": 65536, "supportedActions": ["generateContent"]})
        headers = {k.lower(): v for k, v in call.headers.items()}
        upload = re.match(r"^/upload/(v1beta|v1)/files$", path)
        if method == "POST" and upload and headers.get("x-goog-upload-command") == "start":
            file_id = f"f{len(self.files)}"
            from google.genai import types

            # the SDK's own File type reads the metadata (it sends snake_case names)
            meta = types.File.model_validate(json.loads(raw or b"{}").get("file", {}))
            self.files[file_id] = {"meta": meta, "data": b"", "checks": 0}
            url = f"{self.base_url}/upload/{upload.group(1)}/files?upload_id={file_id}"
            return 200, {}, {"X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active"}
        if method == "POST" and upload and "upload_id=" in call.query:
            file_id = call.query.split("upload_id=", 1)[1].split("&")[0]
            entry = self.files[file_id]
            entry["data"] += raw
            final = "finalize" in headers.get("x-goog-upload-command", "")
            return 200, {"file": self._file(file_id)} if final else {}, {"X-Goog-Upload-Status": "final" if final else "active"}
        got = re.match(r"^/(v1beta|v1)/files/([^/:]+)$", path)
        if method == "GET" and got and got.group(2) in self.files:
            self.files[got.group(2)]["checks"] += 1
            return 200, self._file(got.group(2))
        return None

    def _file(self, file_id: str) -> dict[str, Any]:
        entry = self.files[file_id]
        state = "ACTIVE" if entry["checks"] >= self.processing_checks else "PROCESSING"
        return {"name": f"files/{file_id}", "uri": f"{self.base_url}/v1beta/files/{file_id}", "state": state,
                "mimeType": entry["meta"].mime_type or "application/octet-stream", "sizeBytes": str(len(entry["data"]))}