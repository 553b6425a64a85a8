"""Multi-turn scheduling: mmtasks' wave scheduler vs one dialogue at a time.

Runs the ``mmdu`` task (``--predict-only``: the model's turns, no judge) on
synthetic dialogues against the loopback OpenAI-compatible server of
``tests/chat_server.py`` with a fixed latency per call, twice with the same
``openai`` backend:

- mmtasks: ``python -m mmtasks --tasks mmdu --model openai:bench --predict-only ...``
  (the scheduler sends turn k of every dialogue as one wave);
- sequential: the same ``multi_turn`` protocol driven one dialogue at a time,
  one request at a time (what a plain loop over the benchmark does).

Usage (from the repository root)::

    python benchmarks/multi_turn_waves.py [--dialogues 32] [--turns 6] [--latency 0.1] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.timing import one_dialogue_at_a_time, timed_cli  # noqa: E402
import mmtasks.commands.run  # noqa: E402,F401  (imported before timing: both variants start warm)
import mmtasks.models.openai_api  # noqa: E402,F401
from mmtasks.config.task_registry import TaskRegistry  # noqa: E402
from mmtasks.models.base import load_model, parse_model_spec  # noqa: E402
from mmtasks.task import Task  # noqa: E402
from tests.chat_server import ChatServer  # noqa: E402
from tests.mmdu_data import write_mmdu  # noqa: E402

MODEL = "bench"


def scheduled(data: Path, out: Path, concurrency: int) -> tuple[float, int, list[str]]:
    argv = ["--tasks", "mmdu", "--model", f"openai:{MODEL}", "--model-args", f"concurrency={concurrency}",
            "--predict-only", "--no-cache", "--no-progress", "--data-dir", str(data), "--output-path", str(out)]
    elapsed, results = timed_cli(argv, out)
    waves = results["run_stats"]["waves"]
    return elapsed, waves, argv


def sequential(data: Path, concurrency: int) -> tuple[float, int]:
    config, path = TaskRegistry.discover().load("mmdu")
    task = Task(config, path)
    model = load_model(parse_model_spec(f"openai:{MODEL}", {"concurrency": concurrency}))
    start = time.perf_counter()
    try:
        calls, _ = one_dialogue_at_a_time(task, data, model)
    finally:
        model.close()
    return time.perf_counter() - start, calls


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dialogues", type=int, default=32)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--latency", type=float, default=0.1, help="seconds the server takes per call")
    ap.add_argument("--concurrency", type=int, default=32, help="the openai backend's concurrent requests")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="mmtasks-bench-") as tmp, ChatServer(latency=args.latency, models=(MODEL,)) as server:
        root = Path(tmp)
        # one image in the first turn, then text turns: the history grows as in MMDU
        write_mmdu(root, [[1] + [0] * (args.turns - 1)] * args.dialogues)
        os.environ["OPENAI_BASE_URL"] = server.base_url
        os.environ.setdefault("OPENAI_API_KEY", "bench-key-not-secret")
        base_url = server.base_url
        t_sched, waves, argv = scheduled(root, root / "run", args.concurrency)
        sched_calls, max_in_flight = server.calls, server.max_in_flight
        chat = [c for c in server.log if c.path.endswith("/chat/completions") and c.finished is not None]
        span = max(c.finished for c in chat) - min(c.started for c in chat)
        server.reset()
        t_seq, seq_calls = sequential(root, args.concurrency)

    n = args.dialogues * args.turns
    print(f"{args.dialogues} dialogues x {args.turns} turns = {n} model calls, server latency {args.latency:g} s, concurrency {args.concurrency}")
    print(f"  mmtasks scheduler : {t_sched:7.2f} s  ({waves} waves, {sched_calls} calls, at most {max_in_flight} in flight;"
          f" first call to last reply {span:.2f} s, floor {args.turns * args.latency:.1f} s)")
    print(f"  one at a time     : {t_seq:7.2f} s  ({seq_calls} calls; floor {n * args.latency:.1f} s)")
    print(f"  speed-up          : {t_seq / t_sched:7.1f}x")
    print("command: python -m mmtasks " + " ".join(a if " " not in a else repr(a) for a in argv))
    print(f"         (OPENAI_BASE_URL={base_url}, data from tests/mmdu_data.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
