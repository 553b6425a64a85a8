"""Multi-turn scheduling: 64 dialogues x 8 turns, mmtasks against one dialogue at a time,
and the barrier-free scheduler against waves and the critical path.

Synthetic MMDU data (``tests/mmdu_data.py``: 64 dialogues of 8 turns, an image
in turn 1, so every later turn carries it in its history; every question is
tagged ``[d<i>t<j>]``) is run with the ``multi_turn`` protocol,
``--predict-only`` (the model's turns, no judge). Backends:

- ``server``: the ``openai`` backend (``--concurrency``, default 64) against the
  loopback chat server of ``tests/chat_server.py`` in its own process, answering
  every call after a fixed ``--latency`` (default 0.5 s). Driven two ways:
  **mmtasks** (``python -m mmtasks --tasks mmdu_bench ...``) and **one at a time**
  (the same protocol code, one dialogue after another, one request per call: what
  lmms-eval's multi-round path and VLMEvalKit do). Goal: at least 10x.
- ``lognormal``: the same backend, the server's latency per call lognormal
  (``--median`` 0.2 s, ``--p99`` 2 s) and drawn from the call's ``[d<i>t<j>]`` tag,
  so every run sees the same latencies. mmtasks with the barrier-free scheduler
  (the default for API backends) and with waves (forced), against the
  critical-path ideal: the slowest dialogue's sum of latencies (what no
  scheduler can beat), and the wave ideal: the sum over turns of each turn's
  slowest call. Goal: barrier-free within 1.3x of the critical path.
- ``sim``: mmtasks on the simulated API backend of ``sim_api.py`` (images encoded,
  bodies built, the latency waited, no HTTP client) at the same fixed latency,
  against one at a time's floor (n x latency): the harness alone.
- ``hf``: the tiny LLaVA of ``tests/tiny_models.py`` on the CPU, ``--batch-size 16``,
  mmtasks (waves: batches) against one at a time (batch of one).

``mmdu_bench`` is the ``mmdu`` task with ``max_new_tokens: 16`` (``--new-tokens``;
written to ``benchmarks/_work/tasks/``), so that the tiny model's random weights
do not generate 2,048 tokens per turn.

Usage (from the repository root)::

    python benchmarks/multi_turn_scheduling.py [--backends server,lognormal,hf] [--dialogues 64] [--turns 8]
        [--latency 0.5] [--median 0.2] [--p99 2.0] [--concurrency 64] [--repeat 3]
        [--batch-size 16] [--new-tokens 16] [--torch-threads 1]
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

from benchmarks.timing import compile_mmtasks, one_dialogue_at_a_time, timed_cli  # noqa: E402
import mmtasks.commands.run  # noqa: E402,F401  (imported before timing: both ways start warm)
import mmtasks.models.hf  # noqa: E402,F401
import mmtasks.models.openai_api  # noqa: E402,F401
from benchmarks.loopback import ServerProcess, lognormal_latency  # noqa: E402
from benchmarks.sim_api import register as register_sim  # noqa: E402
from benchmarks.timing import median  # noqa: E402
from mmtasks.scheduling import scheduler as scheduler_module  # noqa: E402
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
            "--predict-only", "--no-cache", "--no-progress", "--data-dir", str(data), "--output-path", str(out), "--overwrite"]
    if batch_size:
        argv += ["--batch-size", str(batch_size)]
    elapsed, results = timed_cli(argv, out)
    waves = results["run_stats"]["waves"]
    return elapsed, waves, argv


@contextlib.contextmanager
def forced_waves() -> Iterator[None]:
    """The wave engine for every backend (API backends included), for comparison."""
    original = scheduler_module.Scheduler.uses_barrier_free
    scheduler_module.Scheduler.uses_barrier_free = property(lambda self: False)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        scheduler_module.Scheduler.uses_barrier_free = original  # type: ignore[method-assign]


def lognormal_rows(args: argparse.Namespace, data: Path, tasks: Path) -> list[str]:
    lat = [[lognormal_latency(d, t, args.median, args.p99) for t in range(1, args.turns + 1)] for d in range(args.dialogues)]
    critical = max(sum(row) for row in lat)
    wave_ideal = sum(max(lat[d][t] for d in range(args.dialogues)) for t in range(args.turns))
    spec = f"lognormal:{args.median}:{args.p99}"
    ways = ("barrier-free", "waves", "sim barrier-free", "sim waves")
    times: dict[str, list[float]] = {w: [] for w in ways}
    spans: dict[str, list[float]] = {w: [] for w in ways}
    argv: list[str] = []
    register_sim()
    with ServerProcess(latency=spec, models=("bench",)) as server:
        for _ in range(args.repeat):
            for way in ways:
                server.reset()
                if way.startswith("sim"):
                    model, margs = "sim:bench", f"latency={spec},concurrency={args.concurrency}"
                else:
                    model, margs = "openai:bench", f"base_url={server.base_url},concurrency={args.concurrency}"
                with forced_waves() if way.endswith("waves") else contextlib.nullcontext():
                    elapsed, _, run_argv = scheduled(data, tasks, WORK / "mt-lognormal", model, margs, None)
                if way == "barrier-free":
                    argv = run_argv
                times[way].append(elapsed)
                spans[way].append(server.stats().span if not way.startswith("sim") else elapsed)
    print(f"lognormal latency (median {args.median:g} s, p99 {args.p99:g} s), concurrency {args.concurrency}: "
          f"critical path (slowest dialogue's sum) {critical:.2f} s, wave ideal (sum of each turn's slowest) {wave_ideal:.2f} s")
    for way in ways:
        t, sp = median(times[way]), median(spans[way])
        where = "simulated API backend (no HTTP), whole run" if way.startswith("sim") else "openai backend + loopback server, first call to last reply"
        print(f"  {way:>16}: run {t:.2f} s (runs {', '.join(f'{x:.2f}' for x in times[way])}); {where} "
              f"{sp:.2f} s = {sp / critical:.2f}x the critical path")
    return argv


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
    ap.add_argument("--backends", default="server,lognormal,hf")
    ap.add_argument("--dialogues", type=int, default=64)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.5, help="server: seconds per call")
    ap.add_argument("--median", type=float, default=0.2, help="lognormal: median seconds per call")
    ap.add_argument("--p99", type=float, default=2.0, help="lognormal: 99th percentile seconds per call")
    ap.add_argument("--repeat", type=int, default=3, help="lognormal: runs of each way (medians reported)")
    ap.add_argument("--concurrency", type=int, default=64, help="server, lognormal: the openai backend's concurrent requests")
    ap.add_argument("--batch-size", type=int, default=16, help="hf: requests per forward pass")
    ap.add_argument("--new-tokens", type=int, default=16, help="max_new_tokens per turn (the tiny model always uses all)")
    ap.add_argument("--torch-threads", type=int, default=1, help="hf: torch intra-op threads (1: stable timings on a shared machine)")
    args = ap.parse_args()
    compile_mmtasks()  # start from bytecode, as an installed mmtasks does

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
        if backend == "lognormal":
            argv = lognormal_rows(args, data, tasks)
        elif backend == "sim":
            # the simulated API backend (sim_api.py: no HTTP client) at the same fixed latency; one at a
            # time is not run again: n x latency is its floor (the server row measures it)
            register_sim()
            runs = [scheduled(data, tasks, WORK / "mt-sim", "sim:bench", f"latency={args.latency},concurrency={args.concurrency}", None)
                    for _ in range(args.repeat)]
            t_sched, waves, argv = min(runs)[0], runs[0][1], runs[0][2]
            t_med = median([r[0] for r in runs])
            print(f"    sim {t_med:>10.2f} {waves:>6} {n * args.latency:>14.2f} {n:>6} {n * args.latency / t_med:>8.1f}x  "
                  f"simulated API backend, latency {args.latency:g} s, concurrency {args.concurrency}; median of {args.repeat} "
                  f"({', '.join(f'{r[0]:.2f}' for r in runs)}); one at a time = its floor n x latency; mmtasks floor "
                  f"{waves * -(-args.dialogues // args.concurrency) * args.latency:.1f} s")
        elif backend == "server":
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
