"""``--batch`` / ``--judge-batch`` on the ``openai`` backend: OpenAI's Batch API (half price).

Each wave of requests the scheduler hands :meth:`OpenAIBatchModel.generate` becomes one batch:
the chat-completions bodies the interactive backend would send, one JSONL line each
(``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``), uploaded through
``POST /files`` (``purpose=batch``) and submitted with ``POST /batches``; the batch is polled
(``GET /batches/ID``) with a progress line until it ends, and its output and error files are read
back (``GET /files/ID/content``). Multi-turn tasks go wave by wave: each turn is a batch.

Crash-safe: the batch's id is written to a state file (under the response cache's folder,
named by the wave's request ids) the moment it is created, before any poll; a run killed while
its batch is pending finds the file when the same wave comes again (the replies already received
come from the response cache, so the wave is the same) and polls that batch instead of sending
the requests again. Entries that expired or failed with a retryable error (429, 5xx,
``batch_expired``) go into a new batch, at most ``batch_retries`` times; the others are failed
replies, counted as any failure.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import httpx as http
import openai

from mmtasks.core.request import Reply, Request
from mmtasks.errors import ModelError
from mmtasks.models.base import ModelContext, ModelSpec
from mmtasks.models.openai_api import OpenAIModel
from mmtasks.models.openai_payload import BadResponse, completion_parts, completion_text, error_detail
from mmtasks.results.writer import atomic_write_text

log = logging.getLogger("mmtasks")

#: batch states after which nothing changes
FINAL_STATES = ("completed", "failed", "expired", "cancelled")
#: entry error codes worth another batch
RETRYABLE_CODES = ("batch_expired", "rate_limit_exceeded", "server_error")
ENDPOINT: Final = "/v1/chat/completions"


class OpenAIBatchModel(OpenAIModel):
    """The ``openai`` backend sending each wave as one Batch API job (see the module docstring)."""

    #: a wave is one batch: the scheduler hands whole waves to ``generate``
    supports_async = False
    #: the most polls of one batch before the run stops (resumable: the batch id is kept)
    MAX_POLLS = 100_000

    def __new__(cls, spec: ModelSpec, context: ModelContext | None = None, **kwargs: Any) -> Any:
        return object.__new__(cls)  # one endpoint: a batch goes to one server (not OpenAIModel's pool)

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None, state_dir: Path | None = None,
                 poll_s: float = 30.0, max_polls: int | None = None, retries: int = 2) -> None:
        super().__init__(spec, context)
        self.state_dir = state_dir
        self.poll_s = poll_s
        self.max_polls = max_polls if max_polls is not None else self.MAX_POLLS
        self.retries = retries

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        if not requests:
            return
        replies = self._run(self._batch_wave(requests))
        yield from enumerate(replies)

    async def _batch_wave(self, requests: Sequence[Request]) -> list[Reply]:
        bodies: list[bytes | Reply] = []
        for request in requests:
            try:
                bodies.append(await self._body(request))
            except Exception as exc:  # an image that does not decode: this request's failure
                bodies.append(Reply.failure(f"image: {exc}"))
        ids = {i: hashlib.sha256(b).hexdigest()[:32] for i, b in enumerate(bodies) if isinstance(b, bytes)}
        lines = {ids[i]: json.dumps({"custom_id": ids[i], "method": "POST", "url": ENDPOINT,
                                     "body": json.loads(bodies[i])}, ensure_ascii=False)  # type: ignore[arg-type]
                 for i in ids}
        state_path = self._state_path(sorted(lines))
        state = self._read_state(state_path)
        replies: dict[str, Reply] = {}
        state_ = self._state()
        client = await state_.acquire()
        try:
            for attempt in range(self.retries + 1):
                todo = [cid for cid in lines if cid not in replies]
                if not todo:
                    break
                if attempt < len(state["batches"]):
                    batch_id = state["batches"][attempt]["id"]
                    log.info("%s: resuming batch %s (%d requests)", self.spec.display, batch_id, len(todo))
                else:
                    batch_id = await self._submit(client, [lines[c] for c in todo])
                    state["batches"].append({"id": batch_id, "custom_ids": todo})
                    self._write_state(state_path, state)
                batch = await self._poll(client, batch_id)
                retry: dict[str, str] = {}
                for cid, reply, retryable in await self._results(client, batch):
                    if cid not in lines or cid in replies:
                        continue
                    if reply.ok or not retryable:
                        replies[cid] = reply
                    else:
                        retry[cid] = reply.error or "failed"
                for cid in todo:  # entries the batch did not report (an expired batch's unfinished ones)
                    if cid not in replies and cid not in retry:
                        retry[cid] = f"batch {batch_id} ({batch.get('status')}) gave no result"
                if attempt == self.retries:
                    for cid, why in retry.items():
                        replies[cid] = Reply.failure(f"{why} (after {attempt + 1} batches)")
        finally:
            state_.release(client)
        return [b if isinstance(b, Reply) else replies.get(ids[i], Reply.failure("no batch result"))
                for i, b in enumerate(bodies)]

    # -- the Batch API ----------------------------------------------------------------
    async def _submit(self, client: openai.AsyncOpenAI, lines: list[str]) -> str:
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            uploaded = await client.files.create(file=("batch.jsonl", data, "application/jsonl"), purpose="batch")
            batch = await client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")
        except openai.APIStatusError as exc:
            raise ModelError(f"{self.spec.display}: the batch could not be submitted "
                             f"(HTTP {exc.status_code}: {error_detail(exc.response.content)})", field="--batch") from None
        log.info("%s: batch %s submitted (%d requests)", self.spec.display, batch.id, len(lines))
        return batch.id

    async def _poll(self, client: openai.AsyncOpenAI, batch_id: str) -> dict[str, Any]:
        for _ in range(self.max_polls):
            response = await client.get(f"/batches/{batch_id}", cast_to=http.Response)
            batch = json.loads(response.content)
            counts = batch.get("request_counts") or {}
            log.info("%s: batch %s %s: %s of %s done, %s failed", self.spec.display, batch_id, batch.get("status"),
                     counts.get("completed", 0), counts.get("total", "?"), counts.get("failed", 0))
            if batch.get("status") in FINAL_STATES:
                return batch
            await asyncio.sleep(self.poll_s)
        raise ModelError(f"{self.spec.display}: batch {batch_id} still pending after {self.max_polls} polls",
                         hint="run the same command again: it resumes polling the same batch")

    async def _results(self, client: openai.AsyncOpenAI, batch: dict[str, Any]) -> list[tuple[str, Reply, bool]]:
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
            code = (error or {}).get("code") if isinstance(error, dict) else None
            message = (error or {}).get("message") if isinstance(error, dict) else None
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

    # -- the state file -------------------------------------------------------------
    def _state_path(self, custom_ids: list[str]) -> Path | None:
        if self.state_dir is None:
            return None
        key = hashlib.sha256(json.dumps([self.identity, custom_ids]).encode()).hexdigest()[:40]
        return self.state_dir / f"openai-{key}.json"

    @staticmethod
    def _read_state(path: Path | None) -> dict[str, Any]:
        if path is not None and path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict) and isinstance(data.get("batches"), list):
                    return data
            except ValueError:
                pass
        return {"batches": []}

    @staticmethod
    def _write_state(path: Path | None, state: dict[str, Any]) -> None:
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(state, indent=1))
