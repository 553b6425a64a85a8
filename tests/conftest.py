"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.chat_server import ChatServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A fresh loopback OpenAI-compatible server (see tests/chat_server.py).

    Its settings (``latency``, ``reply``, ``api_key``, ``models``,
    ``strict_models``, ``models_endpoint``) are plain attributes: assign them
    in the test; schedule failures with ``chat_server.inject(...)``.
    """
    with ChatServer() as server:
        yield server
