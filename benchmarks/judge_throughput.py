"""Judge throughput: 1,000 judge requests against a server that takes 200 ms per call.

The ``mmdu`` task is run with the ``random`` model (instant answers) and an
``openai`` judge pointed at the loopback chat server (``tests/chat_server.py``,
in its own process) that answers every call after a fixed latency with a reply
in MMDU's official judge format. 125 synthetic dialogues x 8 turns give 1,000
judge calls (each with the dialogue's image, as MMDU's judge sees every image);
the protocol sends them all in one scheduler wave, and the backend keeps
``concurrency`` of them in flight.

Figures: the run's wall time (the whole ``mmtasks`` run, imports excepted),
the judge phase (server side: first judge call received to last reply sent),
and the ideal ``latency x requests / concurrency``.

Usage (from the repository root)::

    python benchmarks/judge_throughput.py [--dialogues 125] [--turns 8] [--latency 0.2] [--concurrency 32,64]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.timing import timed_cli  # noqa: E402
import mmtasks.commands.run  # noqa: E402,F401  (imported before timing)
import mmtasks.models.openai_api  # noqa: E402,F401
from benchmarks.loopback import ServerProcess  # noqa: E402
from tests.mmdu_data import write_mmdu  # noqa: E402

WORK = REPO / "benchmarks" / "_work"


def run_once(data: Path, out: Path, base_url: str, concurrency: int) -> tuple[float, list[str], dict]:
    argv = ["--tasks", "mmdu", "--model", "random", "--judge", "openai:judge",
            "--judge-args", f"base_url={base_url},concurrency={concurrency}",
            "--no-cache", "--no-progress", "--data-dir", str(data), "--output-path", str(out), "--overwrite"]
    elapsed, results = timed_cli(argv, out)
    return elapsed, argv, results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dialogues", type=int, default=125)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per call")
    ap.add_argument("--concurrency", default="32,64", help="comma-separated judge concurrency values")
    args = ap.parse_args()

    data = WORK / f"mmdu-{args.dialogues}x{args.turns}"
    write_mmdu(data, [[1] + [0] * (args.turns - 1)] * args.dialogues)
    n = args.dialogues * args.turns
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    print("command: python benchmarks/judge_throughput.py " + " ".join(sys.argv[1:]))
    print(f"{args.dialogues} MMDU dialogues x {args.turns} turns = {n} judge calls; server latency {args.latency:g} s (separate process)")
    print(f"{'concurrency':>11} {'run s':>7} {'judge phase s':>14} {'ideal s':>8} {'phase/ideal':>12} {'run/ideal':>10} {'in flight':>10} {'judged':>7}")
    with ServerProcess(latency=args.latency, reply="mmdu_judge", models=("judge",)) as server:
        for c in (int(x) for x in args.concurrency.split(",")):
            server.reset()
            elapsed, argv, results = run_once(data, WORK / f"judge-run-c{c}", server.base_url, c)
            stats = server.stats()
            # judged turns: the scored turns of the coverage record (every turn needs its verdict)
            judged = results["coverage"]["mmdu"]["scored"]
            if stats.calls != n or judged != n:
                raise SystemExit(f"expected {n} judge calls, the server got {stats.calls} and {judged} turns were judged")
            ideal = args.latency * n / c
            print(f"{c:>11} {elapsed:>7.2f} {stats.span:>14.2f} {ideal:>8.2f} {stats.span / ideal:>11.2f}x {elapsed / ideal:>9.2f}x "
                  f"{stats.max_in_flight:>10} {judged:>7}", flush=True)
    print("command per row: python -m mmtasks " + " ".join(a if " " not in a else repr(a) for a in argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
