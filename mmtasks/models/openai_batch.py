"""``--batch`` / ``--judge-batch`` on the ``openai`` backend: OpenAI's Batch API (half price).

Each wave is one batch (:mod:`mmtasks.models.batch_api`: the loop, the state file, retries): the
chat-completions bodies the interactive backend would send, one JSONL line each
(``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``), uploaded through
``POST /files`` (``purpose=batch``) and submitted with ``POST /batches``; polled with
``GET /batches/ID``; the output and error files read back with ``GET /files/ID/content``.
Retried in a new batch: entries that expired (``batch_expired``) or failed with 429 or 5xx.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import httpx as http
import openai

from mmtasks.core.request import Reply, Request
from mmtasks.errors import ModelError
from mmtasks.models.base import ModelContext, ModelSpec
from mmtasks.models.batch_api import BatchWaves, log
from mmtasks.models.openai_api import OpenAIModel
from mmtasks.models.openai_payload import BadResponse, completion_parts, completion_text, error_detail

#: batch states after which nothing changes
FINAL_STATES = ("completed", "failed", "expired", "cancelled")
#: entry error codes worth another batch
RETRYABLE_CODES = ("batch_expired", "rate_limit_exceeded", "server_error")
ENDPOINT: Final = "/v1/chat/completions"


class OpenAIBatchModel(BatchWaves, OpenAIModel):
    """The ``openai`` backend sending each wave as one Batch API job (see the module docstring)."""

    PROVIDER = "openai"

    def __new__(cls, spec: ModelSpec, context: ModelContext | None = None, **kwargs: Any) -> Any:
        return object.__new__(cls)  # one endpoint: a batch goes to one server (not OpenAIModel's pool)

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None, state_dir: Path | None = None,
                 poll_s: float = 30.0, max_polls: int | None = None, retries: int = 2) -> None:
        OpenAIModel.__init__(self, spec, context)
        self.setup_batches(state_dir, poll_s, max_polls, retries)

    async def batch_line(self, request: Request) -> Any:
        return json.loads(await self._body(request))

    async def batch_client(self) -> Any:
        self._batch_state = self._state()
        return await self._batch_state.acquire()

    def release_client(self, client: Any) -> None:
        self._batch_state.release(client)

    async def submit(self, client: openai.AsyncOpenAI, entries: list[tuple[str, Any]]) -> str:
        lines = [json.dumps({"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False)
                 for cid, body in entries]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            uploaded = await client.files.create(file=("batch.jsonl", data, "application/jsonl"), purpose="batch")
            batch = await client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")
        except openai.APIStatusError as exc:
            raise ModelError(f"{self.spec.display}: the batch could not be submitted "
                             f"(HTTP {exc.status_code}: {error_detail(exc.response.content)})", field="--batch") from None
        return batch.id

    async def status(self, client: openai.AsyncOpenAI, batch_id: str) -> tuple[bool, str, Any]:
        response = await client.get(f"/batches/{batch_id}", cast_to=http.Response)
        batch = json.loads(response.content)
        counts = batch.get("request_counts") or {}
        log.info("%s: batch %s %s: %s of %s done, %s failed", self.spec.display, batch_id, batch.get("status"),
                 counts.get("completed", 0), counts.get("total", "?"), counts.get("failed", 0))
        return batch.get("status") in FINAL_STATES, str(batch.get("status")), batch

    async def results(self, client: openai.AsyncOpenAI, batch_id: str, batch: Any) -> list[tuple[str, Reply, bool]]:
        out: list[tuple[str, Reply, bool]] = []
        for key in ("output_file_id", "error_file_id"):
            file_id = batch.get(key)
            if not file_id:
                continue
            response = await client.get(f"/files/{file_id}/content", cast_to=http.Response)
            for line in response.content.decode("utf-8").splitlines():
                if line.strip():
                    out.append(self._entry(json.loads(line)))
        return out

    def _entry(self, entry: dict[str, Any]) -> tuple[str, Reply, bool]:
        cid = str(entry.get("custom_id"))
        error = entry.get("error")
        response = entry.get("response") or {}
        status = response.get("status_code")
        if error or status != 200:
            code = error.get("code") if isinstance(error, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            retryable = code in RETRYABLE_CODES or status == 429 or (isinstance(status, int) and status >= 500)
            return cid, Reply.failure(f"batch entry failed: {code or status}: {message or ''}".strip()), retryable
        raw = json.dumps(response.get("body")).encode("utf-8")
        try:
            text = completion_text(raw)
        except BadResponse as exc:
            return cid, Reply.failure(f"invalid response: {exc}"), False
        parts = completion_parts(raw)
        return cid, Reply(text=text or "", reasoning=parts.reasoning, finish_reason=parts.finish_reason,
                          reasoning_tokens=parts.reasoning_tokens, completion_tokens=parts.completion_tokens,
                          prompt_tokens=parts.prompt_tokens, cached_tokens=parts.cached_tokens), False
