"""Harness overhead: the ``random`` model on a synthetic RealBench, 1k vs 10k samples.

For each size the script writes (once) a synthetic RealBench of N samples x 7
images under ``benchmarks/_work/`` (see ``synthetic_realbench.py``), then runs
the whole ``realbench`` group (8 subtasks) through ``mmtasks.runner.evaluate``
in a fresh Python process - data scan, documents, prompts, the scheduler,
parsing, scoring, samples files, aggregation with bootstrap stderr and
results.json, exactly what ``mmtasks --tasks realbench --model random`` does.
That process reports:

- peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``), and the RSS after
  the imports, before the run (the interpreter and libraries);
- the run's wall time, the time spent inside the model's ``generate`` (the
  random draws), and samples per second excluding that model time.

Usage (from the repository root)::

    python benchmarks/harness_overhead.py [--sizes 1000,10000,20000] [--images 7] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "benchmarks" / "_work"


def worker(data: Path, out: Path) -> None:
    """Runs in the child process: one evaluation, figures as JSON on stdout."""
    import resource

    sys.path.insert(0, str(REPO))
    from mmtasks.config.run_config import RunConfig
    from mmtasks.models.random_model import RandomModel
    from mmtasks.runner import evaluate

    model_time = 0.0
    original = RandomModel.generate

    def timed(self, requests):  # type: ignore[no-untyped-def]
        nonlocal model_time
        start = time.perf_counter()
        replies = list(original(self, requests))
        model_time += time.perf_counter() - start
        return replies

    RandomModel.generate = timed  # type: ignore[method-assign]
    rss_imports = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = RunConfig(tasks=["realbench"], model="random", data_dir=data, output_path=out, overwrite=True,
                    cache_dir=out / "cache", progress=False)
    start, cpu = time.perf_counter(), time.process_time()
    outcome = evaluate(run)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    n = sum(v["effective"] for v in outcome.results["n-samples"].values())
    print(json.dumps({"samples": n, "wall_s": wall, "cpu_s": cpu, "model_s": model_time,
                      "rss_imports_mb": rss_imports / 1024, "peak_rss_mb": peak / 1024,
                      "waves": outcome.results["run_stats"]["waves"]}))


def measure(n_samples: int, n_images: int) -> dict:
    sys.path.insert(0, str(REPO))
    from benchmarks.synthetic_realbench import write_realbench

    root = WORK / f"realbench-{n_samples}x{n_images}"
    start = time.perf_counter()
    write_realbench(root, n_samples, n_images)
    gen = time.perf_counter() - start
    out = WORK / f"run-{n_samples}x{n_images}"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--worker", str(root), str(out)],
                          capture_output=True, text=True, check=False, cwd=REPO)
    total = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"worker failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    figures.update(process_s=total, datagen_s=gen, n_images=n_images)
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,20000", help="comma-separated sample counts")
    ap.add_argument("--images", type=int, default=7, help="images per sample")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size; the fastest is shown (peak RSS: the highest)")
    ap.add_argument("--worker", nargs=2, metavar=("DATA", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(Path(args.worker[0]), Path(args.worker[1]))
        return 0

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("command: python benchmarks/harness_overhead.py " + " ".join(sys.argv[1:]))
    print("run: mmtasks --tasks realbench --model random (evaluate() in a fresh process per size, samples + results.json written)")
    header = f"{'samples':>8} {'images':>7} {'run s':>7} {'CPU s':>6} {'model s':>8} {'samples/s':>10} {'process s':>10} {'RSS imports':>12} {'peak RSS':>9}"
    print(header)
    for n in (int(s) for s in args.sizes.split(",")):
        runs = [measure(n, args.images) for _ in range(args.repeat)]
        f = min(runs, key=lambda r: r["wall_s"] - r["model_s"])  # the least disturbed run on a shared machine
        f["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
        rate = f["samples"] / max(1e-9, f["wall_s"] - f["model_s"])
        print(f"{f['samples']:>8} {f['samples'] * args.images:>7} {f['wall_s']:>7.2f} {f['cpu_s']:>6.2f} {f['model_s']:>8.2f} {rate:>10.0f} "
              f"{f['process_s']:>10.2f} {f['rss_imports_mb']:>9.0f} MB {f['peak_rss_mb']:>6.0f} MB", flush=True)
    print("samples/s = samples / (run s - model s); process s includes interpreter start-up and imports;"
          f" data generation not timed; best of {args.repeat} run(s) per size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
