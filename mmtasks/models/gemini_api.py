"""The ``gemini`` backend: Gemini through the ``google-genai`` SDK (``genai.Client(...).aio``; the
``gemini`` extra), on the Gemini API or, with ``vertexai=true,project=...,location=...``, on
Vertex AI (the SDK's own options; Vertex authenticates with Google's application default
credentials, not a key).

What is sent (``models.generateContent``): the system messages as ``system_instruction``; every
other message (``assistant`` as ``model``) with its parts in order: text parts and ``inline_data``
images (several per message); a video placed whole (``{{ video(i) }}``) as its sampled frames in
place (``video=frames``, the default) or, with ``video=inline``, as the video file itself inline
with ``video_metadata.fps`` set so Gemini samples as many frames as the task's sampler chose; a
file over ``inline_video_max_bytes`` (Gemini's inline request limit) is uploaded through the Files
API instead (once per run and file, waited for until Gemini has processed it, at most
``upload_polls`` checks) and referenced by its URI (``file_data``); a file over
``upload_max_bytes`` fails that request, saying so. ``generation_config``: ``max_output_tokens``, ``temperature`` (0 for greedy), ``top_p``,
``top_k``, ``seed``, ``stop_sequences``, ``presence_penalty``, ``frequency_penalty``, and
``thinking_config`` (``thinking_budget``; ``reasoning_effort`` as ``thinking_level``) with
``include_thoughts`` so the thought summaries come back; ``n`` as ``candidate_count``, the repeats of a
document drawn in one call (:mod:`mmtasks.models.drawn`: candidate i answers repeat i). ``logit_bias``
is refused.

What is read: the answer's text parts; the ``thought`` parts as ``reasoning``; ``finish_reason``
(``STOP``: ``stop``; ``MAX_TOKENS``: ``length``, counted as truncation; the safety reasons:
``content_filter``; others in lower case); ``usage_metadata``: prompt, ``cached``
(``cached_content_token_count``), ``reasoning`` (``thoughts_token_count``) and ``completion``
(candidates plus thoughts, as OpenAI counts reasoning inside completion tokens).

Keys: $GEMINI_API_KEY goes only to generativelanguage.googleapis.com (https) and the hosts in
$MMTASKS_GEMINI_KEY_HOSTS unless ``api_key_env=`` names it. Retries: the SDK's own retry does not
read Retry-After, so the backend retries 408, 429 and 5xx itself, waiting what the answer's
``Retry-After`` header or ``RetryInfo.retryDelay`` says (else 0.5 s doubling, at most 8 s), under
the guarded transport (:mod:`mmtasks.models.api_base`).
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import os
import re
from pathlib import Path
from typing import Any, Literal

from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import Field

from mmtasks.core.conversation import Image, Text, VideoRun, video_runs
from mmtasks.core.reasoning import LENGTH
from mmtasks.core.request import FailureKind, GenerationConfig, Reply, Request
from mmtasks.errors import DataError
from mmtasks.models.api_base import APIArgs, APIModel, split_data_url, transport_reason
from mmtasks.models.base import ModelContext, ModelSpec
from mmtasks.models.openai_http import http
from mmtasks.models.openai_payload import CONTEXT_OVERFLOW, is_context_overflow
from mmtasks.models.openai_transport import ATTEMPTS, AttemptCounter

#: Gemini's finish reasons as finish reasons (others: the reason in lower case)
FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": LENGTH, "SAFETY": "content_filter", "RECITATION": "content_filter",
                  "BLOCKLIST": "content_filter", "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
                  "IMAGE_SAFETY": "content_filter"}
#: how a part names a video to upload before the request is sent (replaced by its URI)
_UPLOAD = "mmtasks-upload:"
#: the longest wait between retries that an answer may ask for (seconds)
MAX_RETRY_WAIT = 60.0


class GeminiArgs(APIArgs):
    """Model args of the ``gemini`` backend."""

    api_version: str | None = None
    """The API version in the path (default: the SDK's, ``v1beta`` for the Gemini API)."""
    vertexai: bool = False
    """Use Vertex AI (application default credentials) instead of the Gemini API."""
    project: str | None = None
    """The Google Cloud project (Vertex AI)."""
    location: str | None = None
    """The Google Cloud region (Vertex AI)."""
    video: Literal["frames", "inline"] = "frames"
    """How a video placed whole is sent: ``frames`` (its sampled frames as images) or ``inline``
    (the file itself, with the sampled frame rate)."""
    inline_video_max_bytes: int = Field(20_000_000, ge=1024, le=2_000_000_000)
    """The largest video file sent inline (Gemini's inline request limit is 20 MB); larger ones
    are uploaded through the Files API."""
    upload_max_bytes: int = Field(2_000_000_000, ge=1024, le=2_000_000_000)
    """The largest video file uploaded (the Files API's limit is 2 GB)."""
    upload_polls: int = Field(60, ge=1, le=10_000)
    """How many times an uploaded video's state is checked (one second apart) before the request
    fails for want of it being processed."""


class GeminiModel(APIModel):
    """Gemini through google-genai; see the module docstring."""

    provider = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com"
    default_key_env = "GEMINI_API_KEY"
    key_hosts = ("generativelanguage.googleapis.com",)
    args_model = GeminiArgs
    example = "gemini:gemini-2.5-flash"
    takes_settings = frozenset({"top_k", "presence_penalty", "frequency_penalty", "reasoning_effort", "thinking_budget", "n"})

    def _make_client(self, session: Any) -> genai.Client:
        options = types.HttpOptions(base_url=None if self.args.vertexai and not self.args.base_url else self.base_url + "/",
                                    api_version=self.args.api_version, headers=dict(self.args.default_headers) or None,
                                    timeout=int(self.args.timeout * 1000), httpx_async_client=session)
        if self.args.vertexai:
            return genai.Client(vertexai=True, project=self.args.project, location=self.args.location, http_options=options)
        # vertexai=False: the environment (GOOGLE_GENAI_USE_VERTEXAI) does not switch the endpoint under the key
        return genai.Client(vertexai=False, api_key=self._api_key or "EMPTY", http_options=options)

    def _default_base_url(self) -> str:
        if self.args.vertexai:  # the SDK's regional endpoint, named here for messages and the cache identity
            return f"https://{self.args.location or os.environ.get('GOOGLE_CLOUD_LOCATION') or 'global'}-aiplatform.googleapis.com"
        return self.default_base_url

    def _uses_key(self) -> bool:
        return not self.args.vertexai  # Vertex AI: application default credentials

    @classmethod
    def refused_settings(cls, generation: GenerationConfig) -> list[str]:
        refused = super().refused_settings(generation)
        levels = [level.value.lower() for level in types.ThinkingLevel if level.value != "THINKING_LEVEL_UNSPECIFIED"]
        effort = generation.reasoning_effort
        if effort is not None and effort.lower() not in levels:
            refused.append(f"reasoning_effort={effort} (Gemini's thinking_level is one of {', '.join(levels)})")
        return refused

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None) -> None:
        super().__init__(spec, context)
        #: (path, size, mtime) -> the Files API URI of a video uploaded in this run
        self._uploads: dict[tuple[str, int, int], str] = {}
        self._upload_locks: dict[tuple[str, int, int], asyncio.Lock] = {}

    async def _aclose(self, client: genai.Client) -> None:
        await client.aio.aclose()

    # -- the request -------------------------------------------------------------------
    def _config(self, generation: GenerationConfig) -> types.GenerateContentConfig:
        fields: dict[str, Any] = {"max_output_tokens": generation.max_new_tokens}
        mode = generation.sampling_mode()
        if mode == "greedy":
            fields["temperature"] = 0.0
        elif mode == "sample":
            fields.update(temperature=generation.temperature if generation.temperature is not None else 1.0,
                          top_p=generation.top_p)
        if mode != "greedy" and generation.top_k is not None:
            fields["top_k"] = generation.top_k
        if generation.seed is not None:
            fields["seed"] = generation.seed
        if generation.stop:
            fields["stop_sequences"] = list(generation.stop)
        if generation.n is not None and generation.n > 1:
            fields["candidate_count"] = generation.n
        fields.update(generation.penalties())
        if generation.thinking_budget is not None or generation.reasoning_effort is not None:
            fields["thinking_config"] = types.ThinkingConfig(
                include_thoughts=True, thinking_budget=generation.thinking_budget,
                thinking_level=types.ThinkingLevel(generation.reasoning_effort.upper()) if generation.reasoning_effort else None)
        return types.GenerateContentConfig(**fields)

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any]:
        """``generation_config`` as the SDK sends it (its JSON names), what :meth:`_payload` sends."""
        return self._config(generation).model_dump(mode="json", exclude_none=True, by_alias=True)

    def _payload(self, request: Request) -> dict[str, Any]:
        system: list[str] = []
        contents: list[types.Content] = []
        for message in request.messages:
            if message.role == "system":
                if message.images:
                    raise DataError("a system prompt with images: Gemini's system_instruction is text",
                                    doc_id=request.doc_id or None)
                system.append("".join(p.text for p in message.parts if isinstance(p, Text)))
                continue
            role = "model" if message.role == "assistant" else "user"
            contents.append(types.Content(role=role, parts=self._parts(message.parts, request)))
        config = self._config(request.generation)
        if any(system):
            config.system_instruction = "\n\n".join(s for s in system if s)
        return {"model": self.spec.name, "contents": contents, "config": config}

    def _parts(self, parts: Any, request: Request) -> list[types.Part]:
        out: list[types.Part] = []
        seq = video_runs(parts) if self.args.video == "inline" else list(parts)
        for part in seq:
            if isinstance(part, Text):
                if not part.text:
                    continue
                if out and out[-1].text is not None and out[-1].thought is None:
                    out[-1] = types.Part(text=out[-1].text + part.text)
                else:
                    out.append(types.Part(text=part.text))
            elif isinstance(part, VideoRun):
                out.append(self._video(part, request))
            elif isinstance(part, Image):
                mime, data = split_data_url(self.encoder.data_url(part))
                out.append(types.Part(inline_data=types.Blob(mime_type=mime, data=base64.b64decode(data))))
        return out

    def _video(self, run: VideoRun, request: Request) -> types.Part:
        path = run.frames[0].path
        if path is None:
            raise DataError("video=inline: the video has no file to send", doc_id=request.doc_id or None)
        size = path.stat().st_size
        mime = mimetypes.guess_type(path.name)[0] or ""
        if not mime.startswith("video/"):
            raise DataError(f"video=inline sends video files (mp4, mov, webm ...); {path.name} is {mime or 'of an unknown type'}: "
                            "send its frames with video=frames", doc_id=request.doc_id or None)
        if size > self.args.upload_max_bytes:
            raise DataError(f"video {path.name} is {size} bytes, over upload_max_bytes={self.args.upload_max_bytes} "
                            "(the Files API's limit): send its frames with video=frames", doc_id=request.doc_id or None)
        fps = len(run.frames) / run.clip.duration if run.clip.duration > 0 else None
        metadata = types.VideoMetadata(fps=fps) if fps else None
        if size > self.args.inline_video_max_bytes:  # uploaded by _call, then referenced by its URI
            return types.Part(file_data=types.FileData(file_uri=f"{_UPLOAD}{path}", mime_type=mime), video_metadata=metadata)
        return types.Part(inline_data=types.Blob(mime_type=mime, data=path.read_bytes()), video_metadata=metadata)

    async def _uploaded(self, client: genai.Client, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with every video marked for upload uploaded (once per file and run) and
        referenced by the URI the Files API gave it."""
        parts = [part for content in payload["contents"] for part in content.parts or []
                 if part.file_data is not None and (part.file_data.file_uri or "").startswith(_UPLOAD)]
        for part in parts:
            assert part.file_data is not None and part.file_data.file_uri is not None
            path = Path(part.file_data.file_uri.removeprefix(_UPLOAD))
            stat = path.stat()
            key = (str(path), stat.st_size, stat.st_mtime_ns)
            lock = self._upload_locks.setdefault(key, asyncio.Lock())
            async with lock:
                if key not in self._uploads:
                    self._uploads[key] = await self._upload(client, path, part.file_data.mime_type or "video/mp4")
            part.file_data = types.FileData(file_uri=self._uploads[key], mime_type=part.file_data.mime_type)
        return payload

    async def _upload(self, client: genai.Client, path: Path, mime: str) -> str:
        """Upload ``path`` and wait until Gemini has processed it; its URI."""
        file = await client.aio.files.upload(file=path, config=types.UploadFileConfig(mime_type=mime))
        for _ in range(self.args.upload_polls):
            state = getattr(file.state, "value", file.state)
            if state == "ACTIVE" and file.uri:
                return file.uri
            if state == "FAILED":
                raise DataError(f"Gemini could not process the uploaded video {path.name} ({file.name}: FAILED)")
            await asyncio.sleep(1.0)
            file = await client.aio.files.get(name=file.name or "")
        raise DataError(f"the uploaded video {path.name} ({file.name}) was not processed after {self.args.upload_polls} checks")

    async def _probe(self, client: genai.Client) -> None:
        await client.aio.models.get(model=self.spec.name)

    def _probe_failure(self, exc: BaseException) -> tuple[int, str] | None:
        if isinstance(exc, genai_errors.APIError):
            return int(exc.code or 0), str(exc.message or exc.status or "")
        return None

    # -- the call ------------------------------------------------------------------------
    async def _call(self, client: genai.Client, payload: dict[str, Any]) -> Reply:
        return (await self._call_all(client, payload))[0]

    async def _call_all(self, client: genai.Client, payload: dict[str, Any]) -> list[Reply]:
        """The call's replies: one per candidate asked for (``candidate_count``; a failure answers each)."""
        config = payload.get("config")
        n = max(1, getattr(config, "candidate_count", None) or 1)
        counter = AttemptCounter()
        token = ATTEMPTS.set(counter)
        try:
            try:
                payload = await self._uploaded(client, payload)
            except DataError as exc:
                return [Reply.failure(f"video: {exc.render()}")] * n
            except genai_errors.APIError as exc:
                self.fatal(int(exc.code or 0), str(exc.message or exc.status or ""))
                return [self.failed(f"video upload: HTTP {exc.code}: {exc.message or exc.status}", counter.attempts, False)] * n
            response = None
            for attempt in range(self.args.max_retries + 1):
                last = attempt == self.args.max_retries
                try:
                    response = await client.aio.models.generate_content(**payload)
                    break
                except genai_errors.APIError as exc:
                    status, detail = int(exc.code or 0), str(exc.message or exc.status or "")
                    self.fatal(status, detail)
                    retried = status in (408, 429) or status >= 500
                    if not retried or last:
                        if is_context_overflow(status, detail, None):
                            return [self.failed(f"{CONTEXT_OVERFLOW}: HTTP {status}: {detail}", counter.attempts, False,
                                                FailureKind.CONTEXT_OVERFLOW)] * n
                        return [self.failed(f"HTTP {status}: {detail}", counter.attempts, retried)] * n
                    await asyncio.sleep(retry_wait(exc, attempt))
                except http.TransportError as exc:
                    if last:
                        return [self.failed(transport_reason(exc, self.args.timeout, isinstance(exc, http.TimeoutException)),
                                            counter.attempts, True)] * n
                    await asyncio.sleep(min(8.0, 0.5 * 2 ** attempt))
        finally:
            ATTEMPTS.reset(token)
        assert response is not None
        answered = len(response.candidates or []) if n > 1 else 1
        return [self._reply(response, counter.attempts, i) for i in range(min(n, max(answered, 1)))]

    def _reply(self, response: types.GenerateContentResponse, attempts: int, index: int = 0) -> Reply:
        """The reply of ``response.candidates[index]``, with the call's usage."""
        usage = response.usage_metadata
        counts: dict[str, Any] = {}
        if usage is not None:
            thoughts = usage.thoughts_token_count
            completion = None if usage.candidates_token_count is None and thoughts is None else \
                (usage.candidates_token_count or 0) + (thoughts or 0)
            counts = {"prompt_tokens": usage.prompt_token_count, "completion_tokens": completion,
                      "reasoning_tokens": thoughts, "cached_tokens": usage.cached_content_token_count}
        if not response.candidates:
            feedback = response.prompt_feedback
            reason = getattr(getattr(feedback, "block_reason", None), "value", None) or "no candidates"
            return Reply(text=None, error=f"the prompt was blocked ({reason})", finish_reason="content_filter", **counts)
        candidate = response.candidates[index]
        raw = getattr(candidate.finish_reason, "value", candidate.finish_reason)
        finish = FINISH_REASONS.get(raw, str(raw).lower()) if raw else None
        parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
        texts = [p.text for p in parts if p.text is not None and not p.thought]
        thoughts_text = "\n\n".join(p.text for p in parts if p.text and p.thought) or None
        if not texts and thoughts_text is None and finish != LENGTH:
            return self.failed(f"the reply has no content (finish_reason={raw})", attempts, False)
        return Reply(text="".join(texts), reasoning=thoughts_text, finish_reason=finish, **counts)


_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def retry_wait(exc: genai_errors.APIError, attempt: int) -> float:
    """Seconds to wait before the next attempt: the answer's ``Retry-After`` header (or
    ``retry-after-ms``), else its ``RetryInfo.retryDelay`` (``"30s"``), else 0.5 s doubling up
    to 8 s; never more than :data:`MAX_RETRY_WAIT`."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name) if hasattr(headers, "get") else None
        try:
            if value is not None:
                return min(MAX_RETRY_WAIT, max(0.0, float(value) * scale))
        except ValueError:
            pass
    details = exc.details.get("error", {}).get("details") if isinstance(exc.details, dict) and isinstance(exc.details.get("error"), dict) else None
    for item in details if isinstance(details, list) else []:
        match = _DELAY.match(str(item.get("retryDelay", ""))) if isinstance(item, dict) else None
        if match:
            return min(MAX_RETRY_WAIT, float(match.group(1)))
    return min(8.0, 0.5 * 2 ** attempt)
