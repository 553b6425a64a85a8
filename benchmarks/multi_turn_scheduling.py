"""Multi-turn scheduling: mmtasks' waves vs one dialogue at a time, 64 dialogues x 8 turns.

Synthetic MMDU data (``tests/mmdu_data.py``: 64 dialogues of 8 turns, an image
in turn 1, so every later turn carries it in its history) is run with the
``multi_turn`` protocol, ``--predict-only`` (the model's turns, no judge),
against two backends:

- ``server``: the ``openai`` backend (``concurrency=32``) and the loopback
  chat server of ``tests/chat_server.py`` in its own process, answering every
  call after a fixed latency;
- ``hf``: the tiny LLaVA of ``tests/tiny_models.py`` on the CPU, ``--batch-size 16``.

Each backend is driven two ways, by the same protocol code and the same
backend object settings:

- **mmtasks**: ``python -m mmtasks --tasks mmdu_bench --model ... --predict-only``:
  the scheduler sends turn k of all live dialogues as one wave (the backend
  batches / overlaps them);
- **one at a time**: one dialogue after the other, one request at a time
  (batch of one), as lmms-eval's multi-round path and VLMEvalKit do.

``mmdu_bench`` is the ``mmdu`` task with ``max_new_tokens: 16`` (``--new-tokens``; written to
``benchmarks/_work/tasks/`` by this script), so that the tiny model's random
weights do not generate 2,048 tokens per turn.

Usage (from the repository root)::

    python benchmarks/multi_turn_scheduling.py [--backends server,hf] [--dialogues 64] [--turns 8]
        [--latency 0.1] [--concurrency 32] [--batch-size 16] [--new-tokens 16] [--torch-threads 1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import sys
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.timing import one_dialogue_at_a_time, timed_cli  # noqa: E402
import mmtasks.commands.run  # noqa: E402,F401  (imported before timing: both ways start warm)
import mmtasks.models.hf  # noqa: E402,F401
import mmtasks.models.openai_api  # noqa: E402,F401
from benchmarks.loopback import ServerProcess  # noqa: E402
from mmtasks.config.task_registry import TaskRegistry  # noqa: E402
from mmtasks.models.base import ModelContext, load_model, parse_model_spec  # noqa: E402
from mmtasks.task import Task  # noqa: E402
from tests.mmdu_data import write_mmdu  # noqa: E402

WORK = REPO / "benchmarks" / "_work"
TASK = "mmdu_bench"


def write_task(new_tokens: int) -> Path:
    folder = WORK / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    mmdu = REPO / "tasks" / "mmdu"
    (folder / f"{TASK}.yaml").write_text(
        f"task: {TASK}\ninclude: {mmdu / 'mmdu.yaml'}\ngroup: []\n"
        f"generation: {{max_new_tokens: {new_tokens}, temperature: 0.0, do_sample: false}}\n"
        f"judge: {{prompt_file: {mmdu / 'judge_prompt.txt'}}}\n", encoding="utf-8")
    return folder


def scheduled(data: Path, tasks: Path, out: Path, model: str, model_args: str, batch_size: int | None) -> tuple[float, int, list[str]]:
    argv = ["--tasks", TASK, "--include-path", str(tasks), "--model", model, "--model-args", model_args,
            "--predict-only", "--no-cache", "--no-progress", "--data-dir", str(data), "--output-path", str(out)]
    if batch_size:
        argv += ["--batch-size", str(batch_size)]
    elapsed, results = timed_cli(argv, out)
    waves = results["run_stats"]["waves"]
    return elapsed, waves, argv


def one_at_a_time(data: Path, tasks: Path, model_spec: str, model_args: dict) -> tuple[float, int]:
    """The same protocol and backend, one dialogue after another, one request per call."""
    config, path = TaskRegistry.discover([tasks]).load(TASK)
    task = Task(config, path)
    start = time.perf_counter()
    model = load_model(parse_model_spec(model_spec, model_args), ModelContext(batch_size=1))
    try:
        calls, failed = one_dialogue_at_a_time(task, data, model)
        if failed:
            raise SystemExit(f"a request failed: {failed[0].error}")
    finally:
        model.close()
    return time.perf_counter() - start, calls


@contextlib.contextmanager
def timed_generation() -> Iterator[list[float]]:
    """Seconds spent in the hf backend's batched ``generate`` (model time, as opposed to harness time)."""
    from mmtasks.models.hf import HFModel

    total = [0.0]
    original = HFModel._generate_batch

    def wrapper(self, *a, **k):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original(self, *a, **k)
        finally:
            total[0] += time.perf_counter() - start

    HFModel._generate_batch = wrapper  # type: ignore[method-assign]
    try:
        yield total
    finally:
        HFModel._generate_batch = original  # type: ignore[method-assign]


