"""``--batch`` / ``--judge-batch`` on the ``anthropic`` backend: Anthropic's Message Batches (half
price). Each wave is one batch (:mod:`mmtasks.models.batch_api`: the loop, the state file,
retries): the Messages API payloads the interactive backend would send, as
``{"custom_id", "params"}`` entries of ``POST /v1/messages/batches``; polled with
``GET /v1/messages/batches/ID`` until ``processing_status`` is ``ended``; the results read from
its ``results_url`` (JSONL: ``succeeded`` with the message, ``errored``, ``canceled``,
``expired``). Retried in a new batch: ``expired`` entries and errors of overload, rate or server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic

from mmtasks.core.request import Reply, Request
from mmtasks.errors import ModelError
from mmtasks.models.anthropic_api import AnthropicModel
from mmtasks.models.base import ModelContext, ModelSpec
from mmtasks.models.batch_api import BatchWaves, log
from mmtasks.models.openai_payload import error_detail

#: an errored entry's error types worth another batch
RETRYABLE_ERRORS = ("overloaded_error", "rate_limit_error", "api_error")


class AnthropicBatchModel(BatchWaves, AnthropicModel):
    """The ``anthropic`` backend sending each wave as one Message Batch (see the module docstring)."""

    PROVIDER = "anthropic"

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None, state_dir: Path | None = None,
                 poll_s: float = 30.0, max_polls: int | None = None, retries: int = 2) -> None:
        AnthropicModel.__init__(self, spec, context)
        self.setup_batches(state_dir, poll_s, max_polls, retries)

    async def batch_line(self, request: Request) -> Any:
        return self._payload(request)

    async def batch_client(self) -> Any:
        return self._client()[0]

    async def submit(self, client: anthropic.AsyncAnthropic, entries: list[tuple[str, Any]]) -> str:
        try:
            batch = await client.messages.batches.create(
                requests=[{"custom_id": cid, "params": params} for cid, params in entries])
        except anthropic.APIStatusError as exc:
            raise ModelError(f"{self.spec.display}: the batch could not be submitted "
                             f"(HTTP {exc.status_code}: {error_detail(exc.response.content)})", field="--batch") from None
        return batch.id

    async def status(self, client: anthropic.AsyncAnthropic, batch_id: str) -> tuple[bool, str, Any]:
        batch = await client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        log.info("%s: batch %s %s: %d of %d done, %d errored, %d expired", self.spec.display, batch_id,
                 batch.processing_status, done, done + counts.processing, counts.errored, counts.expired)
        return batch.processing_status == "ended", batch.processing_status, batch

    async def results(self, client: anthropic.AsyncAnthropic, batch_id: str, batch: Any) -> list[tuple[str, Reply, bool]]:
        out: list[tuple[str, Reply, bool]] = []
        async for entry in await client.messages.batches.results(batch_id):
            result = entry.result
            if result.type == "succeeded":
                out.append((entry.custom_id, self.message_reply(result.message), False))
            elif result.type == "errored":
                error = getattr(result.error, "error", None)
                kind = getattr(error, "type", "error")
                out.append((entry.custom_id, Reply.failure(f"batch entry errored: {kind}: {getattr(error, 'message', '')}"),
                            kind in RETRYABLE_ERRORS))
            else:  # expired, canceled
                out.append((entry.custom_id, Reply.failure(f"batch entry {result.type}"), result.type == "expired"))
        return out
