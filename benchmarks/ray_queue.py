"""Static ``k % N`` split against ``--launcher ray``'s queue, on documents of uneven length.

N model replicas (Ray actors of :mod:`mmtasks.ray_launcher`, each answering one request at a
time, as a replica serving batch size 1 does) answer the same documents twice, in one run:

- **static**: document k goes to replica ``k % N`` (the split of torchrun/accelerate runs,
  :mod:`mmtasks.distributed`); each replica works through its own share;
- **queue**: every document goes into one queue and a free replica takes the next
  (:class:`~mmtasks.ray_launcher.RayReplicas`, what ``--launcher ray`` runs).

Each replica calls the loopback chat server (``tests/chat_server.py``), whose latency depends
on the document: a document's length is drawn from a seeded Pareto distribution (most short, a
few long), and the server takes ``length x --unit`` seconds to answer it. The figures are wall
times; the bounds printed next to them are computed from the lengths alone: the static split
can do no better than its largest share, the queue no better than ``max(total / N, longest)``.

    python benchmarks/ray_queue.py --docs 64 --replicas 4 --unit 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mmtasks.core.conversation import Message, Text  # noqa: E402
from mmtasks.core.request import GenerationConfig, Request  # noqa: E402
from mmtasks.models.base import ModelContext, parse_model_spec  # noqa: E402
from mmtasks.ray_launcher import RaySettings, ray_replicas  # noqa: E402
from tests.chat_server import ChatServer  # noqa: E402

API_KEY = "sk-bench-not-a-real-key-000"


def lengths(docs: int, seed: int) -> list[int]:
    """Each document's length in units: Pareto(alpha 1.5), 1 to 40 units."""
    rng = random.Random(seed)
    return [min(40, max(1, round(rng.paretovariate(1.5)))) for _ in range(docs)]


def request(k: int, length: int) -> Request:
    return Request(messages=(Message(role="user", parts=(Text(f"doc {k} length {length}"),)),),
                   generation=GenerationConfig(max_new_tokens=16), task="bench", doc_id=str(k))


def latency_of(unit: float):
    def latency(body: dict) -> float:
        text = body["messages"][-1]["content"]
        text = text if isinstance(text, str) else " ".join(p.get("text", "") for p in text)
        return unit * int(text.rsplit(" ", 1)[-1])
    return latency


def static(pool, requests: list[Request]) -> float:
    """Document k to replica k % N; each replica works through its share one document at a time."""
    n = len(pool.actors)

    async def share(i: int) -> list:
        out = []
        for r in requests[i::n]:
            out += await asyncio.wrap_future(pool.actors[i].generate.remote([r]).future())
        return out

    async def everything():
        return [reply for part in await asyncio.gather(*(share(i) for i in range(n))) for reply in part]

    started = time.perf_counter()
    replies = asyncio.run(everything())
    elapsed = time.perf_counter() - started
    assert all(r.text for r in replies), [r.error for r in replies if not r.text][:3]
    return elapsed


def queued(pool, requests: list[Request]) -> float:
    """Every document in one queue, a free replica takes the next (what --launcher ray does)."""

    async def everything():
        return await asyncio.gather(*(pool.agenerate(r) for r in requests))

    started = time.perf_counter()
    replies = asyncio.run(everything())
    elapsed = time.perf_counter() - started
    assert all(r.text for r in replies), [r.error for r in replies if not r.text][:3]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=64)
    parser.add_argument("--replicas", type=int, default=4)
    parser.add_argument("--unit", type=float, default=0.05, help="seconds per unit of document length")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import ray

    sizes = lengths(args.docs, args.seed)
    requests = [request(k, n) for k, n in enumerate(sizes)]
    shares = [sum(sizes[k] for k in range(i, args.docs, args.replicas)) for i in range(args.replicas)]
    os.environ["OPENAI_API_KEY"] = API_KEY
    ray.init(num_cpus=args.replicas, include_dashboard=False, log_to_driver=False)
    with ChatServer(latency=latency_of(args.unit)) as server:
        spec = parse_model_spec("openai:test-model", {"base_url": server.base_url, "concurrency": 1})
        pool = ray_replicas(spec, ModelContext(batch_size=1), RaySettings(replicas=args.replicas))
        try:
            queued(pool, requests[:args.replicas])  # warm: every replica's client connected
            t_static = static(pool, requests)
            t_queue = queued(pool, requests)
        finally:
            pool.close()
    ray.shutdown()
    unit = args.unit
    print(f"{args.docs} documents, lengths {min(sizes)}-{max(sizes)} units (total {sum(sizes)}), "
          f"{args.replicas} replicas, {unit * 1000:g} ms per unit")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, Ray {ray.__version__}")
    print(f"{'dispatch':<10}{'wall s':>9}{'bound s':>9}")
    print(f"{'static':<10}{t_static:>9.2f}{max(shares) * unit:>9.2f}   (largest share {max(shares)} of {shares})")
    print(f"{'queue':<10}{t_queue:>9.2f}{max(sum(sizes) / args.replicas, max(sizes)) * unit:>9.2f}")
    print(f"queue / static: {t_queue / t_static:.2f}")


if __name__ == "__main__":
    main()
