"""The openai backend against a real loopback HTTP server (tests/chat_server.py)."""

from __future__ import annotations

import base64
import io
import logging
import re
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from mmtasks import secrets
from mmtasks.core.conversation import Image, Message, Text
from mmtasks.errors import ConfigError, ModelError
from mmtasks.models.base import ModelSpec
from mmtasks.models.openai_api import OpenAIModel
from mmtasks.core.request import GenerationConfig, Reply, Request
from tests.chat_server import ChatServer

KEY = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def ask(text: str, **generation: object) -> Request:
    return Request(messages=(Message.text("user", text),), generation=GenerationConfig(**generation))


def image(color: tuple[int, int, int], size: tuple[int, int], fmt: str = "PNG", noise: bool = False) -> Image:
    if noise:
        pixels = np.random.default_rng(0).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
        pil = PILImage.fromarray(pixels)
    else:
        pil = PILImage.new("RGB", size, color)
    buf = io.BytesIO()
    pil.save(buf, format=fmt)
    return Image(data=buf.getvalue())


def decode(part: dict) -> tuple[str, bytes, PILImage.Image]:
    url = part["image_url"]["url"]
    header, b64 = url.split(",", 1)
    data = base64.b64decode(b64)
    return header, data, PILImage.open(io.BytesIO(data)).convert("RGB")


