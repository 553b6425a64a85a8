"""CPU per chat-completions request of HTTP client stacks, against the loopback server.

The same 500 small requests (no images; the server answers after 50 ms; 32 in flight) through:

- ``mmtasks openai backend``: ``OpenAIModel.agenerate`` (the ``openai`` SDK over an
  ``httpx.AsyncClient`` per concurrency slot, with mmtasks' guarded transport);
- ``SDK + httpx``: the SDK over a plain ``httpx.AsyncClient`` per slot (what the backend
  builds on, without its guards);
- ``SDK + httpx2``: the SDK over its own default client library, ``httpx2``, when the SDK has
  one (openai 3.x);
- ``SDK + httpx + httpx-aiohttp``: the ``httpx-aiohttp`` transport under ``httpx`` (when
  ``httpx-aiohttp`` is installed);
- ``SDK + aiohttp``: ``openai.DefaultAioHttpClient`` (when ``openai[aiohttp]`` is installed);
- ``aiohttp alone``: no SDK, a bare ``aiohttp`` session (when installed): the floor of a
  Python client on this CPU.

Reported: wall seconds for the 500 requests (floor: ceil(500 / 32) x 0.05 s = 0.8 s) and this
process's CPU per request (the server is another process). Packages that are not installed
are skipped, so the script runs in the test venv as it is; install ``openai[aiohttp]`` and
``httpx-aiohttp`` into a scratch venv to see those rows.

Usage (from the repository root)::

    python benchmarks/http_clients.py [--requests 500] [--concurrency 32] [--latency 0.05] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.loopback import ServerProcess  # noqa: E402

BODY = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "hi " * 50}], "max_tokens": 8}).encode()
HEADERS = {"Content-Type": "application/json"}


async def _timed(one: Callable[[], Awaitable[None]], n: int) -> tuple[float, float]:
    await asyncio.gather(*(one() for _ in range(32)))  # connections open, first-call work done
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - wall, time.process_time() - cpu


def _response_type(http_client: Any) -> type:
    """What the SDK's ``cast_to`` must name to get the raw answer of this HTTP client."""
    if importlib.util.find_spec("httpx2") is not None:
        import httpx2

        if isinstance(http_client, httpx2.AsyncClient):
            return httpx2.Response
    import httpx

    return httpx.Response


async def sdk_slots(url: str, http_client: Callable[[], Any], n: int, c: int) -> tuple[float, float]:
    """The SDK's request loop (``client.post``, as the backend calls it), one client per slot."""
    import openai

    idle: asyncio.Queue[Any] = asyncio.Queue()
    https = [http_client() for _ in range(c)]
    clients = [openai.AsyncOpenAI(api_key="x", base_url=url, http_client=h) for h in https]
    response_type = _response_type(https[0])
    for client in clients:
        idle.put_nowait(client)

    async def one() -> None:
        client = await idle.get()
        try:
            reply = await client.post("/chat/completions", cast_to=response_type, content=BODY, options={"headers": HEADERS})
            assert reply.status_code == 200
        finally:
            idle.put_nowait(client)

    try:
        return await _timed(one, n)
    finally:
        await asyncio.gather(*(client.close() for client in clients))


async def backend(url: str, n: int, c: int) -> tuple[float, float]:
    from mmtasks.core.conversation import Message
    from mmtasks.core.request import Request
    from mmtasks.models.base import ModelSpec
    from mmtasks.models.openai_api import OpenAIModel

    model = OpenAIModel(ModelSpec(backend="openai", name="bench", args={"base_url": url, "concurrency": c}))
    request = Request(messages=(Message.text("user", "hi " * 50),))

    async def one() -> None:
        reply = await model.agenerate(request)
        assert reply.ok, reply.error

    try:
        return await _timed(one, n)
    finally:
        await model.aclose()
        model.close()


async def bare_aiohttp(url: str, n: int, c: int) -> tuple[float, float]:
    import aiohttp

    limit = asyncio.Semaphore(c)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=c)) as session:
        async def one() -> None:
            async with limit, session.post(f"{url}/chat/completions", data=BODY, headers={**HEADERS, "Authorization": "Bearer x"}) as r:
                await r.read()
                assert r.status == 200

        return await _timed(one, n)


def variants(url: str, n: int, c: int) -> dict[str, Callable[[], Awaitable[tuple[float, float]]] | None]:
    import httpx
    import openai

    one = {"max_connections": 1, "max_keepalive_connections": 1}
    out: dict[str, Callable[[], Awaitable[tuple[float, float]]] | None] = {
        "mmtasks openai backend": lambda: backend(url, n, c),
        "SDK + httpx": lambda: sdk_slots(url, lambda: httpx.AsyncClient(limits=httpx.Limits(**one)), n, c),
        "SDK + httpx2": None,
        "SDK + httpx + httpx-aiohttp": None,
        "SDK + aiohttp": None,
        "aiohttp alone": None,
    }
    if importlib.util.find_spec("httpx2") is not None:
        import httpx2

        out["SDK + httpx2"] = lambda: sdk_slots(url, lambda: httpx2.AsyncClient(limits=httpx2.Limits(**one)), n, c)
    if importlib.util.find_spec("aiohttp") is None:
        return out
    if importlib.util.find_spec("httpx_aiohttp") is not None:
        import httpx_aiohttp

        out["SDK + httpx + httpx-aiohttp"] = lambda: sdk_slots(
            url, lambda: httpx.AsyncClient(transport=httpx_aiohttp.AiohttpTransport(limits=httpx.Limits(**one))), n, c)
    if hasattr(openai, "DefaultAioHttpClient"):
        out["SDK + aiohttp"] = lambda: sdk_slots(url, openai.DefaultAioHttpClient, n, c)
    out["aiohttp alone"] = lambda: bare_aiohttp(url, n, c)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("command: python benchmarks/http_clients.py " + " ".join(sys.argv[1:]))
    floor = -(-args.requests // args.concurrency) * args.latency
    print(f"{args.requests} requests, {args.concurrency} in flight, server latency {args.latency:g} s (floor {floor:.2f} s)")
    with ServerProcess(latency=args.latency, reply="choice", models=("bench",)) as server:
        for rep in range(args.repeat):
            for name, run in variants(server.base_url, args.requests, args.concurrency).items():
                if run is None:
                    if rep == 0:
                        print(f"  {name:30s} (not installed)")
                    continue
                try:
                    wall, cpu = asyncio.run(run())
                except RuntimeError as exc:  # the SDK's aiohttp client without its extra installed
                    if rep == 0:
                        print(f"  {name:30s} (not available: {exc})")
                    continue
                print(f"  {name:30s} wall {wall:5.2f} s  CPU {cpu / args.requests * 1000:5.2f} ms per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
