"""The loopback chat server of ``tests/chat_server.py`` in its own process, for benchmarks.

Running the server in a separate process keeps its request handling (JSON
parsing of bodies with base64 images, one thread per connection) from
competing with the client for the GIL, as a real server would. The parent
talks to it over a pipe: its URL, its counters, reset, stop.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import re
import statistics
import sys
from collections.abc import Callable
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


def choice_reply(body: dict) -> str:
    """A multiple-choice answer every RealBench ranking parser accepts (no re-asks)."""
    return "A"


_TAG = re.compile(r"\[d(\d+)t(\d+)\]")
#: z of the 99th percentile of a standard normal
_Z99 = 2.3263478740408408


def lognormal_latency(d: int, t: int, median: float, p99: float, seed: int = 0) -> float:
    """The latency of turn ``t`` of dialogue ``d``: lognormal with the given median and 99th
    percentile, drawn from a hash of (seed, d, t) so that every run (and the ideal) agrees."""
    u = int.from_bytes(hashlib.sha256(f"{seed}:{d}:{t}".encode()).digest()[:8], "big") / 2**64
    z = statistics.NormalDist().inv_cdf(min(max(u, 1e-12), 1 - 1e-12))
    sigma = math.log(p99 / median) / _Z99
    return median * math.exp(sigma * z)


def _latency_function(spec: float | str) -> Callable[[dict], float] | float:
    """``0.05`` (seconds) or ``"lognormal:MEDIAN:P99"``: per call, from the ``[d<i>t<j>]`` tag of
    the last user message (tests/mmdu_data.py), the median when there is none."""
    if not isinstance(spec, str):
        return spec
    _, median, p99 = spec.split(":")
    med, top = float(median), float(p99)

    def latency(body: dict) -> float:
        from tests.chat_wire import last_user_text

        tags = _TAG.findall(last_user_text(body))
        return lognormal_latency(int(tags[-1][0]), int(tags[-1][1]), med, top) if tags else med
    return latency


@dataclass
class ServerStats:
    calls: int
    max_in_flight: int
    #: seconds from the first chat call's arrival to the last chat call's reply (0 if none)
    span: float
    #: time.monotonic() (system-wide on Linux) of the first chat call's arrival (0 if none)
    first_started: float = 0.0
    #: seconds from the first call's arrival until N calls were in flight at once, for N = 8, 16, 32, 64
    ramp: dict[int, float] | None = None


def _serve(conn: Connection, latency: float | str, reply: str, models: tuple[str, ...]) -> None:
    sys.path.insert(0, str(REPO))
    from tests.chat_server import ChatServer
    from tests.chat_wire import echo_reply

    replies = {"echo": echo_reply, "mmdu_judge": mmdu_judge_reply, "choice": choice_reply}
    with ChatServer(latency=_latency_function(latency), reply=replies[reply], models=models) as server:
        conn.send(server.base_url)
        while True:
            command = conn.recv()
            if command == "stats":
                chat = [c for c in server.log if c.path.endswith("/chat/completions") and c.finished is not None]
                span = max(c.finished for c in chat) - min(c.started for c in chat) if chat else 0.0  # type: ignore[type-var]
                first = min((c.started for c in chat), default=0.0)
                conn.send(ServerStats(server.calls, server.max_in_flight, span, first, _ramp(chat, first)))
            elif command == "reset":
                server.reset()
                conn.send(True)
            else:
                conn.send(True)
                return


def _ramp(chat: list, first: float) -> dict[int, float]:
    events = sorted([(c.started, 1) for c in chat] + [(c.finished, -1) for c in chat])
    out: dict[int, float] = {}
    level = 0
    for t, step in events:
        level += step
        for n in (8, 16, 32, 64):
            if level >= n and n not in out:
                out[n] = t - first
    return out


class ServerProcess:
    """``with ServerProcess(latency=0.2) as server: ... server.base_url ... server.stats()``."""

    def __init__(self, *, latency: float | str, reply: str = "echo", models: tuple[str, ...] = ("bench",)) -> None:
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