def test_messages_keep_roles_and_interleaved_image_order(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    red, green, blue = image((255, 0, 0), (40, 30)), image((0, 255, 0), (20, 50)), image((0, 0, 255), (33, 17), fmt="JPEG")
    messages = (
        Message.text("system", "You are a helpful assistant."),
        Message("user", (Text("Image1: "), red, Text(". Image2: "), Text(""), green, Text(". Compare."))),
        Message.text("assistant", "They differ."),
        Message("user", (blue, Text("And this?"))),
    )
    [(index, reply)] = list(make_model().generate([Request(messages=messages)]))
    assert (index, reply.text) == (0, "reply to: And this?")
    [body] = chat_server.bodies
    assert body["model"] == "test-model"
    sent = body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[0]["content"] == "You are a helpful assistant."
    assert sent[2]["content"] == "They differ."
    parts = sent[1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
    assert [p["text"] for p in parts if p["type"] == "text"] == ["Image1: ", ". Image2: ", ". Compare."]
    decoded = [decode(p) for p in parts if p["type"] == "image_url"] + [decode(sent[3]["content"][0])]
    assert [d[2].size for d in decoded] == [(40, 30), (20, 50), (33, 17)]
    assert [d[2].getpixel((5, 5)) for d in decoded[:2]] == [(255, 0, 0), (0, 255, 0)]
    assert max(abs(a - b) for a, b in zip(decoded[2][2].getpixel((5, 5)), (0, 0, 255))) < 8
    assert [d[0] for d in decoded] == ["data:image/png;base64", "data:image/png;base64", "data:image/jpeg;base64"]
    # files already fit for sending go out byte for byte
    assert [d[1] for d in decoded] == [red.read_bytes(), green.read_bytes(), blue.read_bytes()]
    assert [p["type"] for p in sent[3]["content"]] == ["image_url", "text"]


def test_generation_settings_are_mapped(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    model = make_model()
    list(model.generate([ask("greedy", max_new_tokens=7, do_sample=False, seed=3, stop=("\n\n", "END"))]))
    list(model.generate([ask("default", temperature=None)]))
    list(model.generate([ask("sampled", do_sample=True, temperature=0.7, top_p=0.9)]))
    greedy, default, sampled = chat_server.bodies
    assert {k: greedy[k] for k in ("max_tokens", "temperature", "seed", "stop")} == {"max_tokens": 7, "temperature": 0.0, "seed": 3, "stop": ["\n\n", "END"]}
    assert "top_p" not in greedy
    assert default["max_tokens"] == 512 and not {"temperature", "top_p", "seed", "stop"} & set(default)
    assert (sampled["temperature"], sampled["top_p"]) == (0.7, 0.9)


def test_extra_body_and_max_tokens_param(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    model = make_model(extra_body={"top_k": 5}, max_tokens_param="max_completion_tokens", image_detail="high")
    list(model.generate([Request(messages=(Message("user", (image((1, 2, 3), (8, 8)), Text("hi"))),), generation=GenerationConfig(max_new_tokens=9))]))
    [body] = chat_server.bodies
    assert body["top_k"] == 5 and body["max_completion_tokens"] == 9 and "max_tokens" not in body
    assert body["messages"][0]["content"][0]["image_url"]["detail"] == "high"


def test_429_and_500_are_retried_until_success(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject(429, times=2, match="alpha")
    chat_server.inject(500, times=1, match="alpha")
    replies = dict(make_model().generate([ask("alpha"), ask("beta")]))
    assert replies[0] == Reply(text="reply to: alpha", latency=replies[0].latency, finish_reason="stop", completion_tokens=3,
                               prompt_tokens=1)  # the server's usage: its whitespace count of the prompt
    assert replies[1].text == "reply to: beta"
    assert [c.status for c in chat_server.calls_for("alpha")] == [429, 429, 500, 200]
    assert len(chat_server.calls_for("beta")) == 1


def test_retry_after_is_honoured(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject(429, retry_after=0.4)
    [(_, reply)] = list(make_model().generate([ask("x")]))
    first, second = chat_server.calls_for("x")
    assert reply.ok and second.started - first.finished >= 0.39


def test_timeout_then_success(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject("hang")
    [(_, reply)] = list(make_model(timeout=0.3).generate([ask("slow")]))
    assert reply.text == "reply to: slow" and reply.latency >= 0.3
    hung, ok = chat_server.calls_for("slow")
    assert (hung.fault, hung.status, ok.status) == ("hang", None, 200)


def test_garbage_and_dropped_connections_are_retried(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject("garbage")
    chat_server.inject("disconnect")
    [(_, reply)] = list(make_model().generate([ask("x")]))
    assert reply.ok
    assert [c.fault for c in chat_server.calls_for("x")] == ["garbage", "disconnect", None]


def test_exhausted_retries_become_a_failed_reply(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject(503, times=100, match="doomed")
    replies = dict(make_model(max_retries=2).generate([ask("doomed"), ask("fine")]))
    assert not replies[0].ok and replies[0].text is None
    assert "3 attempts" in replies[0].error and "HTTP 503" in replies[0].error
    assert replies[1].text == "reply to: fine"
    assert len(chat_server.calls_for("doomed")) == 3


def test_bad_request_is_not_retried(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.inject(400)
    [(_, reply)] = list(make_model().generate([ask("x")]))
    assert reply.error == "HTTP 400: injected 400"
    assert chat_server.calls == 1


def test_wrong_key_is_a_clear_error_without_the_key(chat_server: ChatServer, make_model: Callable[..., OpenAIModel],
                                                    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    chat_server.api_key = "the-right-key"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = make_model(api_key_env="OPENAI_API_KEY")  # paired: $OPENAI_API_KEY goes to this base_url
    with pytest.raises(ModelError) as info:
        model.check_ready()
    message = str(info.value)
    assert "401" in message and "rejected" in message and chat_server.base_url in message
    assert KEY not in message and "***" in message  # the server echoed the key; it was redacted
    with pytest.raises(ModelError) as info:
        list(model.generate([ask("x")]))
    assert KEY not in str(info.value)
    assert KEY not in repr(model) and KEY not in model.identity and KEY not in caplog.text


def test_right_key_is_sent(chat_server: ChatServer, make_model: Callable[..., OpenAIModel], monkeypatch: pytest.MonkeyPatch) -> None:
    chat_server.api_key = KEY
    monkeypatch.setenv("MY_KEY_VAR", KEY)
    model = make_model(api_key_env="MY_KEY_VAR")
    model.check_ready()
    assert [r.text for _, r in model.generate([ask("x")])] == ["reply to: x"]


def test_unreachable_endpoint(make_model: Callable[..., OpenAIModel]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelError, match=f"127.0.0.1:{port}/v1 is not usable: cannot connect"):
        make_model(base_url=f"http://127.0.0.1:{port}/v1").check_ready()


def test_check_ready_finds_unknown_models(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.strict_models = True
    with pytest.raises(ModelError, match="HTTP 404.*does not exist.*the server lists: test-model"):
        make_model("no-such-model").check_ready()
    chat_server.models_endpoint = False  # no /models: a one-token request decides
    make_model().check_ready()
    assert chat_server.bodies[-1]["max_tokens"] == 1


def test_missing_key_for_openai_is_an_error() -> None:
    with pytest.raises(ModelError, match="OPENAI_API_KEY is not set"):
        OpenAIModel(ModelSpec(backend="openai", name="gpt-4o"))


def test_bad_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="did you mean 'concurrency'"):
        OpenAIModel(ModelSpec(backend="openai", name="m", args={"base_url": "http://x/v1", "concurency": 3}))
    with pytest.raises(ConfigError) as info:
        OpenAIModel(ModelSpec(backend="openai", name="m", args={"base_url": "http://x/v1", "api_key": KEY}))
    assert KEY not in str(info.value) and secrets.redact(KEY) == "***"


def rounds_of(n: int) -> Callable[[dict], float]:
    """A server latency that holds each call until ``n`` calls are in flight, then lets the ``n``
    go together: a client that sends fewer at once never completes a round (its calls fail when
    the barrier breaks, a hang guard of 60 s), one that sends more shows in ``max_in_flight``."""
    barrier = threading.Barrier(n, timeout=60)

    def latency(body: dict) -> float:
        barrier.wait()
        return 0.0

    return latency


def test_concurrent_wave_is_bounded_and_parallel(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    requests = [ask(f"q{i}") for i in range(64)]
    model = make_model(concurrency=32, max_retries=0)
    model.check_ready()  # as a run does first; starts the client
    chat_server.latency = rounds_of(32)  # two rounds of 32 (one after another would never fill a round)
    replies = dict(model.generate(requests))
    assert [replies[i].text for i in range(64)] == [f"reply to: q{i}" for i in range(64)]
    assert chat_server.max_in_flight == 32


def test_replies_are_yielded_as_they_arrive(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    fast_received = threading.Event()
    chat_server.latency = lambda body: float(not fast_received.wait(60)) if "slow" in str(body["messages"]) else 0.0
    stream = make_model().generate([ask("slow"), ask("fast")])
    first = next(stream)  # the slow reply is held until the fast one has been yielded
    fast_received.set()
    assert first[0] == 1
    assert next(stream)[0] == 0


def test_big_image_is_downscaled_to_the_cap(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    big = image((200, 100, 50), (1080, 3500), fmt="JPEG")
    list(make_model(max_image_side=1024).generate([Request(messages=(Message("user", (big, Text("?"))),))]))
    header, _, pil = decode(chat_server.bodies[0]["messages"][0]["content"][0])
    assert header == "data:image/jpeg;base64" and pil.size == (316, 1024)
    assert max(abs(a - b) for a, b in zip(pil.getpixel((100, 500)), (200, 100, 50))) < 8


def test_image_byte_cap(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    noisy = image((0, 0, 0), (500, 400), noise=True)
    assert len(noisy.read_bytes()) > 500_000
    list(make_model(image_max_bytes=100_000).generate([Request(messages=(Message("user", (noisy,)),))]))
    _, data, pil = decode(chat_server.bodies[0]["messages"][0]["content"][0])
    assert len(data) <= 100_000 and abs(pil.width / pil.height - 1.25) < 0.02


def test_same_image_is_encoded_once(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    data = image((9, 9, 9), (2000, 600), fmt="JPEG").read_bytes()
    model = make_model(max_image_side=512)
    requests = [Request(messages=(Message("user", (Image(data=data), Text(f"q{i}"))),)) for i in range(10)]
    assert all(r.ok for _, r in model.generate(requests))
    assert model.encoder.encoded == 1
    urls = {b["messages"][0]["content"][0]["image_url"]["url"] for b in chat_server.bodies}
    assert len(urls) == 1 and decode({"image_url": {"url": urls.pop()}})[2].size == (512, 154)


def test_corrupt_image_fails_its_request_with_the_data_error(chat_server: ChatServer,
                                                            make_model: Callable[..., OpenAIModel]) -> None:
    """An image that does not decode fails its own request, the data error's one line as the
    reason (naming the document); nothing is sent for it, and the other requests are answered."""
    broken = Image(data=b"not an image", doc_id="d7")
    ((_, failed), (_, answered)) = sorted(make_model().generate([
        Request(messages=(Message("user", (broken,)),)), Request(messages=(Message("user", (Text("hi"),)),))]))
    assert not failed.ok and re.search(r"document 'd7'.*corrupt", failed.error or "")
    assert answered.ok and len(chat_server.bodies) == 1


def test_images_unfit_to_send_as_they_are_are_reencoded_like_decode_image(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    buf = io.BytesIO()
    PILImage.new("RGBA", (30, 20), (10, 20, 30, 128)).save(buf, format="PNG")
    rgba = Image(data=buf.getvalue())
    buf = io.BytesIO()
    exif = PILImage.Exif()
    exif[0x0112] = 6  # "rotate 90" orientation flag
    PILImage.new("RGB", (40, 10), (250, 250, 250)).save(buf, format="JPEG", exif=exif)
    rotated = Image(data=buf.getvalue())
    list(make_model().generate([Request(messages=(Message("user", (rgba, rotated)),))]))
    (h1, d1, p1), (h2, d2, p2) = [decode(p) for p in chat_server.bodies[0]["messages"][0]["content"]]
    assert (h1, p1.size, p1.getpixel((0, 0))) == ("data:image/png;base64", (30, 20), (10, 20, 30))
    assert PILImage.open(io.BytesIO(d1)).mode == "RGB"
    assert (h2, p2.size) == ("data:image/jpeg;base64", (40, 10))  # pixels as stored, as decode_image gives them
    assert PILImage.open(io.BytesIO(d2)).getexif().get(0x0112) is None


# -- agenerate: one request, from the caller's event loop ----------------------------

def test_agenerate_bounds_concurrency_in_the_callers_loop(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    import asyncio

    chat_server.latency = rounds_of(8)  # 24 requests: three rounds of 8
    model = make_model(concurrency=8, max_retries=0)
    assert model.supports_async

    async def run(tag: str) -> list[Reply]:
        replies = await asyncio.gather(*(model.agenerate(ask(f"{tag}{i}")) for i in range(24)))
        await model.aclose()
        return list(replies)

    first = asyncio.run(run("a"))  # one loop ...
    second = asyncio.run(run("b"))  # ... then a new one: the client binds to the running loop
    assert [r.text for r in first] == [f"reply to: a{i}" for i in range(24)]
    assert [r.text for r in second] == [f"reply to: b{i}" for i in range(24)]
    assert chat_server.max_in_flight == 8
    chat_server.latency = 0.0
    # and the wave API runs the same code on a loop of its own
    assert [r.text for _, r in model.generate([ask("c")])] == ["reply to: c"]


def test_agenerate_while_another_loop_is_closed_without_aclose(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    import asyncio

    model = make_model()
    assert asyncio.run(model.agenerate(ask("x"))).text == "reply to: x"  # its loop ends, connections left open
    assert asyncio.run(model.agenerate(ask("y"))).text == "reply to: y"
    model.close()  # the closed loop's client is skipped, not awaited on a dead loop


@pytest.mark.parametrize("userinfo", ["tok-user-only-123456", "evaluser:pw-secret-123456", ":pw-secret-123456"])
def test_credentials_in_base_url_are_refused(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch, userinfo: str) -> None:
    # httpx would send them as Basic auth in place of the key, and base_url is recorded in results.json
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url = chat_server.base_url.replace("http://", f"http://{userinfo}@")
    with pytest.raises(ConfigError, match="base_url carries credentials before the host") as info:
        OpenAIModel(ModelSpec(backend="openai", name="test-model", args={"base_url": url}))
    parts = [p for p in userinfo.split(":") if p]
    assert not any(p in info.value.render() for p in parts)
    assert [secrets.redact(p) for p in parts] == ["***"] * len(parts)  # registered, should it be echoed anywhere
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(ConfigError, match=r"\$OPENAI_BASE_URL carries credentials"):
        OpenAIModel(ModelSpec(backend="openai", name="test-model"))
    assert chat_server.calls == 0


def test_key_goes_as_bearer_and_no_key_sends_a_placeholder(chat_server: ChatServer, make_model: Callable[..., OpenAIModel],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY_VAR", KEY)
    assert make_model(api_key_env="MY_KEY_VAR").generate_all([ask("a")])[0].ok
    assert make_model().generate_all([ask("b")])[0].ok  # no $OPENAI_API_KEY: the SDK must not go looking for one
    auth = [{k.lower(): v for k, v in c.headers.items()}.get("authorization") for c in chat_server.log]
    assert auth == [f"Bearer {KEY}", "Bearer EMPTY"]


def test_small_images_that_go_as_they_are_are_encoded_on_the_loop(tmp_path: Path, chat_server: ChatServer,
                                                                   make_model: Callable[..., OpenAIModel]) -> None:
    # a few kilobytes sent as they are: built on the event loop, no thread pool (handing tiny jobs
    # to threads cost more than the work, and their hold on the GIL slowed the loop's sends)
    small = tmp_path / "small.png"
    small.write_bytes(image((1, 2, 3), (64, 48)).read_bytes())
    model = make_model()
    request = Request(messages=(Message("user", (Image(path=small), Text("q"))),))
    assert all(r.ok for _, r in model.generate([request, request]))
    assert model._pool is None and model.encoder.encoded == 1
    header, data, _ = decode(chat_server.bodies[0]["messages"][0]["content"][0])
    assert header == "data:image/png;base64" and data == small.read_bytes()


@pytest.mark.parametrize("case", ["needs resizing", "large file"])
def test_images_to_decode_or_large_go_to_the_image_threads(case: str, tmp_path: Path, chat_server: ChatServer,
                                                           make_model: Callable[..., OpenAIModel]) -> None:
    if case == "needs resizing":  # few bytes, but 2000 px wide: decoding must not stall the loop
        picture, model = image((9, 9, 9), (2000, 600), fmt="JPEG"), make_model(max_image_side=512)
    else:
        picture, model = image((0, 0, 0), (400, 400), noise=True), make_model()
        assert len(picture.read_bytes()) > 64 * 1024
    path = tmp_path / "picture"
    path.write_bytes(picture.read_bytes())
    assert all(r.ok for _, r in model.generate([Request(messages=(Message("user", (Image(path=path),)),))]))
    assert model._pool is not None and model.encoder.encoded == 1
