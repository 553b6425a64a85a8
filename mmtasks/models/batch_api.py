"""Batch APIs (``--batch``, ``--judge-batch``): each wave of requests the scheduler hands
``generate`` becomes one batch of the provider's (:mod:`mmtasks.models.openai_batch`,
:mod:`mmtasks.models.anthropic_batch`), polled with a progress line until it ends.

Crash-safe: the batch's id is written to a state file (under the response cache's folder, named
by the model and the wave's request ids) the moment it is created, before any poll; a run killed
while its batch is pending finds the file when the same wave comes again (the replies already
received come from the response cache, so the wave is the same) and polls that batch instead of
sending the requests again. Entries that expired or failed with a retryable error go into a new
batch, at most ``retries`` times; the others are failed replies, counted as any failure.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mmtasks.core.request import Reply, Request
from mmtasks.errors import ModelError
from mmtasks.documents.archives import write_atomically

log = logging.getLogger("mmtasks")


class BatchWaves:
    """The batch loop shared by the providers' batch models (mixed in before the backend's class)."""

    #: a wave is one batch: the scheduler hands whole waves to ``generate``
    supports_async = False
    #: the whole batch is paid once it ends: the wave engine caches all its replies before a watcher
    #: (``--max-cost``) stops the run
    paid_per_wave = True
    #: the most polls of one batch before the run stops (resumable: the batch id is kept)
    MAX_POLLS = 100_000
    #: the provider's name in the state file's name
    PROVIDER = "batch"
    spec: Any
    identity: Any

    def setup_batches(self, state_dir: Path | None, poll_s: float, max_polls: int | None, retries: int) -> None:
        self.state_dir = state_dir
        self.poll_s = poll_s
        self.max_polls = max_polls if max_polls is not None else self.MAX_POLLS
        self.retries = retries

    # what each provider's model gives
    async def batch_line(self, request: Request) -> Any:
        """The request as its batch entry's body (JSON-able)."""
        raise NotImplementedError

    async def batch_client(self) -> Any:
        raise NotImplementedError

    def release_client(self, client: Any) -> None:
        pass

    async def submit(self, client: Any, entries: list[tuple[str, Any]]) -> str:
        raise NotImplementedError

    async def status(self, client: Any, batch_id: str) -> tuple[bool, str, Any]:
        """(ended, status word, the batch object) of one poll, with the progress line logged."""
        raise NotImplementedError

    async def results(self, client: Any, batch_id: str, batch: Any) -> list[tuple[str, Reply, bool]]:
        """(custom id, reply, whether a failure is worth another batch) per entry reported."""
        raise NotImplementedError

    # the loop
    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        if not requests:
            return
        replies = self._run(self._batch_wave(requests))  # type: ignore[attr-defined]
        yield from enumerate(replies)

    async def _batch_wave(self, requests: Sequence[Request]) -> list[Reply]:
        bodies: list[Any] = []
        for request in requests:
            try:
                bodies.append(await self.batch_line(request))
            except Exception as exc:  # an image that does not decode: this request's failure
                bodies.append(Reply.failure(f"image: {exc}"))
        ids = {i: hashlib.sha256(json.dumps(b, sort_keys=True).encode()).hexdigest()[:32]
               for i, b in enumerate(bodies) if not isinstance(b, Reply)}
        entries = {ids[i]: bodies[i] for i in ids}
        state_path = self._state_path(sorted(entries))
        state = _read_state(state_path)
        replies: dict[str, Reply] = {}
        client = await self.batch_client()
        try:
            for attempt in range(self.retries + 1):
                todo = [cid for cid in entries if cid not in replies]
                if not todo:
                    break
                if attempt < len(state["batches"]):
                    batch_id = state["batches"][attempt]["id"]
                    log.info("%s: resuming batch %s (%d requests)", self.spec.display, batch_id, len(todo))
                else:
                    batch_id = await self.submit(client, [(c, entries[c]) for c in todo])
                    log.info("%s: batch %s submitted (%d requests)", self.spec.display, batch_id, len(todo))
                    state["batches"].append({"id": batch_id, "custom_ids": todo})
                    _write_state(state_path, state)
                batch = await self._poll(client, batch_id)
                retry: dict[str, str] = {}
                for cid, reply, retryable in await self.results(client, batch_id, batch):
                    if cid not in entries or cid in replies:
                        continue
                    if reply.ok or not retryable:
                        replies[cid] = reply
                    else:
                        retry[cid] = reply.error or "failed"
                for cid in todo:  # entries the batch did not report (an expired batch's unfinished ones)
                    if cid not in replies and cid not in retry:
                        retry[cid] = f"batch {batch_id} gave no result"
                if attempt == self.retries:
                    for cid, why in retry.items():
                        replies[cid] = Reply.failure(f"{why} (after {attempt + 1} batches)")
        finally:
            self.release_client(client)
        return [b if isinstance(b, Reply) else replies.get(ids[i], Reply.failure("no batch result"))
                for i, b in enumerate(bodies)]

    async def _poll(self, client: Any, batch_id: str) -> Any:
        for _ in range(self.max_polls):
            ended, _word, batch = await self.status(client, batch_id)
            if ended:
                return batch
            await asyncio.sleep(self.poll_s)
        raise ModelError(f"{self.spec.display}: batch {batch_id} still pending after {self.max_polls} polls",
                         hint="run the same command again: it resumes polling the same batch")

    def _state_path(self, custom_ids: list[str]) -> Path | None:
        if self.state_dir is None:
            return None
        key = hashlib.sha256(json.dumps([self.identity, custom_ids]).encode()).hexdigest()[:40]
        return self.state_dir / f"{self.PROVIDER}-{key}.json"


def _read_state(path: Path | None) -> dict[str, Any]:
    if path is not None and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("batches"), list):
                return data
        except ValueError:
            pass
    return {"batches": []}


def _write_state(path: Path | None, state: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(state, indent=1))