def row(name: str, t_sched: float, waves: int, t_seq: float, calls: int, note: str) -> None:
    print(f"{name:>7} {t_sched:>10.2f} {waves:>6} {t_seq:>14.2f} {calls:>6} {t_seq / t_sched:>8.1f}x  {note}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", default="server,hf")
    ap.add_argument("--dialogues", type=int, default=64)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.1, help="server: seconds per call")
    ap.add_argument("--concurrency", type=int, default=32, help="server: the openai backend's concurrent requests")
    ap.add_argument("--batch-size", type=int, default=16, help="hf: requests per forward pass")
    ap.add_argument("--new-tokens", type=int, default=16, help="max_new_tokens per turn (the tiny model always uses all)")
    ap.add_argument("--torch-threads", type=int, default=1, help="hf: torch intra-op threads (1: stable timings on a shared machine)")
    args = ap.parse_args()

    data = WORK / f"mmdu-{args.dialogues}x{args.turns}"
    write_mmdu(data, [[1] + [0] * (args.turns - 1)] * args.dialogues)
    tasks = write_task(args.new_tokens)
    n = args.dialogues * args.turns
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    print("command: python benchmarks/multi_turn_scheduling.py " + " ".join(sys.argv[1:]))
    print(f"{args.dialogues} dialogues x {args.turns} turns = {n} model calls per way (predict-only)")
    print(f"{'backend':>7} {'mmtasks s':>10} {'waves':>6} {'one at a time s':>14} {'calls':>6} {'speed-up':>9}")
    commands = []
    for backend in args.backends.split(","):
        if backend == "server":
            with ServerProcess(latency=args.latency, models=("bench",)) as server:
                margs = {"base_url": server.base_url, "concurrency": args.concurrency}
                t_sched, waves, argv = scheduled(data, tasks, WORK / "mt-server", "openai:bench",
                                                 f"base_url={server.base_url},concurrency={args.concurrency}", None)
                max_in_flight = server.stats().max_in_flight
                server.reset()
                t_seq, calls = one_at_a_time(data, tasks, "openai:bench", margs)
            row("server", t_sched, waves, t_seq, calls,
                f"latency {args.latency:g} s, concurrency {args.concurrency} (at most {max_in_flight} in flight); "
                f"floors {waves * -(-args.dialogues // args.concurrency) * args.latency:.1f} s / {n * args.latency:.1f} s")
        elif backend == "hf":
            from tests.tiny_models import build_tiny_llava

            import torch

            torch.set_num_threads(args.torch_threads)
            tiny = WORK / "tiny-llava"
            if not (tiny / "config.json").is_file():
                build_tiny_llava(tiny)
            # warm-up, not timed: transformers' lazy imports and the first load
            load_model(parse_model_spec(f"hf:{tiny}", {}), ModelContext()).close()
            with timed_generation() as in_model:
                t_sched, waves, argv = scheduled(data, tasks, WORK / "mt-hf", f"hf:{tiny}", "", args.batch_size)
                model_sched = in_model[0]
                t_seq, calls = one_at_a_time(data, tasks, f"hf:{tiny}", {})
                model_seq = in_model[0] - model_sched
            row("hf", t_sched, waves, t_seq, calls,
                f"tiny LLaVA on CPU ({args.torch_threads} torch thread), batch {args.batch_size} vs 1, {args.new_tokens} new tokens per turn; "
                f"in model.generate: {model_sched:.2f} s vs {model_seq:.2f} s")
        else:
            raise SystemExit(f"unknown backend {backend!r}")
        commands.append("python -m mmtasks " + " ".join(a if " " not in a else repr(a) for a in argv))
    print("mmtasks commands:")
    for c in commands:
        print("  " + c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
