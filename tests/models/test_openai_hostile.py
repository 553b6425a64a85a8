"""Hostile servers against the openai backend: every malformed, endless, oversized or
trickled answer is a counted failure, retried like the rest, and never a crash, a hang or
a body held in memory (issue 12). Also the SDK's typed errors as failure kinds, and
Azure-style endpoints (a query string in base_url)."""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Callable

import pytest

from mmtasks.core.conversation import Message
from mmtasks.core.request import GenerationConfig, Request
from mmtasks.models.openai_api import OpenAIModel
from mmtasks.models.openai_payload import BadResponse, completion_text, is_context_overflow
from tests.chat_server import ChatServer


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def ask(text: str) -> Request:
    return Request(messages=(Message.text("user", text),), generation=GenerationConfig(max_new_tokens=5))


def one(model: OpenAIModel, text: str = "x"):
    return asyncio.run(model.agenerate(ask(text)))


@pytest.mark.parametrize("kind, why", [
    ("garbage", "not a chat completion (JSONDecodeError)"),
    ("deep_json", "not a chat completion (RecursionError)"),
    ("bad_content", "content is a int, not a string"),
    ("bad_part", "a part whose text is not a string"),
    ("no_choices", "not a chat completion (KeyError)"),
])
def test_malformed_200_is_retried_then_a_counted_failure(chat_server: ChatServer, make_model: Callable[..., OpenAIModel],
                                                        kind: str, why: str) -> None:
    chat_server.inject(kind, times=1, match="once")
    chat_server.inject(kind, times=2, match="always")
    model = make_model(max_retries=1)
    assert one(model, "once").text == "reply to: once"  # retried like the rest
    failed = one(model, "always")
    assert failed.text is None and failed.error.startswith("failed after 2 attempts: invalid response: ") and why in failed.error
    assert [c.fault for c in chat_server.calls_for("once")] == [kind, None]
    assert len(chat_server.calls_for("always")) == 2


def test_a_wave_with_malformed_bodies_completes(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    for kind in ("deep_json", "bad_content", "bad_part", "no_choices", "garbage"):
        chat_server.inject(kind, times=1, match=kind)
    replies = dict(make_model(max_retries=0).generate([ask(k) for k in ("deep_json", "bad_content", "fine", "bad_part", "no_choices")]))
    assert [replies[i].ok for i in range(5)] == [False, False, True, False, False]
    assert all(r.error.startswith("failed after 1 attempt: invalid response") for r in replies.values() if not r.ok)


def test_trickling_server_is_cut_at_the_deadline(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    # each byte comes within the read timeout, so only the total deadline ends the attempt
    chat_server.inject("trickle", times=2)
    model = make_model(timeout=3, deadline=0.6, max_retries=1)
    reply = one(model)
    # the deadline (not the 3 s read timeout) ended both attempts: the reason says so, and few bytes came
    assert reply.error is not None and reply.error.startswith("failed after 2 attempts: no complete answer within the 0.6s deadline")
    assert chat_server.hostile_bytes_sent < 20


def test_default_deadline_is_twice_the_timeout(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject("trickle", times=1)
    reply = one(make_model(timeout=0.4, max_retries=0))
    assert "within the 0.8s deadline" in reply.error


@pytest.mark.parametrize("kind", ["huge", "huge_chunked", "gzip_bomb"])
def test_oversized_answers_are_capped(chat_server: ChatServer, make_model: Callable[..., OpenAIModel], kind: str) -> None:
    chat_server.inject(kind, times=2)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reply = one(make_model(max_response_bytes=1_000_000, max_retries=1))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert reply.error is not None and reply.error.startswith("failed after 2 attempts: the answer is larger than max_response_bytes=1000000")
    assert grown_mb < 100  # a 1.5 GB body (or 256 MB inflated) was never held
    if kind == "huge":
        assert "declared 1500000000 bytes" in reply.error  # refused on its header
    # the client hung up early: the server got to send little of its 1.5 GB
    assert chat_server.hostile_bytes_sent < 64 * 1024 * 1024
    assert one(make_model(max_response_bytes=1_000_000)).text == "reply to: x"  # the endpoint still serves


def test_failure_kinds(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject(400, match="plain")
    chat_server.inject(422, match="unprocessable")
    chat_server.inject(503, times=3, match="unavailable")
    model = make_model(max_retries=2)
    assert one(model, "plain").error == "HTTP 400: injected 400"
    assert one(model, "unprocessable").error == "HTTP 422: injected 422"
    assert one(model, "unavailable").error == "failed after 3 attempts: HTTP 503: injected 503"
    assert [c.status for c in chat_server.calls_for("plain")] == [400]


def test_context_overflow_is_its_own_kind(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    message = ("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
               "(4995 in the messages, 5 in the completion).")
    chat_server.inject(400, match="long", message=message, code="context_length_exceeded")
    failed = one(make_model(), "long")
    assert failed.error == f"context_overflow: HTTP 400: {message}"
    assert len(chat_server.calls_for("long")) == 1  # not retried: the same prompt cannot fit


def test_context_overflow_messages_of_other_servers() -> None:
    vllm = "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens."
    tgi = "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 512 `max_new_tokens`"
    assert is_context_overflow(400, vllm, None) and is_context_overflow(422, tgi, None)
    assert is_context_overflow(400, "whatever", "context_length_exceeded")
    assert not is_context_overflow(400, "temperature must be between 0 and 2", None)
    assert not is_context_overflow(500, vllm, None)  # a server error is retried, not classified


def test_completion_text_accepts_parts_and_refusals() -> None:
    body = b'{"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]}'
    assert completion_text(body) == "ab"
    assert completion_text(b'{"choices": [{"message": {"content": null, "refusal": "no"}}]}') == "no"
    assert completion_text(b'{"choices": [{"message": {"content": null}}]}') is None
    with pytest.raises(BadResponse, match="RecursionError"):
        completion_text(b"[" * 100_000 + b"]" * 100_000)


def test_base_url_query_becomes_default_query(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    # Azure-style: the query must follow the path the SDK appends, not precede it
    model = make_model(base_url=chat_server.base_url + "?api-version=2024-06-01", default_headers={"X-Trace": "t1"})
    assert one(model).text == "reply to: x"
    model.check_ready()
    chat = [c for c in chat_server.log if c.path.endswith("/chat/completions")]
    assert chat and all(c.query == "api-version=2024-06-01" for c in chat)
    assert {k.lower(): v for k, v in chat[0].headers.items()}.get("x-trace") == "t1"
    assert model.url == chat_server.base_url and "api-version" not in model.identity


def test_environment_proxy_is_kept_under_the_guarded_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    # the backend's client has an explicit transport (trust_env=False), so it reads the proxy itself
    from mmtasks.models.openai_transport import environment_proxy

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert environment_proxy("https://api.example.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,internal.corp")
    assert environment_proxy("https://api.example.com/v1") == "http://proxy.corp:3128"
    assert environment_proxy("http://api.example.com/v1") is None
    assert environment_proxy("https://gpu.internal.corp:8000/v1") is None
