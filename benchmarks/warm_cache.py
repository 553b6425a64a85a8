"""Warm cache: re-running a finished evaluation vs running it the first time.

Runs one command twice against the loopback OpenAI-compatible server of
``tests/chat_server.py``, which answers every chat call after a fixed latency:

- cold: an empty cache folder, every request goes to the server;
- warm: the same command again (three times; the median counts), every reply
  comes from the cache.

Both runs are separate ``python -m mmtasks`` processes, timed from start to exit
(interpreter start, imports, data checks, scoring and writing included). The
evaluation is every RealBench task plus MMDU with an LLM judge on the bundled
sample data (``data/sample``); the server answers RealBench prompts with the
scripted model of ``tests/realbench_oracle.py`` (so there are re-asks), MMDU
turns with a short answer and judge calls with a verdict. The script checks
that the warm run sent nothing and produced the same results.

Usage (from the repository root)::

    python benchmarks/warm_cache.py [--latency 2.0] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.chat_server import ChatServer  # noqa: E402
from tests.chat_wire import last_user_text  # noqa: E402
from tests.cli_process import cli_env, comparable_results, run_cli  # noqa: E402
from tests.mmdu_data import judge_reply, scores  # noqa: E402
from benchmarks.timing import compile_mmtasks  # noqa: E402
from tests.realbench_oracle import RealBenchOracle, stable_hash  # noqa: E402

MODEL, JUDGE = "bench-model", "bench-judge"
TASKS = "realbench,realbench_contamination,realbench_unanswerable,mmdu"


class Replies:
    def __init__(self) -> None:
        self.oracle = RealBenchOracle()

    def __call__(self, body: dict) -> str:
        text = last_user_text(body)
        if body["model"] == JUDGE:
            h = stable_hash(text)
            return judge_reply(scores(*(3 + (h >> k) % 7 for k in range(7))))
        try:
            return self.oracle(body)
        except LookupError:  # not a RealBench prompt: an MMDU turn
            return "Here is my answer: " + " ".join(text.split()[:30])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=2.0, help="seconds the server takes per chat call")
    ap.add_argument("--concurrency", type=int, default=8, help="the openai backend's concurrent requests (model and judge each)")
    ap.add_argument("--warm-runs", type=int, default=3, help="warm runs (the median is compared; the machine may be shared)")
    args = ap.parse_args()
    compile_mmtasks()  # start from bytecode, as an installed mmtasks does

    with tempfile.TemporaryDirectory(prefix="mmtasks-bench-") as tmp, \
            ChatServer(latency=args.latency, reply=Replies(), models=(MODEL, JUDGE)) as server:
        root = Path(tmp)
        conc = f"concurrency={args.concurrency}"
        argv = ["--tasks", TASKS, "--model", f"openai:{MODEL}", "--model-args", conc, "--judge", f"openai:{JUDGE}",
                "--judge-args", conc, "--data-dir", "data/sample", "--output-path", str(root / "run"),
                "--cache-dir", str(root / "cache"), "--no-progress"]
        env = cli_env(server.base_url, api_key="bench-key-not-secret")
        times, calls, results = [], [], []
        for _ in range(1 + args.warm_runs):  # cold, then warm
            before = server.calls
            start = time.perf_counter()
            run = run_cli(argv, env, root / "logs", timeout=3600)
            times.append(time.perf_counter() - start)
            if run.process.returncode != 0:
                print(run.stderr, file=sys.stderr)
                raise SystemExit(f"mmtasks exited with {run.process.returncode}")
            calls.append(server.calls - before)
            results.append(comparable_results(root / "run" / "results.json"))
            stats = json.loads((root / "run" / "results.json").read_text(encoding="utf-8"))["run_stats"]
        if any(calls[1:]) or any(r != results[0] for r in results[1:]):
            raise SystemExit(f"a warm run sent requests ({calls[1:]}) or changed the results")
        base_url = server.base_url

    cold, warms = times[0], times[1:]
    warm = statistics.median(warms)
    n_docs = sum(r["effective"] for r in results[0]["n-samples"].values())
    print(f"{n_docs} documents ({TASKS}), server latency {args.latency:g} s per call, concurrency {args.concurrency}")
    print(f"  cold run : {cold:7.2f} s  ({calls[0]} chat calls)")
    print(f"  warm run : {warm:7.2f} s  (median of {len(warms)}: {', '.join(f'{t:.2f}' for t in warms)} s;"
          f" 0 chat calls, cached: {stats['cached']})")
    print(f"  warm/cold: {100 * warm / cold:6.1f} %")
    print("command: python -m mmtasks " + " ".join(shlex.quote(a) for a in argv))
    print(f"         (OPENAI_BASE_URL={base_url})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
