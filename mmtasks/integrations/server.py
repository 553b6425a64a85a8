"""``mmtasks serve``: an HTTP evaluation server, and its client (:class:`EvalClient`).

A training job (or anything else) submits an evaluation, a checkpoint path or a served endpoint
and the tasks, and gets results back, without running mmtasks in its own process:

- ``POST /v1/jobs`` with a JSON :class:`EvalJob` -> 202 ``{"id", "status": "queued"}``; a job that
  is not valid -> 400 ``{"error": one line}``;
- ``GET /v1/jobs/ID`` -> ``{"id", "status": queued|running|done|failed, "results"?, "error"?}``
  (``results``: the results.json object); an unknown id -> 404;
- ``GET /v1/health`` -> ``{"status": "ok", "queued": N, "running": ID or null}``.

Jobs run one at a time, in order, in one worker thread (a model at a time on the machine's
devices), through :func:`mmtasks.evaluate`: each writes ``OUTPUT_ROOT/ID/`` (results.json,
samples). The data folder, the output root and the task folders are the server's (a job names
tasks and a model, never a path to read data from or write to). A failed job is its error's one
line; the server goes on to the next. With a token (``--token-env VAR``), every request needs
``Authorization: Bearer <token>``; the server listens on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import http.server
import json
import logging
import queue
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.errors import ConfigError, MmtasksError, printable
from mmtasks.secrets import redact

log = logging.getLogger("mmtasks")

#: the largest request body the server reads
MAX_BODY = 1024 * 1024
JobStatus = Literal["queued", "running", "done", "failed"]


class EvalJob(BaseModel):
    """A job: what to evaluate (``model``: ``hf:/path/to/checkpoint``, ``vllm:...``, or a served
    endpoint, ``openai:NAME`` with ``model_args: {base_url: ...}``) on which tasks."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] | str
    model: str = Field(min_length=1)
    model_args: dict[str, Any] = Field(default_factory=dict)
    judge: str | None = None
    judge_args: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    batch_size: int | None = Field(default=None, ge=1)
    gen_kwargs: dict[str, Any] = Field(default_factory=dict)
    run_name: str | None = None


@dataclass
class JobRecord:
    id: str
    job: EvalJob
    status: JobStatus = "queued"
    results: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        if self.results is not None:
            out["results"] = self.results
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class EvalServer:
    """The server's state: its settings, the jobs, the queue and its worker."""

    data_dir: Path | None
    output_root: Path
    include_paths: Sequence[Path] = ()
    token: str | None = None
    jobs: dict[str, JobRecord] = field(default_factory=dict)
    queue: queue.Queue[str | None] = field(default_factory=queue.Queue)
    lock: threading.Lock = field(default_factory=threading.Lock)
    running: str | None = None

    def submit(self, payload: Any) -> JobRecord:
        try:
            job = EvalJob.model_validate(payload)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "job"
            raise ConfigError(f"{where}: {err['msg']}", field="job") from None
        record = JobRecord(id=secrets.token_hex(8), job=job)
        with self.lock:
            self.jobs[record.id] = record
        self.queue.put(record.id)
        return record

    def work(self) -> None:
        """Run queued jobs, one at a time, until ``None`` is queued."""
        from mmtasks.api import evaluate

        while (job_id := self.queue.get()) is not None:
            record = self.jobs[job_id]
            record.status, self.running = "running", job_id
            job = record.job
            try:
                result = evaluate(job.tasks, model=job.model, model_args=job.model_args, judge=job.judge,
                                  judge_args=job.judge_args, limit=job.limit, seed=job.seed, batch_size=job.batch_size,
                                  gen_kwargs=job.gen_kwargs, run_name=job.run_name, data_dir=self.data_dir,
                                  output_path=self.output_root / job_id, include_paths=list(self.include_paths),
                                  allow_failures=True)
                record.results, record.status = dict(result), "done"
            except MmtasksError as exc:
                record.error, record.status = printable(redact(exc.render())), "failed"
            except Exception as exc:  # noqa: BLE001 - a job's crash is its own failure; the server serves the next
                record.error, record.status = printable(redact(f"{type(exc).__name__}: {exc}"))[:2000], "failed"
                log.exception("job %s failed", job_id)
            finally:
                self.running = None

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "queued": self.queue.qsize(), "running": self.running}


