"""A real OpenAI-compatible chat server on loopback, for tests and benchmarks.

Speaks ``POST /v1/chat/completions`` and ``GET /v1/models`` over real HTTP
(stdlib only, one thread per connection, HTTP/1.1 keep-alive), so clients are
tested end to end instead of against mocks. Configurable per server:

- ``latency``: seconds slept per chat call (a float, or a callable taking the
  request JSON), concurrent calls sleep in parallel;
- ``reply``: callable(request JSON) -> reply text (default: ``"reply to: <last user text>"``),
  or a dict of the reply's parts (``content``, ``reasoning_content``, ``finish_reason`` ...:
  ``chat_wire.completion_body``);
- ``api_key``: when set, a request without ``Authorization: Bearer <api_key>`` gets 401;
- ``models``: ids listed by ``/v1/models``; with ``strict_models`` other ids get 404;
- ``max_model_len``: listed with each model by ``/v1/models``, as ``vllm serve`` does;
- ``model_card``: more fields of each ``/v1/models`` entry (``root``, ``created``, ``owned_by``);
- faults: :meth:`ChatServer.inject` schedules 429/5xx statuses (with Retry-After),
  hangs past the client's timeout, garbage bodies or dropped connections for the
  next N calls (optionally only calls whose prompt contains a substring).

Everything received is logged (:attr:`ChatServer.log`, full JSON bodies) with
counters (``calls``, ``max_in_flight``). Use it as a context manager, through
the ``chat_server`` pytest fixture, or as a script for benchmarks::

    python tests/chat_server.py --port 8000 --latency 0.2
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import select
import socket
import socketserver
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

if __package__:
    from tests.chat_wire import FAULT_KINDS, Call, Fault, ReplyFn, completion_body, echo_reply, error_body, last_user_text, validate_chat_request
else:  # run as a script: python tests/chat_server.py
    from chat_wire import FAULT_KINDS, Call, Fault, ReplyFn, completion_body, echo_reply, error_body, last_user_text, validate_chat_request


@dataclass
class _Stats:
    calls: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    log: list[Call] = field(default_factory=list)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default backlog (5) would serialise bursts of connections
    allow_reuse_address = True

    def server_bind(self) -> None:  # skip HTTPServer's reverse DNS lookup
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def process_request(self, request: Any, client_address: Any) -> None:
        self.owner._track(request, True)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.owner._track(request, False)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return  # a client that went away (killed, timed out) is not a server error
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.server.owner._handle(self, "GET")

    def do_POST(self) -> None:
        self.server.owner._handle(self, "POST")

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(payload).encode(), headers)

    def send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class ChatServer:
    """A loopback OpenAI-compatible server running in a background thread."""

    def __init__(
        self,
        *,
        latency: float | Callable[[dict], float] = 0.0,
        reply: ReplyFn = echo_reply,
        api_key: str | None = None,
        models: tuple[str, ...] = ("test-model",),
        strict_models: bool = False,
        models_endpoint: bool = True,
        max_model_len: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.reply = reply
        self.api_key = api_key
        self.models = tuple(models)
        self.strict_models = strict_models
        self.models_endpoint = models_endpoint
        #: listed with every model by ``/v1/models``, as vLLM does (None: not listed)
        self.max_model_len = max_model_len
        #: more fields of every ``/v1/models`` entry (override the defaults: created 0, owned_by mmtasks-tests)
        self.model_card: dict[str, Any] = {}
        self._address = (host, port)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._faults: list[Fault] = []
        self._stats = _Stats()
        self._sockets: set[socket.socket] = set()
        #: bytes of body the hostile faults managed to send (a client that caps answers stops early)
        self.hostile_bytes_sent = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "ChatServer":
        if self._httpd is None:
            self._stop.clear()
            self._httpd = _HTTPServer(self._address, _Handler)
            self._httpd.owner = self  # type: ignore[attr-defined]
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="chat-server", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: ends hangs, closes open connections, frees the port."""
        if self._httpd is None:
            return
        self._stop.set()
        self._httpd.shutdown()
        with self._lock:
            open_sockets = list(self._sockets)
        for sock in open_sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the value for ``base_url=`` / ``OPENAI_BASE_URL``."""
        return f"http://{self._address[0]}:{self.port}/v1"

    # -- configuration -----------------------------------------------------
    def inject(self, kind: int | str, times: int = 1, *, match: str | Callable[[dict], bool] | None = None,
               retry_after: float | None = None, hang_seconds: float = 60.0, message: str | None = None,
               code: str | None = None) -> Fault:
        """Make the next ``times`` matching chat calls fail.

        ``match``: a substring of the last user text, or a predicate on the
        request JSON; None matches every call.

        ``kind``: an HTTP status (429, 500, 503, 400, ...), ``"hang"`` (no reply
        until the client disconnects or ``hang_seconds`` pass, then a normal
        reply), ``"garbage"`` (200 with a body that is not JSON) or
        ``"disconnect"`` (connection closed without a response). Hostile 200
        answers: ``"trickle"`` (a valid body sent one byte every 0.1 s),
        ``"huge"`` (a Content-Length of 1.5 GB, zeros sent until the client
        hangs up), ``"huge_chunked"`` (the same without a length),
        ``"gzip_bomb"`` (250 KB of gzip that inflates to 256 MB), ``"deep_json"``
        (100000 nested lists), ``"bad_content"`` (content is a number),
        ``"bad_part"`` (a content part whose text is a number) and
        ``"no_choices"``. Bytes sent by these are counted in
        :attr:`ChatServer.hostile_bytes_sent`. Faults are consumed in the
        order they were injected.
        """
        if not (isinstance(kind, int) or kind in FAULT_KINDS):
            raise ValueError(f"unknown fault {kind!r}: an HTTP status or one of {FAULT_KINDS}")
        fault = Fault(kind=kind, times=times, match=match, retry_after=retry_after, hang_seconds=hang_seconds, message=message, code=code)
        with self._lock:
            self._faults.append(fault)
        return fault

    def reset(self) -> None:
        """Forget faults, the log and the counters."""
        with self._lock:
            self._faults.clear()
            self._stats = _Stats()

    # -- observations ------------------------------------------------------
    @property
    def calls(self) -> int:
        """Chat-completion calls received (including failed ones)."""
        return self._stats.calls

    @property
    def max_in_flight(self) -> int:
        """The most chat calls that were being handled at the same time."""
        return self._stats.max_in_flight

    @property
    def in_flight(self) -> int:
        return self._stats.in_flight

    @property
    def log(self) -> list[Call]:
        """Every request received, in arrival order (a copy)."""
        with self._lock:
            return list(self._stats.log)

    @property
    def bodies(self) -> list[dict]:
        """JSON bodies of the chat calls, in arrival order."""
        return [c.body for c in self.log if self.is_chat("POST", c.path)]

    def calls_for(self, prompt_substring: str) -> list[Call]:
        return [c for c in self.log if self.is_chat("POST", c.path) and prompt_substring in c.prompt]

    # -- the wire format (a provider's server overrides these: tests/provider_servers.py) ----
    def is_chat(self, method: str, path: str) -> bool:
        """Whether a request is a chat call."""
        return method == "POST" and path == "/v1/chat/completions"

    def prompt_of(self, body: dict) -> str:
        return last_user_text(body)

    def authorized(self, headers: Any) -> tuple[bool, str]:
        """Whether the request carries the key, and what it carried instead."""
        got = headers.get("Authorization") or ""
        return got == f"Bearer {self.api_key}", got.removeprefix("Bearer ")

    def needs_key(self, method: str, path: str, query: str) -> bool:
        """Whether a request must carry the key (a resumable upload's session URL is its own capability)."""
        return True

    def validate(self, body: Any) -> str | None:
        return validate_chat_request(body)

    def model_of(self, body: dict, path: str) -> str:
        return body["model"]

    def answer(self, body: dict, reply: "str | dict", index: int, path: str) -> dict:
        return completion_body(body, reply, index)

    def error(self, message: str, kind: str, code: str | None = None) -> dict:
        return error_body(message, kind, code)

    def other_route(self, method: str, path: str, call: Call, raw: bytes) -> tuple[Any, ...] | None:
        """(status, JSON[, headers]) for a request that is not a chat call (a provider's model
        description, a file upload); None: no such route (404)."""
        return None

    def model_answer(self, model: str, found: Any) -> tuple[int, Any]:
        """A model description ``found``, or 404 naming the model under ``strict_models``."""
        if self.strict_models and model not in self.models:
            return 404, self.error(f"model: {model}", "not_found_error", "model_not_found")
        return 200, found

    # -- handling ----------------------------------------------------------
    def _track(self, sock: socket.socket, add: bool) -> None:
        with self._lock:
            (self._sockets.add if add else self._sockets.discard)(sock)

    def _handle(self, h: _Handler, method: str) -> None:
        path, _, query = h.path.partition("?")
        path = path.rstrip("/")
        body: Any = None
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        if raw:
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = None
        is_chat = self.is_chat(method, path)
        prompt = self.prompt_of(body) if isinstance(body, dict) and is_chat else ""
        with self._lock:
            call = Call(index=len(self._stats.log), method=method, path=path, body=body, prompt=prompt, started=time.monotonic(),
                        query=query, headers=dict(h.headers.items()))
            self._stats.log.append(call)
            if is_chat:
                self._stats.calls += 1
                self._stats.in_flight += 1
                self._stats.max_in_flight = max(self._stats.max_in_flight, self._stats.in_flight)
        try:
            self._respond(h, method, path, raw, body, call, is_chat)
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True
        finally:
            with self._lock:
                call.finished = time.monotonic()
                if is_chat:
                    self._stats.in_flight -= 1

    def _respond(self, h: _Handler, method: str, path: str, raw: bytes, body: Any, call: Call, is_chat: bool) -> None:
        def send(status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            call.status = status
            h.send_json(status, payload, headers)

        if self.api_key is not None and self.needs_key(method, path, call.query) and not self.authorized(h.headers)[0]:
            got = self.authorized(h.headers)[1]
            # Echo what was received, as careless servers do: clients must redact it.
            return send(401, self.error(f"Incorrect API key provided: {got}", "invalid_request_error", "invalid_api_key"))
        if method == "GET" and path == "/v1/models" and self.models_endpoint:
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "mmtasks-tests",
                     **({"max_model_len": self.max_model_len} if self.max_model_len is not None else {}),
                     **self.model_card} for m in self.models]
            return send(200, {"object": "list", "data": data})
        routed = None if is_chat else self.other_route(method, path, call, raw)
        if routed is not None:
            return send(*routed)
        if not is_chat:
            return send(404, self.error(f"no route {method} {path}", "invalid_request_error", "not_found"))
        problem = "body is not valid JSON" if raw and body is None else self.validate(body)
        if problem:
            return send(400, self.error(problem, "invalid_request_error"))
        model = self.model_of(body, path)
        if self.strict_models and model not in self.models:
            return send(404, self.error(f"The model `{model}` does not exist.", "invalid_request_error", "model_not_found"))
        latency = self.latency(body) if callable(self.latency) else self.latency
        if latency > 0 and self._stop.wait(latency):
            h.close_connection = True
            return
        fault = self._take_fault(call.prompt, body)
        if fault is not None and self._apply_fault(h, fault, call):
            return
        try:
            text = self.reply(body)
        except Exception as exc:  # a test's reply function failed: tell the client, keep serving
            return send(500, self.error(f"reply function raised {type(exc).__name__}: {exc}", "server_error"))
        call.reply = text if isinstance(text, str) else ("\n".join(map(str, text)) if isinstance(text, list) else text.get("content"))
        send(200, self.answer(body, text, call.index, path))

    def _apply_fault(self, h: _Handler, fault: Fault, call: Call) -> bool:
        """Act out ``fault``; False when the call should still get its normal reply (after a hang)."""
        call.fault = str(fault.kind)
        if fault.kind == "disconnect":
            h.close_connection = True
        elif fault.kind == "garbage":
            call.status = 200
            h.send_bytes(200, b'{"id": "chatcmpl-garbage", "choices": [{"mess')
        elif fault.kind in _HOSTILE:
            call.status = 200
            _HOSTILE[fault.kind](self, h)
            h.close_connection = True
        elif fault.kind == "hang":
            if self._hang(h, fault.hang_seconds):
                return False
            h.close_connection = True
        else:
            headers = {}
            if fault.retry_after is not None:
                headers = {"Retry-After": str(math.ceil(fault.retry_after)), "retry-after-ms": str(int(fault.retry_after * 1000))}
            kind = "rate_limit_exceeded" if fault.kind == 429 else "server_error"
            call.status = int(fault.kind)
            h.send_json(call.status, self.error(fault.message or f"injected {fault.kind}", kind, fault.code or kind), headers)
        return True

    def _take_fault(self, prompt: str, body: dict) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(prompt, body):
                    fault.applied += 1
                    return fault
        return None

    def _hang(self, h: _Handler, seconds: float) -> bool:
        """Wait without answering; False if the client went away or the server stopped."""
        deadline = time.monotonic() + seconds
        sock = h.connection
        while time.monotonic() < deadline:
            if self._stop.wait(0.02):
                return False
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                try:
                    if not sock.recv(1, socket.MSG_PEEK):
                        return False
                except OSError:
                    return False
        return True


