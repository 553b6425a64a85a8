"""Finding 2 of issue 23: $OPENAI_API_KEY goes only to the host it is for.

Set for the default GPT-4o judge, it used to go as ``Bearer sk-...`` to any ``base_url`` a
``--model-args`` named. Now, unnamed, it goes to the OpenAI API, to the $OPENAI_BASE_URL set
beside it, and to the hosts listed in $MMTASKS_OPENAI_KEY_HOSTS; elsewhere only when paired
explicitly (``api_key_env=OPENAI_API_KEY``), and a server that wants a key says how."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mmtasks.core.conversation import Message
from mmtasks.core.request import Request
from mmtasks.errors import ModelError
from mmtasks.models.base import ModelSpec
from mmtasks.models.openai_api import OpenAIModel
from mmtasks.models.openai_args import key_goes_to
from tests.chat_server import ChatServer

KEY = "sk-users-openai-key-0123456789"


@pytest.fixture(autouse=True)
def user_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("MMTASKS_OPENAI_KEY_HOSTS", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # set for the default judge


def sent_keys(server: ChatServer) -> list[str | None]:
    return [{k.lower(): v for k, v in c.headers.items()}.get("authorization") for c in server.log]


def ask(model: OpenAIModel) -> None:
    assert model.generate_all([Request(messages=(Message.text("user", "hi"),))])[0].ok


def test_the_openai_key_never_goes_to_another_base_url(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    ask(make_model())  # --model-args base_url=http://third-party/v1
    assert sent_keys(chat_server) == ["Bearer EMPTY"]  # before: Bearer sk-users-openai-key-...
    assert all(KEY not in str(c.headers) for c in chat_server.log)


def test_named_paired_or_listed_the_key_is_sent(chat_server: ChatServer, make_model: Callable[..., OpenAIModel],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ask(make_model(api_key_env="OPENAI_API_KEY"))  # paired explicitly
    monkeypatch.setenv("MMTASKS_OPENAI_KEY_HOSTS", "example.org, 127.0.0.1")
    ask(make_model())  # the documented allow-list
    monkeypatch.delenv("MMTASKS_OPENAI_KEY_HOSTS")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    model = OpenAIModel(ModelSpec(backend="openai", name="test-model"))  # $OPENAI_BASE_URL beside $OPENAI_API_KEY
    try:
        ask(model)
    finally:
        model.close()
    assert sent_keys(chat_server) == [f"Bearer {KEY}"] * 3


def test_a_server_that_wants_the_key_says_how_to_pair_it(chat_server: ChatServer, make_model: Callable[..., OpenAIModel]) -> None:
    chat_server.api_key = KEY
    with pytest.raises(ModelError) as info:
        make_model().check_ready()
    message = info.value.render()
    assert "asks for a key, and none was sent" in message
    assert "$OPENAI_API_KEY was not sent" in message and "api_key_env=OPENAI_API_KEY" in message
    assert "MMTASKS_OPENAI_KEY_HOSTS" in message and KEY not in message
    assert all(KEY not in str(c.headers) for c in chat_server.log)


def test_which_hosts_the_key_is_for() -> None:
    assert key_goes_to("https://api.openai.com/v1", {})
    assert not key_goes_to("http://api.openai.com/v1", {})  # never in clear text
    assert not key_goes_to("https://api.openai.com.evil.example/v1", {})
    assert not key_goes_to("https://evil.example/v1?x=api.openai.com", {})
    assert key_goes_to("https://proxy.corp/v1", {"MMTASKS_OPENAI_KEY_HOSTS": "proxy.corp"})
    assert not key_goes_to("https://proxy.corp.evil/v1", {"MMTASKS_OPENAI_KEY_HOSTS": "proxy.corp"})