def make_handler(server: EvalServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            log.debug("serve: " + format, *args)

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _allowed(self) -> bool:
            if server.token is None:
                return True
            given = self.headers.get("Authorization", "")
            if secrets.compare_digest(given.encode(), f"Bearer {server.token}".encode()):
                return True
            self._send(401, {"error": "a valid token is needed (Authorization: Bearer ...)"})
            return False

        def do_GET(self) -> None:  # noqa: N802
            if not self._allowed():
                return
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/v1/health":
                self._send(200, server.health())
                return
            if path.startswith("/v1/jobs/"):
                record = server.jobs.get(path[len("/v1/jobs/"):])
                if record is None:
                    self._send(404, {"error": "no such job"})
                    return
                self._send(200, record.to_json())
                return
            self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._send(413, {"error": f"the job is larger than {MAX_BODY} bytes"})
                self.close_connection = True
                return
            body = self.rfile.read(length) if length else b""
            if not self._allowed():
                return
            if self.path.split("?", 1)[0].rstrip("/") != "/v1/jobs":
                self._send(404, {"error": "not found"})
                return
            try:
                record = server.submit(json.loads(body or b"null"))
            except json.JSONDecodeError as exc:
                self._send(400, {"error": f"not JSON: {exc.msg}"})
                return
            except ConfigError as exc:
                self._send(400, {"error": exc.message})
                return
            self._send(202, record.to_json())

    return Handler


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


def start(server: EvalServer, host: str = "127.0.0.1", port: int = 0) -> tuple[http.server.ThreadingHTTPServer, threading.Thread]:
    """Serve ``server`` (in this thread's caller's control: ``serve_forever`` on the returned HTTP
    server) and start its worker thread; port 0 picks a free one."""
    httpd = _HTTPServer((host, port), make_handler(server))
    worker = threading.Thread(target=server.work, name="mmtasks-serve-worker", daemon=True)
    worker.start()
    return httpd, worker


class EvalClient:
    """The client of ``mmtasks serve``: :meth:`submit` a job, :meth:`wait` for its results."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 60.0) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout_s)

    def close(self) -> None:
        self._http.close()

    def _json(self, response: Any) -> dict[str, Any]:
        data = response.json()
        if response.status_code >= 400:
            raise ConfigError(f"the evaluation server answered {response.status_code}: {data.get('error', '')}",
                              field="job")
        return data

    def submit(self, tasks: str | Sequence[str], model: str, **options: Any) -> str:
        """Queue a job (see :class:`EvalJob` for ``options``); returns its id."""
        payload = {"tasks": tasks if isinstance(tasks, str) else list(tasks), "model": model, **options}
        return str(self._json(self._http.post("/v1/jobs", json=payload))["id"])

    def status(self, job_id: str) -> dict[str, Any]:
        return self._json(self._http.get(f"/v1/jobs/{job_id}"))

    def wait(self, job_id: str, poll_s: float = 5.0, max_polls: int | None = None) -> dict[str, Any]:
        """The job's results once it is done (polling every ``poll_s``; at most ``max_polls`` times);
        a failed job raises its error's line."""
        polls = 0
        while True:
            state = self.status(job_id)
            if state["status"] == "done":
                return dict(state["results"])
            if state["status"] == "failed":
                raise MmtasksError(f"job {job_id} failed: {state.get('error')}")
            polls += 1
            if max_polls is not None and polls >= max_polls:
                raise MmtasksError(f"job {job_id} is still {state['status']} after {polls} polls")
            time.sleep(poll_s)
