"""``--batch`` / ``--judge-batch`` on the ``gemini`` backend: the Gemini API's Batch Mode (half
price). Each wave is one batch job (:mod:`mmtasks.models.batch_api`: the loop, the state file,
retries): the ``generate_content`` requests the interactive backend would send, inline
(``batches.create(src=[InlinedRequest(contents, config, metadata={"key": custom id})])``), polled
with ``batches.get`` until the job's state is final; its inlined responses read back by their
key (a response through the backend's own reading; an entry's error with a rate or server code,
or every entry of an expired job, retried in a new batch). Videos to upload are not sent in a
batch (a failed reply naming why); Vertex AI's batch prediction (BigQuery/GCS) is not done.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.genai import errors as genai_errors
from google.genai import types

from mmtasks.core.request import Reply, Request
from mmtasks.errors import ModelError
from mmtasks.models.base import ModelContext, ModelSpec
from mmtasks.models.batch_api import BatchWaves, log
from mmtasks.models.gemini_api import GeminiModel

FINAL_STATES = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")
#: an entry's error codes worth another batch
RETRYABLE_CODES = (429, 500, 503, 504)


class GeminiBatchModel(BatchWaves, GeminiModel):
    """The ``gemini`` backend sending each wave as one Batch Mode job (see the module docstring)."""

    PROVIDER = "gemini"

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None, state_dir: Path | None = None,
                 poll_s: float = 30.0, max_polls: int | None = None, retries: int = 2) -> None:
        GeminiModel.__init__(self, spec, context)
        if self.args.vertexai:
            raise ModelError("--batch on gemini: the Gemini API's Batch Mode only (Vertex AI's batch prediction "
                             "is not done)", field="--batch")
        self.setup_batches(state_dir, poll_s, max_polls, retries)

    async def batch_line(self, request: Request) -> Any:
        payload = self._payload(request)
        if any(p.file_data is not None for c in payload["contents"] for p in c.parts or []):
            raise ValueError("a video to upload is not sent in a batch (run it without --batch)")
        return {"contents": [c.model_dump(mode="json", exclude_none=True) for c in payload["contents"]],
                "config": payload["config"].model_dump(mode="json", exclude_none=True)}

    async def batch_client(self) -> Any:
        return self._client()[0]

    async def submit(self, client: Any, entries: list[tuple[str, Any]]) -> str:
        src = [types.InlinedRequest(contents=[types.Content.model_validate(c) for c in body["contents"]],
                                    config=types.GenerateContentConfig.model_validate(body["config"]),
                                    metadata={"key": cid}) for cid, body in entries]
        try:
            job = await client.aio.batches.create(model=self.spec.name, src=src)
        except genai_errors.APIError as exc:
            raise ModelError(f"{self.spec.display}: the batch could not be submitted (HTTP {exc.code}: "
                             f"{exc.message or exc.status})", field="--batch") from None
        return str(job.name)

    async def status(self, client: Any, batch_id: str) -> tuple[bool, str, Any]:
        job = await client.aio.batches.get(name=batch_id)
        state = getattr(job.state, "value", job.state)
        log.info("%s: batch %s %s", self.spec.display, batch_id, state)
        return state in FINAL_STATES, str(state), job

    async def results(self, client: Any, batch_id: str, job: Any) -> list[tuple[str, Reply, bool]]:
        out: list[tuple[str, Reply, bool]] = []
        for entry in (job.dest.inlined_responses if job.dest is not None else None) or []:
            key = str((entry.metadata or {}).get("key"))
            if entry.response is not None:
                out.append((key, self._reply(entry.response, 1), False))
            else:
                error = entry.error
                code = getattr(error, "code", None)
                out.append((key, Reply.failure(f"batch entry failed: {code}: {getattr(error, 'message', '')}"),
                            code in RETRYABLE_CODES))
        return out