def _json_200(body: bytes) -> Callable[["ChatServer", _Handler], None]:
    def send(server: "ChatServer", h: _Handler) -> None:
        h.send_bytes(200, body)
        server.hostile_bytes_sent += len(body)
    return send


def _completion_with(message: dict) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()


def _trickle(server: "ChatServer", h: _Handler) -> None:
    body = _completion_with({"role": "assistant", "content": "slowly"})
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    for i in range(len(body)):
        if server._stop.wait(0.1):
            return
        h.wfile.write(body[i:i + 1])
        h.wfile.flush()
        server.hostile_bytes_sent += 1


def _endless(chunked: bool) -> Callable[["ChatServer", _Handler], None]:
    def send(server: "ChatServer", h: _Handler) -> None:
        block = b"0" * (1 << 20)
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        if chunked:
            h.send_header("Transfer-Encoding", "chunked")
        else:
            h.send_header("Content-Length", str(1_500_000_000))
        h.end_headers()
        for _ in range(1500):  # 1.5 GB, unless the client hangs up first
            if server._stop.is_set():
                return
            h.wfile.write(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
            server.hostile_bytes_sent += len(block)
    return send


@functools.lru_cache(maxsize=1)
def _bomb() -> bytes:
    """gzip of 256 MB of zeros (~250 KB): one compressed MB, fully flushed (no references to
    what precedes it), repeated; then the final block and the gzip trailer."""
    block = b"0" * (1 << 20)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate
    segment = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(256):
        crc = zlib.crc32(block, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    return header + segment * 256 + packer.flush() + struct.pack("<II", crc, (256 << 20) & 0xFFFFFFFF)


def _gzip_bomb(server: "ChatServer", h: _Handler) -> None:
    body = _bomb()
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Encoding", "gzip")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)
    server.hostile_bytes_sent += len(body)


_HOSTILE: dict[str, Callable[["ChatServer", _Handler], None]] = {
    "trickle": _trickle,
    "huge": _endless(chunked=False),
    "huge_chunked": _endless(chunked=True),
    "gzip_bomb": _gzip_bomb,
    "deep_json": _json_200(b"[" * 100_000 + b"]" * 100_000),
    "bad_content": _json_200(_completion_with({"role": "assistant", "content": 42})),
    "bad_part": _json_200(_completion_with({"role": "assistant", "content": [{"type": "text", "text": 7}]})),
    "no_choices": _json_200(b'{"id": "x", "object": "chat.completion"}'),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Loopback OpenAI-compatible chat server (echo replies).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per chat call")
    parser.add_argument("--api-key", default=None, help="require this bearer key")
    parser.add_argument("--models", default="test-model", help="comma-separated ids for /v1/models")
    args = parser.parse_args(argv)
    server = ChatServer(latency=args.latency, api_key=args.api_key, models=tuple(args.models.split(",")), host=args.host, port=args.port)
    with server:
        print(f"serving on {server.base_url} (latency {args.latency}s); Ctrl-C to stop", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    print(f"calls: {server.calls}, max in flight: {server.max_in_flight}")


if __name__ == "__main__":
    main()
