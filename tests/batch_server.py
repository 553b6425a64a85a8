"""A loopback server speaking OpenAI's Batch API (``/v1/files``, ``/v1/batches``) and ``/v1/models``,
for the ``--batch`` tests: uploaded JSONL files are kept, a batch is ``in_progress`` until the test
``release()``s it, then ``completed`` with an output file (each line answered by ``reply``) and an
error file (entries ``expire`` names come back ``batch_expired`` once). It counts every request
line it received per ``custom_id`` (``sent``), so a test can check that nothing was sent twice."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.chat_wire import completion_body


class BatchServer:
    def __init__(self, models: tuple[str, ...], reply: Callable[[dict], Any] = lambda body: "B") -> None:
        self.models = models
        self.reply = reply
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        #: custom_id -> how many times a request line with it was uploaded in a batch
        self.sent: dict[str, int] = {}
        #: custom_ids (or a predicate on the body) to expire in their first batch
        self.expire: Callable[[dict], bool] = lambda body: False
        self.expired: set[str] = set()
        self.released = True
        self.lock = threading.RLock()
        self.log: list[tuple[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner.log.append(("GET", self.path))
                owner._get(self)

            def do_POST(self) -> None:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raw = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        raw += self.rfile.read(size)
                        self.rfile.readline()
                else:
                    raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.log.append(("POST", self.path))
                owner._post(self, raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "BatchServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _send(self, h: BaseHTTPRequestHandler, status: int, body: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json" if raw is None else "application/octet-stream")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        if path == "/v1/models":
            return self._send(h, 200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "test"} for m in self.models]})
        if path.startswith("/v1/files/") and path.endswith("/content"):
            file_id = path.split("/")[3]
            return self._send(h, 200, None, raw=self.files[file_id])
        if path.startswith("/v1/batches/"):
            return self._send(h, 200, self._status(path.split("/")[3]))
        self._send(h, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def _post(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        path = h.path.split("?")[0]
        with self.lock:
            if path == "/v1/files":
                content = _multipart_file(raw, h.headers.get("Content-Type", ""))
                file_id = f"file-{len(self.files)}"
                self.files[file_id] = content
                return self._send(h, 200, {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0,
                                           "filename": "batch.jsonl", "purpose": "batch", "status": "processed"})
            if path == "/v1/batches":
                body = json.loads(raw)
                lines = [json.loads(x) for x in self.files[body["input_file_id"]].decode().splitlines() if x.strip()]
                for line in lines:
                    assert line["method"] == "POST" and line["url"] == body["endpoint"] == "/v1/chat/completions"
                    self.sent[line["custom_id"]] = self.sent.get(line["custom_id"], 0) + 1
                batch_id = f"batch_{len(self.batches)}"
                self.batches[batch_id] = {"lines": lines, "input_file_id": body["input_file_id"], "done": None}
                return self._send(h, 200, self._status(batch_id))
        self._send(h, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def _status(self, batch_id: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[batch_id]
            out: dict[str, Any] = {"id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
                                   "input_file_id": batch["input_file_id"], "completion_window": "24h", "created_at": 0,
                                   "status": "in_progress", "output_file_id": None, "error_file_id": None,
                                   "request_counts": {"total": len(batch["lines"]), "completed": 0, "failed": 0}}
            if not self.released:
                return out
            if batch["done"] is None:
                ok, bad = [], []
                for k, line in enumerate(batch["lines"]):
                    cid = line["custom_id"]
                    if cid not in self.expired and self.expire(line["body"]):
                        self.expired.add(cid)
                        bad.append({"id": f"r{k}", "custom_id": cid, "response": None,
                                    "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
                        continue
                    body = completion_body(line["body"], self.reply(line["body"]), k)
                    ok.append({"id": f"r{k}", "custom_id": cid, "response": {"status_code": 200, "request_id": f"q{k}", "body": body}, "error": None})
                done: dict[str, Any] = {"ok": len(ok), "bad": len(bad)}
                for key, rows in (("output_file_id", ok), ("error_file_id", bad)):
                    if rows:
                        file_id = f"file-{len(self.files)}"
                        self.files[file_id] = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
                        done[key] = file_id
                batch["done"] = done
            done = batch["done"]
            out.update(status="completed", output_file_id=done.get("output_file_id"), error_file_id=done.get("error_file_id"),
                       request_counts={"total": len(batch["lines"]), "completed": done["ok"], "failed": done["bad"]})
            return out


def _multipart_file(raw: bytes, content_type: str) -> bytes:
    """The ``file`` part of a multipart/form-data body."""
    boundary = content_type.split("boundary=")[1].strip('"').encode()
    for part in raw.split(b"--" + boundary):
        head, sep, body = part.partition(b"\r\n\r\n")
        if sep and b'name="file"' in head:
            return body.rsplit(b"\r\n", 1)[0]
    raise AssertionError("no file part")


class AnthropicBatchServer(BatchServer):
    """Anthropic's Message Batches (``/v1/messages/batches``, ``.../ID``, ``.../ID/results``) and
    ``GET /v1/models/NAME``; each entry's ``params`` validated against the SDK's
    ``MessageCreateParamsNonStreaming``; usage counted as tests/provider_servers.py does (words of
    the text, 10 per image)."""

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        if path.startswith("/v1/models/"):
            name = path.split("/")[3]
            if name not in self.models:
                return self._send(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": name}})
            return self._send(h, 200, {"id": name, "type": "model", "display_name": name, "created_at": "2025-01-01T00:00:00Z"})
        if path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            batch_id = path.split("/")[4]
            self._anthropic_status(batch_id)
            return self._send(h, 200, None, raw=self.files[self.batches[batch_id]["done"]["results"]])
        if path.startswith("/v1/messages/batches/"):
            return self._send(h, 200, self._anthropic_status(path.split("/")[4]))
        self._send(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": path}})

    def _post(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        from anthropic.types import message_create_params as at
        from pydantic import TypeAdapter

        if h.path.split("?")[0] != "/v1/messages/batches":
            return self._send(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": h.path}})
        body = json.loads(raw)
        adapter = TypeAdapter(at.MessageCreateParamsNonStreaming)
        with self.lock:
            for entry in body["requests"]:
                adapter.validate_python(entry["params"])  # the SDK's own type (a bad body fails the test)
                self.sent[entry["custom_id"]] = self.sent.get(entry["custom_id"], 0) + 1
            batch_id = f"msgbatch_{len(self.batches)}"
            self.batches[batch_id] = {"lines": [{"custom_id": e["custom_id"], "body": e["params"]} for e in body["requests"]],
                                      "done": None, "base": f"http://{h.headers['Host']}"}
        self._send(h, 200, self._anthropic_status(batch_id))

    def _anthropic_status(self, batch_id: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[batch_id]
            n = len(batch["lines"])
            out: dict[str, Any] = {"id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                                   "request_counts": {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
                                   "created_at": "2025-01-01T00:00:00Z", "expires_at": "2025-01-02T00:00:00Z",
                                   "ended_at": None, "archived_at": None, "cancel_initiated_at": None, "results_url": None}
            if not self.released:
                return out
            if batch["done"] is None:
                rows, ok, expired = [], 0, 0
                for line in batch["lines"]:
                    cid, params = line["custom_id"], line["body"]
                    if cid not in self.expired and self.expire(params):
                        self.expired.add(cid)
                        expired += 1
                        rows.append({"custom_id": cid, "result": {"type": "expired"}})
                        continue
                    text = self.reply(params)
                    ok += 1
                    rows.append({"custom_id": cid, "result": {"type": "succeeded", "message": {
                        "id": f"msg_{cid[:8]}", "type": "message", "role": "assistant", "model": params["model"],
                        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                        "usage": {"input_tokens": _anthropic_prompt_tokens(params), "output_tokens": len(text.split())}}}})
                file_id = f"file-{len(self.files)}"
                self.files[file_id] = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
                batch["done"] = {"results": file_id, "ok": ok, "expired": expired}
            done = batch["done"]
            out.update(processing_status="ended", ended_at="2025-01-01T01:00:00Z",
                       results_url=f"{batch['base']}/v1/messages/batches/{batch_id}/results",
                       request_counts={"processing": 0, "succeeded": done["ok"], "errored": 0, "canceled": 0,
                                       "expired": done["expired"]})
            return out


def _anthropic_prompt_tokens(params: dict) -> int:
    system = params.get("system")
    count = len(system.split()) if isinstance(system, str) else 0
    for message in params["messages"]:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            count += len(block.get("text", "").split()) if block["type"] == "text" else 10 if block["type"] == "image" else 0
    return count


class GeminiBatchServer(BatchServer):
    """The Gemini API's Batch Mode: ``POST /v1beta/models/M:batchGenerateContent`` (inline requests,
    each ``request`` validated against the SDK's ``Content``/``GenerationConfig``),
    ``GET /v1beta/batches/ID`` (``metadata.state``, ``metadata.output.inlinedResponses``), and
    ``GET /v1beta/models/M`` (v1 alike); usage: words of the text, 10 per image."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = "/v1beta/" + h.path.split("?")[0].split("/", 2)[2]  # either API version
        if path.startswith("/v1beta/models/"):
            name = path.split("/")[3]
            return self._send(h, 200, {"name": f"models/{name}", "displayName": name, "inputTokenLimit": 1048576,
                                       "outputTokenLimit": 65536})
        if path.startswith("/v1beta/batches/"):
            return self._send(h, 200, self._gemini_status(path.split("/")[3]))
        self._send(h, 404, {"error": {"code": 404, "message": path, "status": "NOT_FOUND"}})

    def _post(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        from google.genai import types

        path = "/v1beta/" + h.path.split("?")[0].split("/", 2)[2]  # either API version
        if not path.endswith(":batchGenerateContent"):
            return self._send(h, 404, {"error": {"code": 404, "message": path, "status": "NOT_FOUND"}})
        body = json.loads(raw)
        requests = body["batch"]["inputConfig"]["requests"]["requests"]
        with self.lock:
            lines = []
            for entry in requests:
                for content in entry["request"]["contents"]:
                    types.Content.model_validate_json(json.dumps(content))  # the SDK's own types
                types.GenerationConfig.model_validate_json(json.dumps(entry["request"].get("generationConfig", {})))
                key = entry["metadata"]["key"]
                self.sent[key] = self.sent.get(key, 0) + 1
                lines.append({"custom_id": key, "body": entry["request"]})
            batch_id = f"batch-{len(self.batches)}"
            self.batches[batch_id] = {"lines": lines, "done": None}
        self._send(h, 200, self._gemini_status(batch_id))

    def _gemini_status(self, batch_id: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[batch_id]
            out: dict[str, Any] = {"name": f"batches/{batch_id}",
                                   "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                                                "name": f"batches/{batch_id}", "state": "BATCH_STATE_RUNNING",
                                                "model": "models/x"}}
            if not self.released:
                return out
            if batch["done"] is None:
                rows = []
                for line in batch["lines"]:
                    key, request = line["custom_id"], line["body"]
                    if key not in self.expired and self.expire(request):
                        self.expired.add(key)
                        rows.append({"error": {"code": 503, "message": "unavailable"}, "metadata": {"key": key}})
                        continue
                    text = self.reply(request)
                    prompt = sum(len(p.get("text", "").split()) + (10 if "inlineData" in p else 0)
                                 for c in request["contents"] for p in c.get("parts", []))
                    system = request.get("systemInstruction")
                    if system:
                        prompt += sum(len(p.get("text", "").split()) for p in system.get("parts", []))
                    rows.append({"response": {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                                              "finishReason": "STOP", "index": 0}],
                                              "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": len(text.split()),
                                                                "totalTokenCount": prompt + len(text.split())}},
                                 "metadata": {"key": key}})
                batch["done"] = rows
            out["done"] = True
            out["metadata"].update(state="BATCH_STATE_SUCCEEDED",
                                   output={"inlinedResponses": {"inlinedResponses": batch["done"]}})
            return out
