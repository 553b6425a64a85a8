"""mmtasks against Inspect AI on the same work, against one loopback server, in one run.

Two shapes of work, both against the loopback chat server of
``tests/chat_server.py`` in its own process (50 ms per call, every reply ``A``),
32 concurrent requests in both harnesses:

- **W1**: 500 documents x 4 distinct 256x256 PNGs, multiple choice (RealBench
  ``ranking_easy`` records from ``synthetic_realbench.py``). mmtasks:
  ``--tasks realbench_ranking_easy``; Inspect: a ``Task`` of the same records
  (the text, the 4 images as ``ContentImage`` files, the 4 options) with its
  ``multiple_choice()`` solver and ``choice()`` scorer.
- **W2**: 32 dialogues x 6 turns, the model's own replies as history (MMDU-shaped
  data from ``tests/mmdu_data.py``, an image in turn 1). mmtasks: ``--tasks mmdu
  --predict-only``; Inspect: a solver that appends each user turn and calls
  ``generate`` (no scorer).

Each harness runs as a fresh process (interpreter start, imports, writing its
results and samples / logs included), interleaved, ``--repeat`` times; printed:
median wall time, median peak RSS (``wait4``), and Inspect / mmtasks ratios.
Goal: mmtasks at least 5x faster than Inspect on both, at no more memory.

Inspect AI is not a dependency of mmtasks: ``--install-peers`` makes a venv under
``benchmarks/_work/peers-venv`` (git-ignored) with ``inspect-ai==0.3.285`` (the
version of the comparison in issue 15) and ``openai``; without it the script
runs mmtasks alone if that venv is missing.

Usage (from the repository root)::

    python benchmarks/peers.py [--install-peers] [--repeat 3] [--work W1,W2] [--latency 0.05] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.loopback import ServerProcess  # noqa: E402
from benchmarks.synthetic_realbench import write_realbench  # noqa: E402
from benchmarks.timing import compile_mmtasks, median, run_process  # noqa: E402
from tests.mmdu_data import write_mmdu  # noqa: E402

WORK = REPO / "benchmarks" / "_work"
VENV = WORK / "peers-venv"
INSPECT_VERSION = "0.3.285"

INSPECT_TASKS = '''
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import choice
from inspect_ai.solver import generate, multiple_choice, solver

W1 = Path({w1!r})
W2 = Path({w2!r})


@task
def w1():
    samples = []
    folder = W1 / "realbench"
    for line in (folder / "ranking_easy.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        content = [ContentText(text=rec["text"])] + [ContentImage(image=str(folder / rel)) for rel in rec["images"]]
        choices = [", ".join(str(i) for i in order) for order in rec["options"].values()]
        samples.append(Sample(id=rec["id"], input=[ChatMessageUser(content=content)], choices=choices, target=rec["answer"]))
    return Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())


@solver
def own_history():
    async def solve(state, generate):
        for k, question in enumerate(state.metadata["turns"]):
            if k:
                state.messages.append(ChatMessageUser(content=question))
            state = await generate(state)
        return state
    return solve


@task
def w2():
    folder = W2 / "mmdu"
    samples = []
    for rec in json.loads((folder / "benchmark.json").read_text(encoding="utf-8")):
        turns = [c["value"] for c in rec["conversations"] if c["from"] == "user"]
        image = folder / "images" / Path(rec["image"][0]).name
        first = [ContentImage(image=str(image)), ContentText(text=turns[0].replace("<ImageHere>", ""))]
        samples.append(Sample(id=rec["id"], input=[ChatMessageUser(content=first)], metadata={{"turns": turns}}))
    return Task(dataset=MemoryDataset(samples), solver=own_history())
'''


def install_peers() -> None:
    if not (VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", f"inspect-ai=={INSPECT_VERSION}", "openai"], check=True)


def inspect_available() -> bool:
    python = VENV / "bin" / "python"
    return python.exists() and subprocess.run([str(python), "-c", "import inspect_ai"], capture_output=True).returncode == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--install-peers", action="store_true", help=f"install inspect-ai=={INSPECT_VERSION} into {VENV.relative_to(REPO)}")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default="W1,W2")
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=32)
    args = ap.parse_args()
    compile_mmtasks()  # start from bytecode, as an installed mmtasks does
    if args.install_peers:
        install_peers()
    with_inspect = inspect_available()
    if not with_inspect:
        print(f"Inspect AI is not installed in {VENV}: run with --install-peers to compare; mmtasks alone follows")

    w1 = write_realbench(WORK / "w1-500x4-256", 500, 4, subtasks=("ranking_easy",), png_side=256)
    w2 = WORK / "w2-32x6"
    if not (w2 / "mmdu" / "benchmark.json").exists():
        write_mmdu(w2, [[1] + [0] * 5] * 32)
    tasks_file = WORK / "inspect_tasks.py"
    tasks_file.write_text(textwrap.dedent(INSPECT_TASKS.format(w1=str(w1), w2=str(w2))), encoding="utf-8")

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("command: python benchmarks/peers.py " + " ".join(sys.argv[1:]))
    print(f"server latency {args.latency:g} s, {args.concurrency} concurrent requests; medians of {args.repeat} fresh processes each")
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENAI_API_KEY="bench-not-a-secret")
    figures: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    with ServerProcess(latency=args.latency, reply="choice", models=("bench",)) as server:
        url = server.base_url
        commands = {
            ("W1", "mmtasks"): [sys.executable, "-m", "mmtasks", "--tasks", "realbench_ranking_easy", "--model", "openai:bench",
                                "--model-args", f"base_url={url},concurrency={args.concurrency}", "--data-dir", str(w1),
                                "--output-path", str(WORK / "peers-mmtasks-w1"), "--no-cache", "--no-progress", "--overwrite"],
            ("W2", "mmtasks"): [sys.executable, "-m", "mmtasks", "--tasks", "mmdu", "--predict-only", "--model", "openai:bench",
                                "--model-args", f"base_url={url},concurrency={args.concurrency}", "--data-dir", str(w2),
                                "--output-path", str(WORK / "peers-mmtasks-w2"), "--no-cache", "--no-progress", "--overwrite"],
        }
        if with_inspect:
            for work in ("W1", "W2"):
                commands[(work, "inspect")] = [
                    str(VENV / "bin" / "inspect"), "eval", f"{tasks_file}@{work.lower()}", "--model", "openai/bench",
                    "--model-base-url", url, "-M", "responses_api=false", "--max-connections", str(args.concurrency), "--display", "none",
                    "--log-dir", str(WORK / "peers-inspect-logs"), "--no-fail-on-error"]
        works = args.work.split(",")
        for _ in range(args.repeat):
            for (work, harness), argv in commands.items():
                if work not in works:
                    continue
                server.reset()
                wall, rss, _, _ = run_process(argv, env)
                calls = server.stats().calls
                expected = {"W1": 500, "W2": 32 * 6}[work]
                if calls < expected:
                    raise SystemExit(f"{work} {harness} made {calls} chat calls, not {expected}: {' '.join(argv)}")
                walls, peaks = figures.setdefault((work, harness), ([], []))
                walls.append(wall)
                peaks.append(rss)
                print(f"  {work} {harness:>8}: {wall:6.2f} s, peak RSS {rss:5.0f} MB, {calls} calls", flush=True)
    print(f"{'work':>4} {'harness':>8} {'wall s':>8} {'peak RSS MB':>12}")
    for (work, harness), (walls, peaks) in figures.items():
        print(f"{work:>4} {harness:>8} {median(walls):8.2f} {median(peaks):12.0f}")
    for work in works:
        if (work, "inspect") in figures and (work, "mmtasks") in figures:
            (mw, mr), (iw, ir) = figures[(work, "mmtasks")], figures[(work, "inspect")]
            print(f"{work}: Inspect / mmtasks time {median(iw) / median(mw):.2f}x, memory {median(ir) / median(mr):.2f}x")
    print(json.dumps({f"{w}/{h}": {"wall_s": round(median(a), 3), "peak_rss_mb": round(median(b), 1)} for (w, h), (a, b) in figures.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
