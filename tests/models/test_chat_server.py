"""The loopback chat server that backend tests and benchmarks build on."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.chat_server import ChatServer


def chat(prompt: str, model: str = "m") -> dict:
    return {"model": model, "messages": [{"role": "user", "content": prompt}]}


def post(server: ChatServer, body: object, **kw: object) -> httpx.Response:
    return httpx.post(server.base_url + "/chat/completions", json=body, **kw)  # type: ignore[arg-type]


def test_concurrent_calls_are_not_serialised(chat_server: ChatServer) -> None:
    # every call is held until all 64 are in flight at once (a server that serialised calls
    # would never get there: the barrier breaks after its 60 s hang guard and the calls fail)
    barrier = threading.Barrier(64, timeout=60)
    chat_server.latency = lambda body: barrier.wait() * 0.0
    payload = json.dumps(chat("hi"))
    statuses: list[int] = []

    def one() -> None:  # a fresh connection each: bursts of connects must not queue
        conn = http.client.HTTPConnection("127.0.0.1", chat_server.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body=payload, headers={"Content-Type": "application/json"})
        statuses.append(conn.getresponse().status)
        conn.close()

    threads = [threading.Thread(target=one) for _ in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 64
    # the server counts a call out after its response is sent, so the client may see the reply first
    settle = time.monotonic() + 120  # a hang guard
    while chat_server.in_flight and time.monotonic() < settle:
        time.sleep(0.01)
    assert chat_server.calls == 64 and chat_server.max_in_flight == 64 and chat_server.in_flight == 0


def test_echo_reply_log_and_reset(chat_server: ChatServer) -> None:
    body = {"model": "m", "messages": [{"role": "system", "content": "s"},
                                       {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}
    data = post(chat_server, body).json()
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "reply to: ab"}
    assert data["object"] == "chat.completion" and data["model"] == "m" and data["usage"]["total_tokens"] > 0
    [call] = chat_server.log
    assert (call.body, call.prompt, call.status, call.reply) == (body, "ab", 200, "reply to: ab")
    chat_server.reply = lambda b: b["model"].upper()
    assert post(chat_server, chat("x", model="abc")).json()["choices"][0]["message"]["content"] == "ABC"
    chat_server.reset()
    assert chat_server.log == [] and chat_server.calls == 0


def test_faults_apply_in_order_to_matching_prompts(chat_server: ChatServer) -> None:
    chat_server.inject(429, times=2, match="a", retry_after=1.5)
    chat_server.inject("garbage", match="b")
    assert post(chat_server, chat("zzz")).status_code == 200
    limited = post(chat_server, chat("a1"))
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "2" and limited.headers["retry-after-ms"] == "1500"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert post(chat_server, chat("b")).content.startswith(b'{"id": "chatcmpl-garbage", "choices": [{"mess')
    assert post(chat_server, chat("a2")).status_code == 429
    assert post(chat_server, chat("a3")).status_code == 200
    assert [c.fault for c in chat_server.log] == [None, "429", "garbage", "429", None]
    chat_server.inject(500, match=lambda body: body["model"] == "special")
    assert post(chat_server, chat("x")).status_code == 200
    assert post(chat_server, chat("x", model="special")).status_code == 500
    chat_server.inject("disconnect")
    with pytest.raises(httpx.RemoteProtocolError):
        post(chat_server, chat("x"))
    with pytest.raises(ValueError):
        chat_server.inject("explode")


def test_hang_ends_when_the_client_gives_up(chat_server: ChatServer) -> None:
    chat_server.inject("hang", hang_seconds=3600)
    with pytest.raises(httpx.ReadTimeout):
        post(chat_server, chat("x"), timeout=0.2)
    deadline = time.monotonic() + 120  # a hang guard: the hang itself would last an hour
    while chat_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    [call] = chat_server.log
    assert chat_server.in_flight == 0 and call.status is None and call.finished is not None  # ended with the client


def test_close_ends_hangs_quickly() -> None:
    server = ChatServer().start()
    server.inject("hang", hang_seconds=3600)
    errors: list[Exception] = []

    def call() -> None:
        try:
            post(server, chat("x"), timeout=3600)  # only the server's close can end it in time
        except httpx.HTTPError as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    while not server.in_flight:
        time.sleep(0.01)
    server.close()
    thread.join(timeout=120)  # a hang guard: the hang itself would last an hour
    assert not thread.is_alive() and len(errors) == 1


def test_api_key_and_models(chat_server: ChatServer) -> None:
    chat_server.api_key = "k-123456"
    refused = httpx.get(chat_server.base_url + "/models", headers={"Authorization": "Bearer wrong-key"})
    assert refused.status_code == 401 and "wrong-key" in refused.json()["error"]["message"]
    assert post(chat_server, chat("x")).status_code == 401
    ok = httpx.get(chat_server.base_url + "/models", headers={"Authorization": "Bearer k-123456"})
    assert [m["id"] for m in ok.json()["data"]] == ["test-model"]
    chat_server.api_key = None
    chat_server.strict_models = True
    assert post(chat_server, chat("x", model="other")).status_code == 404
    assert post(chat_server, chat("x", model="test-model")).status_code == 200
    chat_server.models_endpoint = False
    assert httpx.get(chat_server.base_url + "/models").status_code == 404


@pytest.mark.parametrize("body", [
    {"messages": [{"role": "user", "content": "x"}]},
    {"model": "m", "messages": []},
    {"model": "m", "messages": [{"role": "robot", "content": "x"}]},
    {"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}]},
    {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True},
])
def test_malformed_requests_are_rejected(chat_server: ChatServer, body: dict) -> None:
    response = post(chat_server, body)
    assert response.status_code == 400 and response.json()["error"]["message"]


def test_reply_function_errors_become_500(chat_server: ChatServer) -> None:
    chat_server.reply = lambda body: 1 / 0  # type: ignore[assignment,return-value]
    response = post(chat_server, chat("x"))
    assert response.status_code == 500 and "ZeroDivisionError" in response.json()["error"]["message"]
    assert httpx.get(chat_server.base_url + "/nowhere").status_code == 404


@pytest.mark.slow
def test_runs_as_a_script() -> None:
    script = (Path(__file__).resolve().parents[2] / "tests" / "chat_server.py")
    proc = subprocess.Popen([sys.executable, str(script), "--port", "0", "--latency", "0.01"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("serving on http://127.0.0.1:")
        base_url = line.split()[2]
        assert httpx.post(base_url + "/chat/completions", json=chat("hey")).json()["choices"][0]["message"]["content"] == "reply to: hey"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
