"""The loopback chat server of ``tests/chat_server.py`` in its own process, for benchmarks.

Running the server in a separate process keeps its request handling (JSON
parsing of bodies with base64 images, one thread per connection) from
competing with the client for the GIL, as a real server would. The parent
talks to it over a pipe: its URL, its counters, reset, stop.
"""

from __future__ import annotations

import multiprocessing
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: the scores every judge call of the benchmarks gets (MMDU's official reply shape)
JUDGE_SCORES = {"Creativity": 7, "Richness": 8, "Visual Perception": 6, "Logical Coherence": 9,
                "Answer Accuracy": 7, "Image Relationship Understanding": 6, "Overall Score": 7}


def mmdu_judge_reply(body: dict) -> str:
    return f"The answer is fine.\n{JUDGE_SCORES!r}"


@dataclass
class ServerStats:
    calls: int
    max_in_flight: int
    #: seconds from the first chat call's arrival to the last chat call's reply (0 if none)
    span: float


def _serve(conn: Connection, latency: float, reply: str, models: tuple[str, ...]) -> None:
    sys.path.insert(0, str(REPO))
    from tests.chat_server import ChatServer
    from tests.chat_wire import echo_reply

    replies = {"echo": echo_reply, "mmdu_judge": mmdu_judge_reply}
    with ChatServer(latency=latency, reply=replies[reply], models=models) as server:
        conn.send(server.base_url)
        while True:
            command = conn.recv()
            if command == "stats":
                chat = [c for c in server.log if c.path.endswith("/chat/completions") and c.finished is not None]
                span = max(c.finished for c in chat) - min(c.started for c in chat) if chat else 0.0  # type: ignore[type-var]
                conn.send(ServerStats(server.calls, server.max_in_flight, span))
            elif command == "reset":
                server.reset()
                conn.send(True)
            else:
                conn.send(True)
                return


class ServerProcess:
    """``with ServerProcess(latency=0.2) as server: ... server.base_url ... server.stats()``."""

    def __init__(self, *, latency: float, reply: str = "echo", models: tuple[str, ...] = ("bench",)) -> None:
        self._args = (latency, reply, models)
        self.base_url = ""

    def __enter__(self) -> "ServerProcess":
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, *self._args), daemon=True)
        self._proc.start()
        self.base_url = self._conn.recv()
        return self

    def _ask(self, command: str) -> Any:
        self._conn.send(command)
        return self._conn.recv()

    def stats(self) -> ServerStats:
        return self._ask("stats")

    def reset(self) -> None:
        self._ask("reset")

    def __exit__(self, *exc: object) -> None:
        self._ask("stop")
        self._proc.join(timeout=10)
