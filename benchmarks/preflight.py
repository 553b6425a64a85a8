"""The preflight on 10,000 documents x 4 images: ``mmtasks check`` on the whole ``realbench``
group (8 tasks) of a synthetic RealBench (``synthetic_realbench.py``: one JPEG file per image,
40,000 files), goal under 5 s.

Measured, each ``--repeat`` times (median reported): :func:`mmtasks.preflight.preflight` in this
process, imports done, on a warm page cache (every file read once before timing, as a run
reads data it just downloaded): loading the 8 tasks, reading every record, checking its schema,
every image's header and pixel count, rendering every template, checking every target against
its answer space and running every dialogue with the stand-in. Also the same as a command
(``python -m mmtasks check``, interpreter start and imports included).

Usage (from the repository root)::

    python benchmarks/preflight.py [--docs 10000] [--images 4] [--repeat 3] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.synthetic_realbench import write_realbench  # noqa: E402
from mmtasks.preflight import default_workers, preflight  # noqa: E402

WORK = REPO / "benchmarks" / "_work" / "preflight"


def warm(root: Path) -> int:
    """Read every file once (the page cache then holds them, as after a download)."""
    n = 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                fh.read()
            n += 1
    return n


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the forked checkers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--images", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU; 1: in this process)")
    args = ap.parse_args()
    root = write_realbench(WORK / f"{args.docs}x{args.images}", args.docs, n_images=args.images)
    files = warm(root)
    print(f"data: {args.docs} documents x {args.images} images ({files} files) under {root}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    default = default_workers()
    print(f"default: {default} process{'es' if default > 1 else ''} on {os.cpu_count()} CPUs")
    for workers in ([args.workers] if args.workers else [1, 2]):
        times, cpu = [], []
        for _ in range(args.repeat):
            started, started_cpu = time.perf_counter(), _cpu()
            checked = preflight(["realbench"], data_dir=root, workers=workers)
            times.append(time.perf_counter() - started)
            cpu.append(_cpu() - started_cpu)
            assert checked.documents == args.docs, checked.documents
        order = sorted(range(len(times)), key=times.__getitem__)
        mid = order[len(order) // 2]
        label = "one process" if workers == 1 else f"{workers} processes"
        print(f"preflight, {label}: median {times[mid]:.2f} s wall, {cpu[mid]:.2f} s CPU (all processes) "
              f"(runs: {', '.join(f'{t:.2f}' for t in sorted(times))}) = {1e6 * times[mid] / args.docs:.0f} us per document; "
              f"load average now {os.getloadavg()[0]:.2f}")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "mmtasks", "check", "--tasks", "realbench", "--data-dir", str(root)],
                         cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    print(f"as a command: {time.perf_counter() - started:.2f} s, exit {out.returncode}: {out.stdout.strip() or out.stderr.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
